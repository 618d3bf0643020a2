package askuser

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Registry holds the pending questions of every session, keyed by session and requestId.
// A [Dispatcher] owns one; use a Registry directly only to build another dispatcher.
//
// Each pending question ends exactly once. Whoever ends it (an answer, a decline, its
// waiter's timeout or context, a session cancel, Close) removes it under the lock and
// then wakes its waiters; every later attempt gets [ErrNotPending]. All methods may be
// called concurrently.
type Registry struct {
	mu        sync.Mutex
	pending   map[key]*Entry
	sessions  map[SessionID]*sessionList
	closed    bool
	maxCustom int
	// onEnd, when set, is called once per ended question, outside the lock, by the
	// goroutine that ended it.
	onEnd func(*Entry, Resolution)
}

// errIDTaken refuses a question whose id is taken by a different pending question.
var errIDTaken = errors.New("askuser: request id taken by a different pending question")

// key is a struct, not a joined string: session ids may contain any character.
type key struct {
	session SessionID
	id      string
}

// sessionList is an intrusive list of a session's entries, oldest first: cancelling a
// session costs what that session holds, and its questions list in the order asked.
type sessionList struct {
	first, last *Entry
	n           int
}

// Entry is one pending question set.
type Entry struct {
	key       key
	req       *Request
	asked     time.Time
	expiresAt time.Time
	done      chan struct{} // closed when the entry has ended and onEnd has run
	res       Resolution
	ended     bool
	waiters   int
	// prev and next link the entries of one session.
	prev, next *Entry

	// announce orders the ask and resolved events of the entry; see Dispatcher.ended.
	announce         sync.Mutex
	askSent          bool
	resolvedDeferred bool
}

// Session returns the session the question belongs to.
func (e *Entry) Session() SessionID { return e.key.session }

// RequestID returns the question's request id.
func (e *Entry) RequestID() string { return e.key.id }

// Request returns what was asked. The caller must not modify it.
func (e *Entry) Request() *Request { return e.req }

// Done returns a channel closed when the question has ended.
func (e *Entry) Done() <-chan struct{} { return e.done }

// AskData returns the data of the ask event for this question; ExpiresAt is in UTC.
func (e *Entry) AskData() AskData {
	var exp time.Time
	if !e.expiresAt.IsZero() {
		exp = e.expiresAt.UTC()
	}
	return AskData{RequestID: e.key.id, Questions: e.req.Questions, Metadata: e.req.Metadata, ExpiresAt: exp}
}

// Resolution is how a pending question ended.
type Resolution struct {
	Outcome Outcome
	// Answers are the validated answers when Outcome is [Answered].
	Answers []Answer
	// Err is nil when Outcome is [Answered]; otherwise it wraps the sentinel error of the
	// outcome ([ErrTimeout], [ErrCancelled], ...), and possibly its cause.
	Err error
}

// NewRegistry returns an empty registry. maxCustomInput bounds the free text of an answer
// in characters; 0 means [DefaultMaxCustomInput].
func NewRegistry(maxCustomInput int) *Registry {
	return &Registry{
		pending:   make(map[key]*Entry),
		sessions:  make(map[SessionID]*sessionList),
		maxCustom: maxCustomInput,
	}
}

// Register adds a pending question. expiresAt is when waiters stop waiting (zero: never).
// When a question with the same session and id is already pending, Register returns it
// with created false and leaves it as it is: the caller should wait on it, not ask again.
// When that question asks something else than req, Register returns errIDTaken and
// changes nothing. After [Registry.Close], Register returns [ErrClosed].
//
// Register counts its caller as a waiter of the entry, who must then call [Registry.Wait]
// once: a question ends as [Cancelled] when the contexts of all its waiters have ended,
// and not before, even while a waiter is still on its way to Wait.
func (r *Registry) Register(session SessionID, requestID string, req *Request, expiresAt time.Time) (e *Entry, created bool, err error) {
	k := key{session, requestID}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, false, ErrClosed
	}
	if old, ok := r.pending[k]; ok {
		if !old.req.equal(req) {
			return nil, false, errIDTaken
		}
		old.waiters++
		return old, false, nil
	}
	e = &Entry{key: k, req: req, asked: time.Now(), expiresAt: expiresAt, done: make(chan struct{}), waiters: 1}
	r.pending[k] = e
	l := r.sessions[session]
	if l == nil {
		l = &sessionList{}
		r.sessions[session] = l
	}
	if l.last == nil {
		l.first = e
	} else {
		l.last.next, e.prev = e, l.last
	}
	l.last = e
	l.n++
	return e, true, nil
}

// Wait blocks until e ends or its expiry passes, and returns how it ended. When ctx ends
// first, the caller stops waiting; if it was the last waiter, the question ends as
// [Cancelled] so that nothing is left pending with nobody to read the answer. Wait returns
// only once the end has been fully processed (the end callback has run).
func (r *Registry) Wait(ctx context.Context, e *Entry) Resolution {
	var expired <-chan time.Time
	if !e.expiresAt.IsZero() {
		t := time.NewTimer(time.Until(e.expiresAt))
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-e.done:
		return e.res
	case <-expired:
		r.end(e, Resolution{Outcome: TimedOut, Err: ErrTimeout})
		<-e.done // ended by us or, a moment earlier, by someone else: first wins
		return e.res
	case <-ctx.Done():
		return r.leave(e, ctx)
	}
}

// leave removes one waiter whose context ended.
func (r *Registry) leave(e *Entry, ctx context.Context) Resolution {
	mine := Resolution{Outcome: Cancelled, Err: errors.Join(ErrCancelled, context.Cause(ctx))}
	r.mu.Lock()
	if e.ended { // the answer won the race: it is the result
		r.mu.Unlock()
		<-e.done
		return e.res
	}
	e.waiters--
	if e.waiters > 0 {
		r.mu.Unlock()
		return mine // the others still wait: the question stays open for them
	}
	r.endLocked(e, mine)
	r.mu.Unlock()
	r.finish(e)
	return e.res
}

// Answer validates answers against the pending question and, when valid, ends it as
// [Answered]. It returns [ErrNotPending] when no such question is pending and an
// [*AnswerError] when the answers are refused; the question then stays pending.
func (r *Registry) Answer(session SessionID, requestID string, answers []Answer) error {
	e := r.lookup(session, requestID)
	if e == nil {
		return ErrNotPending
	}
	// e.req is immutable: validate outside the lock.
	canonical, problems := CheckAnswers(e.req, answers, r.maxCustom)
	if problems != nil {
		return &AnswerError{RequestID: requestID, Problems: problems}
	}
	if !r.end(e, Resolution{Outcome: Answered, Answers: canonical}) {
		return ErrNotPending
	}
	return nil
}

// Decline ends the pending question as [Declined], or returns [ErrNotPending].
func (r *Registry) Decline(session SessionID, requestID string) error {
	e := r.lookup(session, requestID)
	if e == nil || !r.end(e, Resolution{Outcome: Declined, Err: ErrDeclined}) {
		return ErrNotPending
	}
	return nil
}

// End ends e with res unless it has already ended, and reports whether it did.
func (r *Registry) End(e *Entry, res Resolution) bool { return r.end(e, res) }

// CancelSession ends every pending question of the session with res (typically
// [Cancelled] with [ErrCancelled]) and returns how many it ended. Other sessions are not
// touched; the cost is proportional to what this session holds.
func (r *Registry) CancelSession(session SessionID, res Resolution) int {
	r.mu.Lock()
	l := r.sessions[session]
	if l == nil {
		r.mu.Unlock()
		return 0
	}
	ended := make([]*Entry, 0, l.n)
	for e := l.first; e != nil; {
		next := e.next
		r.endLocked(e, res)
		ended = append(ended, e)
		e = next
	}
	r.mu.Unlock()
	for _, e := range ended {
		r.finish(e)
	}
	return len(ended)
}

// Pending returns the data of the session's pending questions, oldest first. Each is a
// copy: changing it changes nothing pending.
func (r *Registry) Pending(session SessionID) []AskData {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.sessions[session]
	if l == nil {
		return nil
	}
	out := make([]AskData, 0, l.n)
	for e := l.first; e != nil; e = e.next {
		out = append(out, e.AskData().clone())
	}
	return out
}

// Waiting reports whether the session has a pending question.
func (r *Registry) Waiting(session SessionID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[session] != nil
}

// Len returns the number of pending questions in all sessions.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// Close ends every pending question as [Shutdown] and makes later Register calls fail
// with [ErrClosed]. Close may be called more than once.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	ended := make([]*Entry, 0, len(r.pending))
	for _, e := range r.pending {
		ended = append(ended, e)
	}
	for _, e := range ended {
		r.endLocked(e, Resolution{Outcome: Shutdown, Err: ErrClosed})
	}
	r.mu.Unlock()
	for _, e := range ended {
		r.finish(e)
	}
}

func (r *Registry) lookup(session SessionID, requestID string) *Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending[key{session, requestID}]
}

// end settles e once: the first caller wins and reports true.
func (r *Registry) end(e *Entry, res Resolution) bool {
	r.mu.Lock()
	if e.ended {
		r.mu.Unlock()
		return false
	}
	r.endLocked(e, res)
	r.mu.Unlock()
	r.finish(e)
	return true
}

// endLocked removes e from both indexes and records res. The caller must then call
// finish, outside the lock.
func (r *Registry) endLocked(e *Entry, res Resolution) {
	e.ended = true
	e.res = res
	delete(r.pending, e.key)
	l := r.sessions[e.key.session]
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.first = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.last = e.prev
	}
	e.prev, e.next = nil, nil
	if l.n--; l.n == 0 {
		delete(r.sessions, e.key.session)
	}
}

// finish runs the end callback, then wakes the waiters: by the time a call returns, the
// devices have been told and the host's hook has run.
func (r *Registry) finish(e *Entry) {
	if r.onEnd != nil {
		r.onEnd(e, e.res)
	}
	close(e.done)
}
