package askuser

import (
	"context"
	"slices"
	"sync"
	"time"
)

// The registry of the design card: what is pending, keyed by session and request id, and
// who waits for it. It has two parts, each under its own lock:
//
//   - registry, the default [Store]: the pending question sets of a dispatcher that has no
//     shared store, in memory;
//   - calls, every dispatcher's table of the callers waiting for their question to end,
//     whatever the store.
//
// A shared store (the cluster module's, say) replaces the first part; the second is
// always the dispatcher's own.

// registry is the default [Store], and a [GrantStore]: the pending requests of one
// dispatcher, in memory, and the grants of its sessions. An ended request is forgotten
// at once, so a request id can be used again as soon as its request has ended; grants
// are kept until revoked.
type registry struct {
	mu       sync.Mutex
	closed   bool // Put fails with ErrClosed
	rev      uint64
	pending  map[key]*entry
	sessions map[SessionID]entryList // by value: a session's first question allocates nothing more
	grants   map[SessionID][]Grant   // oldest first
	// recent holds the requests ended lately, until they would have expired, for
	// Lookup (a link's page says how its request ended): at most maxRecent, the oldest
	// dropped first. Each keeps the entry it had while pending. ring holds their keys in
	// the order they ended, oldest at head once it is full.
	recent map[key]*entry
	ring   []recentKey
	head   int
}

// recentKey names one ended request in the order they ended; a key asked again is in
// the ring once per request.
type recentKey struct {
	k   key
	rev uint64
}

// maxRecent bounds the ended requests the registry keeps for Lookup.
const maxRecent = 4096

// key is a struct, not a joined string: session ids may contain any character.
type key struct {
	session SessionID
	id      string
}

// entry is a pending record in its session's list, oldest first: cancelling a
// session costs what that session holds, and its questions list in the order asked.
type entry struct {
	rec        Record
	prev, next *entry
}

type entryList struct {
	first, last *entry
	n           int
}

func newRegistry() *registry {
	return &registry{pending: make(map[key]*entry), sessions: make(map[SessionID]entryList)}
}

func (s *registry) Put(_ context.Context, rec Record) (Record, bool, error) {
	k := key{rec.Session, rec.RequestID()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Record{}, false, ErrClosed
	}
	if m, ok := s.pending[k]; ok {
		return m.rec, false, nil
	}
	s.rev++
	rec.Rev = s.rev
	m := &entry{rec: rec}
	s.pending[k] = m
	l := s.sessions[rec.Session]
	if l.last == nil {
		l.first = m
	} else {
		l.last.next, m.prev = m, l.last
	}
	l.last = m
	l.n++
	s.sessions[rec.Session] = l
	return rec, true, nil
}

func (s *registry) Get(_ context.Context, session SessionID, id string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.pending[key{session, id}]; ok {
		return m.rec, nil
	}
	return Record{}, ErrNotPending
}

func (s *registry) End(_ context.Context, rec Record) (bool, error) {
	k := key{rec.Session, rec.RequestID()}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.pending[k]
	if !ok || m.rec.Rev != rec.Rev {
		return false, nil
	}
	delete(s.pending, k)
	l := s.sessions[k.session]
	if m.prev != nil {
		m.prev.next = m.next
	} else {
		l.first = m.next
	}
	if m.next != nil {
		m.next.prev = m.prev
	} else {
		l.last = m.prev
	}
	m.prev, m.next = nil, nil
	if l.n--; l.n == 0 {
		delete(s.sessions, k.session)
	} else {
		s.sessions[k.session] = l
	}
	s.keepRecent(k, m, rec)
	return true, nil
}

// keepRecent keeps m, whose request has just ended as rec, for Lookup, in place of the
// oldest ended request once maxRecent are kept. s.mu is held. It allocates nothing once
// the ring is full: the entry is the one the request had while pending.
func (s *registry) keepRecent(k key, m *entry, rec Record) {
	if s.recent == nil {
		s.recent = make(map[key]*entry)
	}
	m.rec = rec
	if len(s.ring) < maxRecent {
		s.ring = append(s.ring, recentKey{k, rec.Rev})
	} else {
		old := s.ring[s.head]
		if e := s.recent[old.k]; e != nil && e.rec.Rev == old.rev {
			delete(s.recent, old.k)
		}
		s.ring[s.head] = recentKey{k, rec.Rev}
		s.head = (s.head + 1) % maxRecent
	}
	s.recent[k] = m
}

// lookup returns the request of session and id, pending or ended lately.
func (s *registry) lookup(session SessionID, id string) (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{session, id}
	if m, ok := s.pending[k]; ok {
		return m.rec, true
	}
	m, ok := s.recent[k]
	if !ok || !m.rec.ExpiresAt().After(time.Now()) {
		return Record{}, false
	}
	return m.rec, true
}

func (s *registry) Pending(_ context.Context, session SessionID) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingLocked(session), nil
}

func (s *registry) pendingLocked(session SessionID) []Record {
	l, ok := s.sessions[session]
	if !ok {
		return nil
	}
	out := make([]Record, 0, l.n)
	for m := l.first; m != nil; m = m.next {
		out = append(out, m.rec)
	}
	return out
}

// PutGrant keeps g, in place of a grant of the same session and ID.
func (s *registry) PutGrant(_ context.Context, g Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grants == nil {
		s.grants = make(map[SessionID][]Grant)
	}
	list := s.grants[g.Session]
	for i := range list {
		if list[i].ID == g.ID {
			list[i] = g
			return nil
		}
	}
	s.grants[g.Session] = append(list, g)
	return nil
}

// Grants returns a copy of the session's grants, oldest first.
func (s *registry) Grants(_ context.Context, session SessionID) ([]Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.grants[session]), nil
}

// RevokeGrant removes the session's grant id.
func (s *registry) RevokeGrant(_ context.Context, session SessionID, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.grants[session]
	i := slices.IndexFunc(list, func(g Grant) bool { return g.ID == id })
	if i < 0 {
		return false, nil
	}
	if list = slices.Delete(list, i, i+1); len(list) == 0 {
		delete(s.grants, session)
	} else {
		s.grants[session] = list
	}
	return true, nil
}

// Watch never calls f: only its own dispatcher ends its questions.
func (s *registry) Watch(func(Record)) (stop func()) { return func() {} }

// waiting reports whether the session has a pending question, without listing them.
func (s *registry) waiting(session SessionID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[session]
	return ok
}

// close makes later Puts fail with ErrClosed and returns every pending record, for the
// dispatcher's Close to end.
func (s *registry) close() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	out := make([]Record, 0, len(s.pending))
	for session := range s.sessions {
		out = append(out, s.pendingLocked(session)...)
	}
	return out
}

// len returns the number of pending questions.
func (s *registry) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// calls is the dispatcher's table of the callers waiting for their question to end, in
// the shape of nats.go's respMap: a map under a mutex, and a signal with a buffer of one
// per waiter. Whoever learns that a question ended (the dispatcher that ended it, or the
// store's Watch for an end elsewhere) removes that question's waiters under the lock,
// then delivers the end to each without blocking. It holds no store state and no
// ordering of events: only who waits for what.
type calls struct {
	mu     sync.Mutex
	m      map[key]*waiter // the first waiter of each key; the others follow by next
	closed bool
	// unsettled counts the callers added and not yet settled: still recording or
	// sending their question. close waits for them, on settledCond.
	unsettled   int
	settledCond sync.Cond
}

// waiter is one caller waiting. key is set at creation; rev, early and next are written
// under calls.mu; end is written once, by whoever removed the waiter from the table with
// an end to deliver, before it signals done.
type waiter struct {
	key key
	// rev is the Rev of the question waited for, once the store has said it (bind);
	// until then it is 0, and ends of the key are kept in early, since one of them may be
	// that of the question the store is recording for this caller right now.
	rev   uint64
	early []end
	next  *waiter
	end   end
	done  chan struct{} // buffer 1: signalled once end is set
}

// end is how a question ended, as delivered to a waiter (who knows what it asked): which
// question (rev), its outcome and answers, and the error of the end when this dispatcher
// ended it (a cause besides the outcome's sentinel).
type end struct {
	rev      uint64
	outcome  Outcome
	answers  []Answer
	decision *Decision
	err      error
}

// endOf is the end of rec, with err.
func endOf(rec Record, err error) end {
	return end{rec.Rev, rec.Outcome, rec.Answers, rec.Decision, err}
}

// record is the ended record of the request rec made, ended as e says.
func (e end) record(rec Record) Record {
	rec.Rev, rec.Outcome, rec.Answers, rec.Decision = e.rev, e.outcome, e.answers, e.decision
	return rec
}

func newCalls() *calls {
	c := &calls{m: make(map[key]*waiter)}
	c.settledCond.L = &c.mu
	return c
}

// add registers a caller of key before its question is recorded, so that no end of it
// can be missed; false once the table is closed.
func (c *calls) add(k key) (*waiter, bool) {
	w := &waiter{key: k, done: make(chan struct{}, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false
	}
	w.next = c.m[k]
	c.m[k] = w
	c.unsettled++
	return w, true
}

// settled says that a caller added has recorded and sent its question, or given up.
func (c *calls) settled() {
	c.mu.Lock()
	if c.unsettled--; c.unsettled == 0 {
		c.settledCond.Broadcast()
	}
	c.mu.Unlock()
}

// wait returns the end delivered to w, once it has been.
func (w *waiter) wait() end {
	<-w.done
	return w.end
}

// give delivers e to w, which its caller has removed from the table.
func (w *waiter) give(e end) {
	w.end = e
	w.done <- struct{}{}
}

// bind sets the question w waits for. An end of it seen meanwhile is delivered now.
func (c *calls) bind(w *waiter, rev uint64) {
	c.mu.Lock()
	early := w.early
	w.rev, w.early = rev, nil
	var found *end
	for i := range early {
		if early[i].rev == rev {
			found = &early[i]
		}
	}
	if found != nil && c.removeLocked(w) {
		c.mu.Unlock()
		w.give(*found)
		return
	}
	c.mu.Unlock()
}

// deliver gives rec, an ended question, and err, the error of its end when this
// dispatcher ended it, to its waiters, and returns how many.
func (c *calls) deliver(rec Record, err error) int {
	k := key{rec.Session, rec.RequestID()}
	var ended *waiter // linked by next, once out of the table
	c.mu.Lock()
	var kept *waiter
	for w := c.m[k]; w != nil; {
		next := w.next
		switch w.rev {
		case rec.Rev:
			w.next, ended = ended, w
		case 0:
			w.early = append(w.early, endOf(rec, err))
			w.next, kept = kept, w
		default:
			w.next, kept = kept, w
		}
		w = next
	}
	if kept == nil {
		delete(c.m, k)
	} else {
		c.m[k] = kept
	}
	c.mu.Unlock()
	n := 0
	for w := ended; w != nil; {
		next := w.next
		w.next = nil
		w.give(endOf(rec, err))
		w = next
		n++
	}
	return n
}

// remove takes w out of the table and reports whether it was still there: false means an
// end has been, or is being, delivered to it.
func (c *calls) remove(w *waiter) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.removeLocked(w)
}

func (c *calls) removeLocked(w *waiter) bool {
	var prev *waiter
	for x := c.m[w.key]; x != nil; prev, x = x, x.next {
		if x != w {
			continue
		}
		switch {
		case prev != nil:
			prev.next = x.next
		case x.next != nil:
			c.m[w.key] = x.next
		default:
			delete(c.m, w.key)
		}
		x.next = nil
		return true
	}
	return false
}

// alone reports whether w is still in the table (not yet given an end, by Close say),
// and whether it is the only caller there waiting for its question. A caller not yet
// bound does not count: the dispatcher asks with the question's key locked, and callers
// bind under that lock, so such a caller records its question only after w's has ended
// (and finds it ended and kept, or asks anew).
func (c *calls) alone(w *waiter) (in, alone bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	alone = true
	for x := c.m[w.key]; x != nil; x = x.next {
		if x == w {
			in = true
		} else if x.rev == w.rev {
			alone = false
		}
	}
	return in, alone
}

// waiting reports whether a caller in the table waits for question rev of k.
func (c *calls) waiting(k key, rev uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for x := c.m[k]; x != nil; x = x.next {
		if x.rev == rev {
			return true
		}
	}
	return false
}

// close makes add fail from then on, waits for the callers added to settle, and, unless
// last is 0, ends every wait with the outcome last.
func (c *calls) close(last Outcome) {
	c.mu.Lock()
	c.closed = true
	for c.unsettled > 0 {
		c.settledCond.Wait()
	}
	if last == 0 {
		c.mu.Unlock()
		return
	}
	// Each waiter's rev is read here, under the lock: a caller whose question has just
	// been recorded may be binding it right now.
	var ended []*waiter
	var revs []uint64
	for _, w := range c.m {
		for w != nil {
			next := w.next
			w.next = nil
			ended, revs = append(ended, w), append(revs, w.rev)
			w = next
		}
	}
	c.m = make(map[key]*waiter)
	c.mu.Unlock()
	for i, w := range ended {
		w.give(end{rev: revs[i], outcome: last})
	}
}
