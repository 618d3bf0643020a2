package askuser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonx"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
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
	// transport that implements [wire.Presence]; with any other it has no effect.
	FailWithoutDevice bool
	// FailOnDisconnect ends the session's requests as [Disconnected] when its last device
	// goes, once DisconnectGrace has passed with no device back, instead of leaving them
	// pending until answered on a device that reconnects or until they time out (the
	// default, as in the original design). Noticing a device that is back needs a
	// transport that implements [wire.Presence]; with any other, the requests end when the
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
	// replicas of a host) lets any of them deliver and answer any request: see [store.Store],
	// and [Dispatcher.Close] for what closing leaves in it.
	Store store.Store
	// Policy, when set, gates the host's own tool calls that [Dispatcher.RunTools] passes
	// on, and is what [Dispatcher.Approve] applies: see [Policy]. Without it RunTools runs
	// them at once, and Approve asks the person about every call. New panics on a
	// Policy with a mistake in it (a rule without a tool, a schema that does not compile).
	Policy *Policy
	// Notifier, when set, is told of each request that has gone NotifyAfter with no
	// device showing it (see [notify.Notifier]).
	Notifier notify.Notifier
	// NotifyAfter is how long a request waits unseen before it is given to the
	// Notifier. Default 10 seconds.
	NotifyAfter time.Duration
	// SessionTitle, when set, names a session for people: the title a person's inbox
	// lists the session's requests by ([wire.AskData.SessionTitle],
	// [wire.ApprovalData.SessionTitle]), beside the session's id. It is called once per
	// request, and must return quickly.
	SessionTitle func(SessionID) string
	// Observer, when set, is told of every call and request, for traces, metrics and
	// logs: see [observe.Observer]. [observe.Log] logs to a [log/slog.Logger],
	// [observe.Hooks] takes plain functions, and [observe.Join] combines them.
	Observer observe.Observer
}

// Dispatcher runs ask_user_questions calls, and approvals of the host's own tool calls:
// it validates what the model wrote, records the request in its [store.Store], sends it
// through its [wire.Transport], waits for the first way the request can end, and returns
// what the model reads. The devices' events come back through the [wire.Inbound] that
// [New] gives the transport (or through [Dispatcher.Deliver]). All methods may be called
// concurrently.
type Dispatcher struct {
	t        wire.Transport
	presence wire.Presence
	opts     Options
	policy   *policy          // nil without Options.Policy
	obs      observe.Observer // Options.Observer, or nil
	store    store.Store
	grants   store.GrantStore // the store's, or nil
	own      *memStore        // the store, when it is this dispatcher's own
	stop     func()           // stops the store's Watch

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

	notices     notices     // the requests the Notifier may be told of
	escalations escalations // the approvals whose escalation steps may fire here
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
func New(t wire.Transport, opts *Options) *Dispatcher {
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
	d.obs = d.opts.Observer
	d.presence, _ = t.(wire.Presence)
	d.store = d.opts.Store
	if d.store == nil {
		d.own = newMemStore()
		d.store = d.own
	}
	d.grants, _ = d.store.(store.GrantStore)
	d.stop = d.store.Watch(d.ended)
	d.keys.publish, d.keys.cancel = d.announce, d.cancelHandedOff
	d.closing, d.closeFlight = context.WithCancel(context.Background())
	if b, ok := t.(interface{ Bind(wire.Inbound) }); ok {
		b.Bind((*inbound)(d)) // last: the transport may call d at once
	}
	return d
}

// ToolCall is one tool call of the model, as a host's agent loop sees it.
type ToolCall struct {
	// Session is the session the call belongs to; its devices are asked.
	Session SessionID
	// ID is the model's tool-call id. When set it becomes the requestId, so that a call
	// made again with the same id and arguments (retried, or resumed after a restart with
	// a shared [store.Store]) waits on the question already asked instead of asking twice. When
	// empty, a fresh id is made with [Options.NewRequestID].
	ID string
	// Name is the tool's name; [Dispatcher.Dispatch] ignores it, [Dispatcher.RunTools] routes on it.
	Name string
	// Arguments are the tool's arguments exactly as the model emitted them.
	Arguments json.RawMessage
	// Requester, for a gated call, names the person whose agent made the call, by the
	// name the transport authenticates their devices as (wire.Event.User): the host sets
	// it (the model never does), and with [store.Approvers.SeparateDuties] their approval
	// does not count. Dispatch ignores it.
	Requester string
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
	ctx, e := d.begin(ctx, observe.CallInfo{Kind: store.KindQuestion, Session: call.Session, ID: call.ID, Tool: ToolName, Arguments: call.Arguments})
	defer e.unended()
	var res Result
	if req, err := ParseArguments(call.Arguments); err != nil {
		res = d.refuse(call.Session, call.ID, err)
	} else {
		res = d.ask(ctx, call.Session, call.ID, req)
	}
	e.end(observe.CallEnd{RequestID: res.RequestID, Outcome: res.Outcome, IsError: res.IsError(), Err: res.Err, Content: res.Content})
	return res
}

// refuse ends a call refused before anything was asked; err is an [*ArgumentsError].
func (d *Dispatcher) refuse(session SessionID, id string, err error) Result {
	var problems []string
	if ae, ok := errors.AsType[*ArgumentsError](err); ok {
		problems = ae.Problems
	}
	res := Result{Content: invalidResult(problems), Outcome: Invalid, RequestID: id, Problems: problems, Err: err}
	if !utf8.ValidString(id) || len(id) > wire.MaxRequestIDBytes {
		res.RequestID = ""
	}
	d.report(store.Record{Session: session, Ask: wire.AskData{RequestID: res.RequestID}, Outcome: Invalid}, err, 0)
	return res
}

// requestIDProblem says what is wrong with a request id, or returns "".
func requestIDProblem(id string) string {
	switch {
	case !utf8.ValidString(id):
		return "id: the tool-call id is not valid UTF-8, so no device could answer it; use another id"
	case len(id) > wire.MaxRequestIDBytes:
		return fmt.Sprintf("id: the tool-call id of %d bytes is too long; at most %d bytes are accepted", len(id), wire.MaxRequestIDBytes)
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
	rec := store.Record{
		Session: session,
		Ask:     wire.AskData{RequestID: id, Questions: req.Questions, Metadata: req.Metadata, ExpiresAt: now.Add(d.opts.Timeout).UTC(), AskedAt: now.UTC(), SessionTitle: d.sessionTitle(session)},
		AskedAt: now,
	}
	err := d.request(ctx, &rec, func(cur store.Record) bool { return cur.Approval == nil && sameQuestions(cur.Ask, req) })
	if errors.Is(err, errIDTaken) {
		taken := "is already asking different questions, which are still waiting for the user"
		switch {
		case rec.Approval != nil:
			taken = "names a tool call waiting for the user's approval"
		case rec.Outcome != 0:
			taken = "has already asked different questions"
		}
		return d.refuse(session, id, &ArgumentsError{Problems: []string{fmt.Sprintf(
			"id: the tool-call id %q %s; ask these in a call with its own id", jsonx.Truncate(id, 64), taken)}})
	}
	return d.result(rec, err)
}

// sameQuestions reports whether a asks what req asks.
func sameQuestions(a wire.AskData, req *Request) bool {
	return string(a.Metadata) == string(req.Metadata) && slices.EqualFunc(a.Questions, req.Questions, func(x, y Question) bool {
		return x.Question == y.Question && x.Header == y.Header && x.MultiSelect == y.MultiSelect && x.Placeholder == y.Placeholder && slices.Equal(x.Options, y.Options)
	})
}

// result renders an ended question as the model's tool result. err, when set, is the
// call's error, the outcome's sentinel with its cause; otherwise it is the sentinel.
func (d *Dispatcher) result(rec store.Record, err error) Result {
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
		content, _ := jsonx.Marshal(response{Answers: rec.Answers}) // answers always encode
		res.Content = string(content)
		return res
	}
	res.Content = e.content
	return res
}

// Deliver takes one event from a device of ev.SessionID in the host's own process (an
// MCP client's elicitation, an interrupt resumed with the person's answer, a chat bot
// of the host's), as a transport hands in the events of the devices it carries. The
// caller is the authorization boundary: it must have checked that the person may act
// for ev.SessionID. It takes [wire.EventResult] events, answers or {"requestId": ...,
// "declined": true}, and [wire.EventApprovalResult] events, decisions. It returns nil
// when the event was accepted; an [*wire.AnswerError] when the answers or the decision are
// refused (the request stays open); an error matching [wire.ErrNotPending] when no such
// request is pending (or it is of the other kind); an error wrapping the store's when a
// shared [store.Store] could not read or record it (the device may send it again); and errors
// wrapping [wire.ErrMalformedEvent] or [wire.ErrUnsupportedEvent] for anything else. ctx bounds
// what a shared store does for the event. ev.User is recorded as who decided.
//
// A refused event is observed ([observe.Refused]) as a transport observes the refusals of
// its devices' events.
func (d *Dispatcher) Deliver(ctx context.Context, ev wire.Event) error {
	err := d.handleEvent(ctx, ev)
	if err != nil {
		d.observe(ctx, observe.Observation{Event: observe.Refused, Session: ev.SessionID, RequestID: ev.RequestID(), Code: wire.ErrorCode(err), Err: err})
	}
	return err
}

// handleEvent takes one event from a device of ev.SessionID, as [Dispatcher.Deliver]
// says, without observing a refusal (the transport does). Transports call it through
// the dispatcher's [wire.Inbound] (inbound, below); one that must refuse within a time
// gives ctx a deadline.
func (d *Dispatcher) handleEvent(ctx context.Context, ev wire.Event) error {
	var err error
	switch ev.Type {
	case wire.EventResult:
		err = d.handleAnswer(ctx, ev)
	case wire.EventApprovalResult:
		err = d.handleDecision(ctx, ev)
	default:
		err = fmt.Errorf("%w: %q", wire.ErrUnsupportedEvent, jsonx.Truncate(ev.Type, 64))
	}
	return err
}

// handleAnswer takes a device's answers to a question set, or its decline.
func (d *Dispatcher) handleAnswer(ctx context.Context, ev wire.Event) error {
	if len(ev.Data) == 0 {
		return fmt.Errorf("%w: %s without data", wire.ErrMalformedEvent, wire.EventResult)
	}
	data, err := decodeResultData(ev.Data)
	if err != nil {
		return err
	}
	if data.RequestID == "" {
		return fmt.Errorf("%w: %s data: missing requestId", wire.ErrMalformedEvent, wire.EventResult)
	}
	if data.Declined && len(data.Answers) > 0 {
		return fmt.Errorf("%w: %s data: a decline carries no answers", wire.ErrMalformedEvent, wire.EventResult)
	}
	rec, err := d.store.Get(ctx, ev.SessionID, data.RequestID)
	if errors.Is(err, wire.ErrNotPending) || err == nil && (rec.Outcome != 0 || rec.Approval != nil) {
		return wire.ErrNotPending
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
			return &wire.AnswerError{RequestID: data.RequestID, Problems: problems}
		}
		rec.Outcome, rec.Answers = Answered, canonical
	}
	if won, err := d.end(ctx, rec, nil); err != nil {
		// The answer may or may not be recorded: the device can send it again.
		return fmt.Errorf("askuser: recording the answer: %w", err)
	} else if !won {
		return wire.ErrNotPending
	}
	return nil
}

// CancelSession ends every pending request of the session, questions and approvals, as
// [Cancelled], so that each waiting call returns {"error": "Session cancelled"} (an
// approval's says the tool did not run), and returns how many it ended. Other sessions
// are not touched. With a shared [store.Store], the requests end wherever they were made.
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

// Pending returns the session's pending requests, question sets and approvals, oldest
// first: what the person owes an answer. A host queues the person's new messages while
// there is one (§6.5), or shows them. They are copies: changing them changes nothing
// pending. With a shared [store.Store], they include the requests made by other
// dispatchers; should the store fail, Pending returns none.
func (d *Dispatcher) Pending(session SessionID) []store.Record {
	recs, _ := d.store.Pending(context.Background(), session)
	for i, rec := range recs {
		if rec.Approval != nil {
			a := cloneApproval(*rec.Approval)
			recs[i].Approval = &a
		} else {
			recs[i].Ask = cloneAsk(rec.Ask)
		}
	}
	return recs
}

// waiting reports whether the session has a pending request.
func (d *Dispatcher) waiting(session SessionID) bool {
	if d.own != nil {
		return d.own.waiting(session)
	}
	recs, _ := d.store.Pending(context.Background(), session)
	return len(recs) > 0
}

// pendingAsks returns the session's pending question sets, oldest first, as the data of
// their ask events, to show a device that joins (the join rule of [wire.Transport]).
func (d *Dispatcher) pendingAsks(session SessionID) []wire.AskData {
	recs, _ := d.store.Pending(context.Background(), session)
	var out []wire.AskData
	for _, rec := range recs {
		if rec.Approval == nil {
			out = append(out, cloneAsk(rec.Ask))
		}
	}
	return out
}

// pendingApprovals returns the session's pending approvals, oldest first, as the data of
// their tool_approval events, as pendingAsks does for question sets.
func (d *Dispatcher) pendingApprovals(session SessionID) []wire.ApprovalData {
	recs, _ := d.store.Pending(context.Background(), session)
	var out []wire.ApprovalData
	for _, rec := range recs {
		if rec.Approval != nil {
			out = append(out, cloneApproval(*rec.Approval))
		}
	}
	return out
}

// lookup returns the request recorded under session and id, pending or ended: ended
// and kept by a shared store, or, with the dispatcher's own store, ended lately (until it
// would have expired). An error matching [wire.ErrNotPending] says there is none. It is how
// the page of an answer link says how its request ended.
func (d *Dispatcher) lookup(ctx context.Context, session SessionID, id string) (store.Record, error) {
	if d.own != nil {
		if rec, ok := d.own.lookup(session, id); ok {
			return rec, nil
		}
		return store.Record{}, wire.ErrNotPending
	}
	return d.store.Get(ctx, session, id)
}

// disconnected is told that the session's last device has gone. With
// [Options.FailOnDisconnect] it ends the session's questions as [Disconnected] once the
// grace period has passed with no device back; otherwise it does nothing.
func (d *Dispatcher) disconnected(session SessionID) {
	if !d.opts.FailOnDisconnect || !d.waiting(session) {
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
// shared [store.Store] they stay pending there, where another dispatcher sharing it (a replica
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
	d.closeEscalations()
	d.closeRequests()
	return nil
}

// inbound is the side of a dispatcher its transport calls, the [wire.Inbound] that New
// gives to the transport's Bind: the devices' events, the requests a joining device is
// shown, a session's last device gone, and how a request ended (for answer links).
type inbound Dispatcher

func (in *inbound) HandleEvent(ctx context.Context, ev wire.Event) error {
	return (*Dispatcher)(in).handleEvent(ctx, ev)
}

func (in *inbound) Pending(session SessionID) []wire.AskData {
	return (*Dispatcher)(in).pendingAsks(session)
}

func (in *inbound) PendingApprovals(session SessionID) []wire.ApprovalData {
	return (*Dispatcher)(in).pendingApprovals(session)
}

func (in *inbound) Disconnected(session SessionID) { (*Dispatcher)(in).disconnected(session) }

func (in *inbound) Lookup(ctx context.Context, session SessionID, id string) (store.Record, error) {
	return (*Dispatcher)(in).lookup(ctx, session, id)
}

// sessionTitle returns what Options.SessionTitle calls session, or "".
func (d *Dispatcher) sessionTitle(session SessionID) string {
	if d.opts.SessionTitle == nil {
		return ""
	}
	return d.opts.SessionTitle(session)
}
