package askuser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Options configure a [Dispatcher]. A nil *Options means all defaults; the zero value of
// each field means its default.
type Options struct {
	// Timeout is how long a request (a question set, or an approval) waits for the
	// person. Default 5 minutes.
	Timeout time.Duration
	// NewRequestID makes a request id for a call that did not bring one (see
	// [ToolCall.ID]). It must return unguessable, unique ids: a device that knows a request
	// id of its own session can answer it. Default: a random (version 4) UUID.
	NewRequestID func() string
	// FailWithoutDevice ends a call at once as [Undelivered] when no device of the session
	// is connected, instead of asking and waiting for one to connect. It needs a
	// transport that implements [Presence]; with any other it has no effect.
	FailWithoutDevice bool
	// FailOnDisconnect ends the session's requests as [Disconnected] when its last device
	// goes, once DisconnectGrace has passed with no device back, instead of leaving them
	// pending until answered on a device that reconnects or until they time out (the
	// default, as in the original design). Noticing a device that is back needs a
	// transport that implements [Presence]; with any other, the requests end when the
	// grace period ends.
	FailOnDisconnect bool
	// DisconnectGrace is how long FailOnDisconnect waits for a device to come back. Zero
	// fails at once.
	DisconnectGrace time.Duration
	// MaxCustomInput bounds an answer's free text, in characters. Default
	// 4000.
	MaxCustomInput int
	// Store holds the pending requests. Default: in memory, this dispatcher's own (it
	// keeps grants too, until Close). A Store shared with other dispatchers (the
	// replicas of a host) lets any of them deliver and answer any request: see [Store],
	// and [Dispatcher.Close] for what closing leaves in it.
	Store Store
	// Policy, when set, gates the host's own tool calls that [Dispatcher.Wrap] passes
	// on, and is what [Dispatcher.Approve] applies: see [Policy]. Without it Wrap passes
	// them on at once, and Approve asks the person about every call. New panics on a
	// Policy with a mistake in it (a rule without a tool, a schema that does not compile).
	Policy *Policy
	// Notifier, when set, is told of each request that has gone NotifyAfter with no
	// device showing it (see [Notifier]).
	Notifier Notifier
	// NotifyAfter is how long a request waits unseen before it is given to the
	// Notifier. Default 10 seconds.
	NotifyAfter time.Duration
	// Observer, when set, is told of every call and request, for traces, metrics and
	// logs: see [Observer]; [Hooks] takes plain functions.
	Observer Observer
	// Logger, when set, logs each request's life at debug level, each decision on a
	// gated tool call at info level, and failures of the store and refused device events
	// at warn level, with attributes named as the metrics name them
	// (askuser.request.kind, askuser.outcome, askuser.refusal.code, ...).
	Logger *slog.Logger
}

// Dispatcher runs ask_user_questions calls, and approvals of the host's own tool calls:
// it validates what the model wrote, records the request in its [Store], sends it
// through its [Transport], waits for the first way the request can end, and returns
// what the model reads. It implements [Inbound] for the transport's events. All methods
// may be called concurrently.
type Dispatcher struct {
	t        Transport
	presence Presence
	opts     Options
	policy   *policy      // nil without Options.Policy
	obs      Observer     // Options.Observer, or nil
	log      *slog.Logger // Options.Logger, or nil
	store    Store
	grants   GrantStore // the store's, or nil
	own      *memStore  // the store, when it is this dispatcher's own
	stop     func()     // stops the store's Watch

	mu     sync.Mutex
	closed bool
	grace  map[SessionID]*time.Timer
	// failing counts the disconnection failures running; Close waits for them.
	failing sync.WaitGroup
	// closing ends with Close: the contexts of the Puts in flight derive from it.
	closing     context.Context
	closeFlight context.CancelFunc

	// The life of the requests (lifecycle.go): who waits for which, and the order of
	// each request's events (an answer from a device that joined and was shown the
	// request can come before its ask has gone out).
	calls *calls
	keys  keyLocks

	notices notices // the requests the Notifier may be told of
}

// New returns a dispatcher that reaches devices through t. opts may be nil; it is copied.
// New panics when a duration or bound in opts is negative (zero means the default, and
// a negative value is a mistake better caught at start than guessed at), and on a
// mistake in opts.Policy.
//
// New binds t to the dispatcher: when t has a method Bind(Inbound), as the library's
// transports do (wshub.Hub, cluster.Transport, askusertest.Transport), New calls it with
// the dispatcher, last, so that the devices' events flow back into it. A transport
// without one is bound by the host, with whatever it takes.
func New(t Transport, opts *Options) *Dispatcher {
	d := &Dispatcher{t: t, grace: make(map[SessionID]*time.Timer), calls: newCalls()}
	if opts != nil {
		d.opts = *opts
	}
	switch {
	case d.opts.Timeout < 0:
		panic("askuser: Options.Timeout is negative")
	case d.opts.DisconnectGrace < 0:
		panic("askuser: Options.DisconnectGrace is negative")
	case d.opts.MaxCustomInput < 0:
		panic("askuser: Options.MaxCustomInput is negative")
	case d.opts.NotifyAfter < 0:
		panic("askuser: Options.NotifyAfter is negative")
	}
	if d.opts.NotifyAfter == 0 {
		d.opts.NotifyAfter = defaultNotifyAfter
	}
	if d.opts.Timeout == 0 {
		d.opts.Timeout = defaultTimeout
	}
	if d.opts.NewRequestID == nil {
		d.opts.NewRequestID = uuid.NewString
	}
	if d.opts.Policy != nil {
		p, err := compilePolicy(d.opts.Policy)
		if err != nil {
			panic("askuser: Options.Policy: " + err.Error())
		}
		d.policy = p
	}
	d.obs, d.log = d.opts.Observer, d.opts.Logger
	d.presence, _ = t.(Presence)
	d.store = d.opts.Store
	if d.store == nil {
		d.own = newMemStore()
		d.store = d.own
	}
	d.grants, _ = d.store.(GrantStore)
	d.stop = d.store.Watch(d.ended)
	d.keys.publish, d.keys.cancel = d.announce, d.cancelHandedOff
	d.closing, d.closeFlight = context.WithCancel(context.Background())
	if b, ok := t.(interface{ Bind(Inbound) }); ok {
		b.Bind(d) // last: the transport may call d at once
	}
	return d
}

// ToolCall is one tool call of the model, as a host's agent loop sees it.
type ToolCall struct {
	// Session is the session the call belongs to; its devices are asked.
	Session SessionID
	// ID is the model's tool-call id. When set it becomes the requestId, so that a call
	// made again with the same id and arguments (retried, or resumed after a restart with
	// a shared [Store]) waits on the question already asked instead of asking twice. When
	// empty, a fresh id is made with [Options.NewRequestID].
	ID string
	// Name is the tool's name; [Dispatcher.Dispatch] ignores it, [Dispatcher.Wrap] routes on it.
	Name string
	// Arguments are the tool's arguments exactly as the model emitted them.
	Arguments json.RawMessage
}

// Result is how a call ended.
type Result struct {
	// Content is the tool result string to give the model.
	Content string
	// Outcome tells how the call ended without parsing Content.
	Outcome Outcome
	// RequestID is the question's request id ("" only for a call refused without one).
	RequestID string
	// Answers are the person's validated answers when Outcome is [Answered]. Every call
	// that waited on the same question gets the same slice: treat it as read-only.
	Answers []Answer
	// Problems lists what was wrong with the call when Outcome is [Invalid].
	Problems []string
	// Err is nil when Outcome is [Answered], and otherwise wraps the outcome's error
	// ([ErrTimeout], [ErrCancelled], [ErrDeclined], [ErrUndelivered], [ErrDisconnected],
	// [ErrClosed], or an [*ArgumentsError]), and possibly its cause.
	Err error
}

// IsError reports whether the call ended without an answer: the flag many LLM APIs take
// beside a tool result.
func (r Result) IsError() bool { return r.Outcome != Answered }

// Dispatch runs one ask_user_questions call: it parses and validates call.Arguments (see
// [ParseArguments]) and, when they are valid, asks the session's devices and waits.
// Invalid arguments end the call at once with a result listing the problems, and no
// device is bothered. Dispatch always returns a result for the model; it never panics on
// bad input.
//
// A call whose ID names a question already asked with the same questions joins it: it
// waits for it when it is pending, and gets its outcome at once when it has ended and the
// store still keeps it (a shared store does, for runs that resume elsewhere). When that
// question asks something else, the call ends at once as [Invalid], saying the id is
// taken, and the question is left as it is.
func (d *Dispatcher) Dispatch(ctx context.Context, call ToolCall) Result {
	ctx, e := d.begin(ctx, CallInfo{Kind: KindQuestion, Session: call.Session, ID: call.ID, Tool: ToolName, Arguments: call.Arguments})
	defer e.unended()
	var res Result
	if req, err := ParseArguments(call.Arguments); err != nil {
		res = d.refuse(call.Session, call.ID, err)
	} else {
		res = d.ask(ctx, call.Session, call.ID, req)
	}
	e.end(CallEnd{RequestID: res.RequestID, Outcome: res.Outcome, IsError: res.IsError(), Err: res.Err, Content: res.Content})
	return res
}

// Ask asks req, built in Go rather than by a model, with the same rules and outcomes as
// [Dispatcher.Dispatch]. id may be empty. Ask keeps its own copy of req: changing req
// afterwards changes nothing that devices are shown or answers are checked against.
func (d *Dispatcher) Ask(ctx context.Context, session SessionID, id string, req *Request) Result {
	ctx, e := d.begin(ctx, CallInfo{Kind: KindQuestion, Session: session, ID: id, Tool: ToolName})
	defer e.unended()
	var res Result
	if own, err := req.validated(); err != nil {
		res = d.refuse(session, id, err)
	} else {
		res = d.ask(ctx, session, id, own)
	}
	e.end(CallEnd{RequestID: res.RequestID, Outcome: res.Outcome, IsError: res.IsError(), Err: res.Err, Content: res.Content})
	return res
}

// refuse ends a call refused before anything was asked; err is an [*ArgumentsError].
func (d *Dispatcher) refuse(session SessionID, id string, err error) Result {
	var problems []string
	if ae, ok := errors.AsType[*ArgumentsError](err); ok {
		problems = ae.Problems
	}
	res := Result{Content: invalidResult(problems), Outcome: Invalid, RequestID: id, Problems: problems, Err: err}
	if !utf8.ValidString(id) || len(id) > MaxRequestIDBytes {
		res.RequestID = ""
	}
	d.report(Record{Session: session, Ask: AskData{RequestID: res.RequestID}, Outcome: Invalid}, err, 0)
	return res
}

// requestIDProblem says what is wrong with a request id, or returns "".
func requestIDProblem(id string) string {
	switch {
	case !utf8.ValidString(id):
		return "id: the tool-call id is not valid UTF-8, so no device could answer it; use another id"
	case len(id) > MaxRequestIDBytes:
		return fmt.Sprintf("id: the tool-call id of %d bytes is too long; at most %d bytes are accepted", len(id), MaxRequestIDBytes)
	}
	return ""
}

func (d *Dispatcher) ask(ctx context.Context, session SessionID, id string, req *Request) Result {
	if id == "" {
		if id = d.opts.NewRequestID(); id == "" {
			return d.refuse(session, "", &ArgumentsError{Problems: []string{"id: Options.NewRequestID returned an empty id, which no device could answer"}})
		}
	}
	if problem := requestIDProblem(id); problem != "" {
		return d.refuse(session, id, &ArgumentsError{Problems: []string{problem}})
	}
	now := time.Now()
	rec := Record{
		Session: session,
		Ask:     AskData{RequestID: id, Questions: req.Questions, Metadata: req.Metadata, ExpiresAt: now.Add(d.opts.Timeout).UTC()},
		AskedAt: now,
	}
	err := d.request(ctx, &rec, func(cur Record) bool { return cur.Approval == nil && sameQuestions(cur.Ask, req) })
	if errors.Is(err, errIDTaken) {
		taken := "is already asking different questions, which are still waiting for the user"
		switch {
		case rec.Approval != nil:
			taken = "names a tool call waiting for the user's approval"
		case rec.Outcome != 0:
			taken = "has already asked different questions"
		}
		return d.refuse(session, id, &ArgumentsError{Problems: []string{fmt.Sprintf(
			"id: the tool-call id %q %s; ask these in a call with its own id", truncate(id, 64), taken)}})
	}
	return d.result(rec, err)
}

// sameQuestions reports whether a asks what req asks.
func sameQuestions(a AskData, req *Request) bool {
	return string(a.Metadata) == string(req.Metadata) && slices.EqualFunc(a.Questions, req.Questions, func(x, y Question) bool {
		return x.Question == y.Question && x.Header == y.Header && x.MultiSelect == y.MultiSelect && x.Placeholder == y.Placeholder && slices.Equal(x.Options, y.Options)
	})
}

// result renders an ended question as the model's tool result. err, when set, is the
// call's error, the outcome's sentinel with its cause; otherwise it is the sentinel.
func (d *Dispatcher) result(rec Record, err error) Result {
	res := Result{Outcome: rec.Outcome, RequestID: rec.Ask.RequestID, Err: err}
	e := endingOf(rec.Outcome, err)
	if e == nil || rec.Outcome >= Approved { // an outcome this version does not know, from a shared store
		e = endingOf(Undelivered, nil)
	}
	if res.Err == nil {
		res.Err = e.err
	}
	if rec.Outcome == Answered {
		res.Answers = rec.Answers
		content, _ := marshal(response{Answers: rec.Answers}) // answers always encode
		res.Content = string(content)
		return res
	}
	res.Content = e.content
	return res
}

// ToolFunc is a host's tool dispatcher: it runs one tool call and returns its result.
type ToolFunc func(ctx context.Context, call ToolCall) (string, error)

// Wrap returns a ToolFunc that routes ask_user_questions calls to d, with no permission
// check in between (asking is not an action the person has to approve), and every other
// call to next: at once without [Options.Policy], and through the policy's gate with one
// ([Dispatcher.Approve]), so that next runs only a call that may run, with the arguments
// it may run with. When next is nil, other tools get an error.
//
// For ask_user_questions the returned string is always the tool result for the model
// ([Result.Content]). The error is nil when the person answered; otherwise it is a
// [*ResultError] whose Error is that same content, so that a host that turns a tool's
// error into an error result for the model (is_error, say) sends exactly what askuser
// means either way. For a gated call that may not run, the string is the refusal the
// model reads ([ApprovalResult.Content]) and the error a [*ResultError] too; for one that
// ran, they are next's, the string with the notice of an edit when the person edited the
// arguments. Should next panic, the panic goes on to the caller, the call having ended
// for the observer as an error.
func (d *Dispatcher) Wrap(next ToolFunc) ToolFunc {
	return func(ctx context.Context, call ToolCall) (string, error) {
		if call.Name == ToolName {
			res := d.Dispatch(ctx, call)
			if res.IsError() {
				return res.Content, &ResultError{Result: res}
			}
			return res.Content, nil
		}
		if next == nil {
			return "", fmt.Errorf("askuser: no dispatcher for tool %q", call.Name)
		}
		if d.policy == nil {
			return next(ctx, call)
		}
		return d.gated(ctx, call, next)
	}
}

// HandleEvent takes one event from a device of ev.SessionID, which the transport must
// have checked the device may act for: [EventResult] events, answers or {"requestId":
// ..., "declined": true}, and [EventApprovalResult] events, decisions. It returns nil
// when the event was accepted; an [*AnswerError] when the answers or the decision are
// refused (the request stays open); an error matching [ErrNotPending] when no such
// request is pending (or it is of the other kind); an error wrapping the store's when a
// shared [Store] could not read or record it (the device may send it again); and errors
// wrapping [ErrMalformedEvent] or [ErrUnsupportedEvent] for anything else. ctx bounds
// what a shared store does for the event: a transport that must refuse within a time
// gives it a deadline. ev.User, set by the transport, is recorded as who decided.
func (d *Dispatcher) HandleEvent(ctx context.Context, ev Event) error {
	var err error
	switch ev.Type {
	case EventResult:
		err = d.handleAnswer(ctx, ev)
	case EventApprovalResult:
		err = d.handleDecision(ctx, ev)
	default:
		err = fmt.Errorf("%w: %q", ErrUnsupportedEvent, truncate(ev.Type, 64))
	}
	if err != nil && d.log != nil {
		d.warn(ctx, "askuser: device event refused", slog.String("askuser.refusal.code", errorCode(err)),
			slog.String("askuser.session", ev.SessionID.String()), slog.String("askuser.request.id", ev.RequestID()),
			slog.String("error", err.Error()))
	}
	return err
}

// handleAnswer takes a device's answers to a question set, or its decline.
func (d *Dispatcher) handleAnswer(ctx context.Context, ev Event) error {
	if len(ev.Data) == 0 {
		return fmt.Errorf("%w: %s without data", ErrMalformedEvent, EventResult)
	}
	data, err := decodeResultData(ev.Data)
	if err != nil {
		return err
	}
	if data.RequestID == "" {
		return fmt.Errorf("%w: %s data: missing requestId", ErrMalformedEvent, EventResult)
	}
	if data.Declined && len(data.Answers) > 0 {
		return fmt.Errorf("%w: %s data: a decline carries no answers", ErrMalformedEvent, EventResult)
	}
	rec, err := d.store.Get(ctx, ev.SessionID, data.RequestID)
	if errors.Is(err, ErrNotPending) || err == nil && (rec.Outcome != 0 || rec.Approval != nil) {
		return ErrNotPending
	}
	if err != nil {
		return fmt.Errorf("askuser: reading the question: %w", err)
	}
	if data.Declined {
		rec.Outcome = Declined
	} else {
		// The question is immutable: it is checked without any lock.
		canonical, problems := checkAnswers(rec.Ask.Questions, data.Answers, d.opts.MaxCustomInput)
		if problems != nil {
			return &AnswerError{RequestID: data.RequestID, Problems: problems}
		}
		rec.Outcome, rec.Answers = Answered, canonical
	}
	if won, err := d.end(ctx, rec, nil); err != nil {
		// The answer may or may not be recorded: the device can send it again.
		return fmt.Errorf("askuser: recording the answer: %w", err)
	} else if !won {
		return ErrNotPending
	}
	return nil
}

// CancelSession ends every pending request of the session, questions and approvals, as
// [Cancelled], so that each waiting call returns {"error": "Session cancelled"} (an
// approval's says the tool did not run), and returns how many it ended. Other sessions
// are not touched. With a shared [Store], the requests end wherever they were made.
func (d *Dispatcher) CancelSession(session SessionID) int {
	return d.endSession(session, Cancelled, nil)
}

// endSession ends the session's pending requests with outcome o.
func (d *Dispatcher) endSession(session SessionID, o Outcome, err error) int {
	recs, _ := d.store.Pending(context.Background(), session)
	n := 0
	for _, rec := range recs {
		rec.Outcome = o
		if won, _ := d.end(context.Background(), rec, err); won {
			n++
		}
	}
	return n
}

// Waiting reports whether the session has a request waiting for the person, a question
// set or an approval: a host queues the person's new messages meanwhile (§6.5).
func (d *Dispatcher) Waiting(session SessionID) bool {
	if d.own != nil {
		return d.own.waiting(session)
	}
	recs, _ := d.store.Pending(context.Background(), session)
	return len(recs) > 0
}

// Pending returns the session's pending question sets, oldest first, as the data of
// their ask events: to show a device that connects (with [Dispatcher.PendingApprovals]),
// or to list what the person owes an answer. They are copies: changing them changes
// nothing pending. With a shared [Store], they include the questions asked by other
// dispatchers; should the store fail, Pending returns none.
func (d *Dispatcher) Pending(session SessionID) []AskData {
	recs, _ := d.store.Pending(context.Background(), session)
	var out []AskData
	for _, rec := range recs {
		if rec.Approval == nil {
			out = append(out, rec.Ask.clone())
		}
	}
	return out
}

// PendingApprovals returns the session's pending approvals, oldest first, as the data of
// their tool_approval events, as [Dispatcher.Pending] does for question sets.
func (d *Dispatcher) PendingApprovals(session SessionID) []ApprovalData {
	recs, _ := d.store.Pending(context.Background(), session)
	var out []ApprovalData
	for _, rec := range recs {
		if rec.Approval != nil {
			out = append(out, rec.Approval.clone())
		}
	}
	return out
}

// Lookup returns the request recorded under session and id, pending or ended: ended
// and kept by a shared store, or, with the dispatcher's own store, ended lately (until it
// would have expired). An error matching [ErrNotPending] says there is none. It is how
// the page of an answer link says how its request ended.
func (d *Dispatcher) Lookup(ctx context.Context, session SessionID, id string) (Record, error) {
	if d.own != nil {
		if rec, ok := d.own.lookup(session, id); ok {
			return rec, nil
		}
		return Record{}, ErrNotPending
	}
	return d.store.Get(ctx, session, id)
}

// Disconnected tells the dispatcher that the session's last device has gone. With
// [Options.FailOnDisconnect] it ends the session's questions as [Disconnected] once the
// grace period has passed with no device back; otherwise it does nothing.
func (d *Dispatcher) Disconnected(session SessionID) {
	if !d.opts.FailOnDisconnect || !d.Waiting(session) {
		return
	}
	if d.opts.DisconnectGrace <= 0 {
		d.failDisconnected(session)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if t := d.grace[session]; t != nil { // gone again: the grace period starts again
		t.Reset(d.opts.DisconnectGrace)
		return
	}
	d.grace[session] = time.AfterFunc(d.opts.DisconnectGrace, func() {
		d.mu.Lock()
		delete(d.grace, session)
		d.mu.Unlock()
		d.failDisconnected(session)
	})
}

func (d *Dispatcher) failDisconnected(session SessionID) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.failing.Add(1)
	d.mu.Unlock()
	defer d.failing.Done()
	if d.presence != nil && d.presence.Connected(session) {
		return
	}
	d.endSession(session, Disconnected, nil)
}

// Close makes every waiting call return at once as [Shutdown], with the tool result
// {"error": "The question service is shutting down"}, and later calls too. With the
// dispatcher's own store, the questions end as Shutdown and every device is told. With a
// shared [Store] they stay pending there, where another dispatcher sharing it (a replica
// that resumes the same runs, say) can wait for them and any device can still answer
// them; a call still recording its question in the store has its Put cancelled and
// returns Shutdown too. Close does not close the transport, and after it returns the
// dispatcher sends nothing and ends nothing. Close may be called more than once, but not
// from the hooks of [Options] (it waits for the calls and ends they report on).
func (d *Dispatcher) Close() error {
	d.mu.Lock()
	already := d.closed
	d.closed = true
	for s, t := range d.grace {
		t.Stop()
		delete(d.grace, s)
	}
	d.mu.Unlock()
	if already {
		return nil
	}
	d.closeFlight()
	d.failing.Wait()
	d.stop()
	d.closeNotices()
	d.closeRequests()
	return nil
}
