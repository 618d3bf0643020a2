package askuser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// NoDevicePolicy says what a call does when no device of the session is connected.
type NoDevicePolicy int

const (
	// WaitForDevice sends the question anyway and waits: a device that connects later is
	// shown it. The default.
	WaitForDevice NoDevicePolicy = iota
	// FailWithoutDevice ends the call at once as [Undelivered] with [ResultNoDevice]. It
	// needs a transport that implements [Presence]; with any other it acts as WaitForDevice.
	FailWithoutDevice
)

// DisconnectPolicy says what happens to a session's pending questions when its last
// device disconnects (the transport calls [Dispatcher.Disconnected]).
type DisconnectPolicy int

const (
	// KeepWaiting leaves them pending until answered on a device that reconnects, or until
	// they time out. The default, as in the original design.
	KeepWaiting DisconnectPolicy = iota
	// FailOnDisconnect ends them as [Disconnected] once [Options.DisconnectGrace] has passed
	// with no device back. Noticing a device that is back needs a transport that implements
	// [Presence]; with any other, the questions end when the grace period ends.
	FailOnDisconnect
)

// Options configure a [Dispatcher]. A nil *Options means all defaults; the zero value of
// each field means its default.
type Options struct {
	// Timeout is how long a question waits for the person. Default [DefaultTimeout] (5 minutes).
	Timeout time.Duration
	// NewRequestID makes a request id for a call that did not bring one (see
	// [ToolCall.ID]). It must return unguessable, unique ids: a device that knows a request
	// id of its own session can answer it. Default: a random (version 4) UUID.
	NewRequestID func() string
	// NoDevice says what to do when no device is connected. Default [WaitForDevice].
	NoDevice NoDevicePolicy
	// OnDisconnect says what to do when the last device goes. Default [KeepWaiting].
	OnDisconnect DisconnectPolicy
	// DisconnectGrace is how long [FailOnDisconnect] waits for a device to come back.
	// Zero fails at once.
	DisconnectGrace time.Duration
	// MaxCustomInput bounds an answer's free text, in characters. Default
	// [DefaultMaxCustomInput].
	MaxCustomInput int
	// OnAsk, when set, is called after a question set is sent to the session's devices.
	// It is called synchronously and must return quickly.
	OnAsk func(Asked)
	// OnEnd, when set, is called once for every question set that ends, however it ends,
	// including calls refused as [Invalid] or [Undelivered] before anything was sent. A
	// call that joined a pending question of the same id shares that question's OnEnd.
	// It is called synchronously, by the goroutine that ended the question, and must
	// return quickly.
	OnEnd func(Ended)
}

// Asked describes a question set just sent, for [Options.OnAsk].
type Asked struct {
	Session   SessionID
	RequestID string
	Questions int
	ExpiresAt time.Time
}

// Ended describes a question set that ended, for [Options.OnEnd].
type Ended struct {
	Session   SessionID
	RequestID string
	Outcome   Outcome
	// Waited is how long the question was pending; zero when it never was.
	Waited time.Duration
	Err    error
}

// Dispatcher runs ask_user_questions calls: it validates the model's arguments, sends the
// questions through its [Transport], waits for the first way the call can end, and
// returns the tool result. It implements [Inbound] for the transport's events.
// All methods may be called concurrently.
type Dispatcher struct {
	t        Transport
	presence Presence
	opts     Options
	reg      *Registry

	mu     sync.Mutex
	closed bool
	grace  map[SessionID]*time.Timer
}

// New returns a dispatcher that reaches devices through t. opts may be nil; it is copied.
// New panics when a duration or bound in opts is negative: zero means the default, and
// a negative value is a mistake better caught at start than guessed at.
func New(t Transport, opts *Options) *Dispatcher {
	d := &Dispatcher{t: t, grace: make(map[SessionID]*time.Timer)}
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
	}
	if d.opts.Timeout == 0 {
		d.opts.Timeout = DefaultTimeout
	}
	if d.opts.NewRequestID == nil {
		d.opts.NewRequestID = uuid.NewString
	}
	d.presence, _ = t.(Presence)
	d.reg = NewRegistry(d.opts.MaxCustomInput)
	d.reg.onEnd = d.ended
	return d
}

// ToolCall is one tool call of the model, as a host's agent loop sees it.
type ToolCall struct {
	// Session is the session the call belongs to; its devices are asked.
	Session SessionID
	// ID is the model's tool-call id. When set it becomes the requestId, so a call retried
	// with the same id while its question is pending waits on that question instead of
	// asking twice. When empty, a fresh id is made with [Options.NewRequestID].
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
	// RequestID is the question's request id ("" only for an invalid call without an ID).
	RequestID string
	// Answers are the person's validated answers when Outcome is [Answered].
	Answers []Answer
	// Problems lists what was wrong with the arguments when Outcome is [Invalid].
	Problems []string
	// Err is nil when Outcome is [Answered], and otherwise wraps the outcome's sentinel
	// ([ErrTimeout], [ErrCancelled], [ErrDeclined], [ErrUndelivered], [ErrDisconnected],
	// [ErrClosed], or an [*ArgumentsError]).
	Err error
}

// IsError reports whether the call ended without an answer: the flag many LLM APIs take
// beside a tool result.
func (r Result) IsError() bool { return r.Outcome != Answered }

// Dispatch runs one ask_user_questions call: it parses and validates call.Arguments (see
// [ParseArguments]) and, when they are valid, asks the session's devices and waits.
// Invalid arguments end the call at once with a result listing every problem, and no
// device is bothered. Dispatch always returns a result for the model; it never panics on
// bad input.
//
// A call whose ID names a question still pending joins it and gets its outcome, when it
// asks the same questions; when it asks different ones, it ends at once as [Invalid],
// with a problem saying that the id is taken, and the pending question is left as it is.
func (d *Dispatcher) Dispatch(ctx context.Context, call ToolCall) Result {
	req, err := ParseArguments(call.Arguments)
	if err != nil {
		return d.invalid(call.Session, call.ID, err)
	}
	return d.ask(ctx, call.Session, call.ID, req)
}

// Ask asks req, built in Go rather than by a model, with the same rules and outcomes as
// [Dispatcher.Dispatch]. id may be empty. Ask keeps its own copy of req: changing req
// afterwards changes nothing that devices are shown or answers are checked against.
func (d *Dispatcher) Ask(ctx context.Context, session SessionID, id string, req *Request) Result {
	own, err := req.validated()
	if err != nil {
		return d.invalid(session, id, err)
	}
	return d.ask(ctx, session, id, own)
}

// invalid ends a call refused before anything was asked; err is an [*ArgumentsError].
func (d *Dispatcher) invalid(session SessionID, id string, err error) Result {
	var problems []string
	if ae, ok := errors.AsType[*ArgumentsError](err); ok {
		problems = ae.Problems
	}
	res := Result{Content: invalidResult(problems), Outcome: Invalid, RequestID: id, Problems: problems, Err: err}
	if !utf8.ValidString(id) || len(id) > MaxRequestIDBytes {
		res.RequestID = ""
	}
	d.report(session, res, 0)
	return res
}

// errNoDevice marks an [Undelivered] call refused because no device was connected.
var errNoDevice = fmt.Errorf("%w: no device connected", ErrUndelivered)

// MaxRequestIDBytes bounds a request id: a tool-call id, or one made by
// [Options.NewRequestID].
const MaxRequestIDBytes = 256

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
			return d.invalid(session, "", &ArgumentsError{Problems: []string{"id: Options.NewRequestID returned an empty id, which no device could answer"}})
		}
	}
	if problem := requestIDProblem(id); problem != "" {
		return d.invalid(session, id, &ArgumentsError{Problems: []string{problem}})
	}
	if d.opts.NoDevice == FailWithoutDevice && d.presence != nil && !d.presence.Connected(session) {
		res := d.result(id, Resolution{Outcome: Undelivered, Err: errNoDevice})
		d.report(session, res, 0)
		return res
	}
	e, created, err := d.reg.Register(session, id, req, time.Now().Add(d.opts.Timeout))
	if errors.Is(err, errIDTaken) {
		return d.invalid(session, id, &ArgumentsError{Problems: []string{fmt.Sprintf(
			"id: the tool-call id %q is already asking different questions, which are still waiting for the user; ask these in a call with its own id", truncate(id, 64))}})
	}
	if err != nil {
		res := d.result(id, Resolution{Outcome: Shutdown, Err: err})
		d.report(session, res, 0)
		return res
	}
	if created {
		d.send(ctx, e)
	}
	return d.result(id, d.reg.Wait(ctx, e))
}

// send delivers the ask event; a failure ends the question as Undelivered.
func (d *Dispatcher) send(ctx context.Context, e *Entry) {
	a := e.AskData()
	ev, err := NewEvent(EventAsk, e.Session(), a)
	if err == nil {
		err = d.t.Send(ctx, ev)
	}
	if err != nil {
		// Nothing reached a device, so no resolution is announced either.
		d.reg.End(e, Resolution{Outcome: Undelivered, Err: fmt.Errorf("%w: %w", ErrUndelivered, err)})
		return
	}
	e.announce.Lock()
	e.askSent = true
	deferred := e.resolvedDeferred
	e.announce.Unlock()
	if deferred {
		d.announce(e, e.res) // the question ended while its ask was on its way
	}
	if d.opts.OnAsk != nil {
		d.opts.OnAsk(Asked{Session: e.Session(), RequestID: a.RequestID, Questions: len(a.Questions), ExpiresAt: a.ExpiresAt})
	}
}

// ended runs once for every registered question that ends, outside the registry's lock:
// it tells every device of the session, then the host's hook. A question can end before
// its ask event has been sent (a cancel, or an answer from a device that was shown it on
// connecting); its resolution is then announced by send, after the ask, so that no
// device ever sees a question after its end.
func (d *Dispatcher) ended(e *Entry, res Resolution) {
	e.announce.Lock()
	sent := e.askSent
	e.resolvedDeferred = !sent
	e.announce.Unlock()
	if sent {
		d.announce(e, res)
	}
	d.report(e.Session(), Result{Outcome: res.Outcome, RequestID: e.RequestID(), Err: res.Err}, time.Since(e.asked))
}

// announce sends the resolved event, with the answers of an answered question, to every
// device of the session.
func (d *Dispatcher) announce(e *Entry, res Resolution) {
	ev, err := NewEvent(EventResolved, e.Session(), ResolvedData{RequestID: e.RequestID(), Outcome: res.Outcome, Answers: res.Answers})
	if err == nil {
		// Best effort: a device that misses it is not shown the question again on reconnect.
		_ = d.t.Send(context.Background(), ev)
	}
}

func (d *Dispatcher) report(session SessionID, res Result, waited time.Duration) {
	if d.opts.OnEnd != nil {
		d.opts.OnEnd(Ended{Session: session, RequestID: res.RequestID, Outcome: res.Outcome, Waited: waited, Err: res.Err})
	}
}

// result renders a resolution as the model's tool result.
func (d *Dispatcher) result(id string, r Resolution) Result {
	res := Result{Outcome: r.Outcome, RequestID: id, Err: r.Err}
	switch r.Outcome {
	case Answered:
		res.Answers = r.Answers
		res.Content = string(encodeResponse(Response{Answers: r.Answers}))
	case Declined:
		res.Content = ResultDeclined
	case TimedOut:
		res.Content = ResultTimeout
	case Cancelled:
		res.Content = ResultCancelled
	case Undelivered:
		res.Content = ResultSendFailed
		if errors.Is(r.Err, errNoDevice) {
			res.Content = ResultNoDevice
		}
	case Disconnected:
		res.Content = ResultDisconnected
	default:
		res.Content = ResultShutdown
	}
	return res
}

// ToolFunc is a host's tool dispatcher: it runs one tool call and returns its result.
type ToolFunc func(ctx context.Context, call ToolCall) (string, error)

// Wrap returns a ToolFunc that routes ask_user_questions calls to d, with no permission
// check in between (asking is not an action the person has to approve), and passes
// every other call to next untouched. When next is nil, other tools get an error.
//
// For ask_user_questions the returned string is always the tool result for the model
// ([Result.Content]). The error is nil when the person answered; otherwise it is a
// [*ResultError] whose Error is that same content, so that a host that turns a tool's
// error into an error result for the model (is_error, say) sends exactly what askuser
// means either way.
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
		return next(ctx, call)
	}
}

// ResultError is the error of a call that ended without an answer, as [Dispatcher.Wrap]
// returns it. Its Error is the tool result for the model, and errors.Is finds the
// outcome's sentinel ([ErrTimeout], [ErrDeclined], ...) through it.
type ResultError struct {
	Result Result
}

// Error returns the tool result content.
func (e *ResultError) Error() string { return e.Result.Content }

// Unwrap returns the outcome's error, [Result.Err].
func (e *ResultError) Unwrap() error { return e.Result.Err }

// HandleEvent takes one event from a device of ev.SessionID, which the transport must
// have checked the device may act for. It takes [EventResult] events: answers, or
// {"requestId": ..., "declined": true}. It returns nil when the event was accepted; an
// [*AnswerError] when the answers are refused (the question stays open); [ErrNotPending]
// when no such question is pending; and errors wrapping [ErrMalformedEvent] or
// [ErrUnsupportedEvent] for anything else.
func (d *Dispatcher) HandleEvent(ctx context.Context, ev Event) error {
	if ev.Type != EventResult {
		return fmt.Errorf("%w: %q", ErrUnsupportedEvent, truncate(ev.Type, 64))
	}
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
	if data.Declined {
		if len(data.Answers) > 0 {
			return fmt.Errorf("%w: %s data: a decline carries no answers", ErrMalformedEvent, EventResult)
		}
		return d.reg.Decline(ev.SessionID, data.RequestID)
	}
	return d.reg.Answer(ev.SessionID, data.RequestID, data.Answers)
}

// CancelSession ends every pending question of the session as [Cancelled], so that each
// waiting call returns {"error": "Session cancelled"}, and returns how many it ended.
// Other sessions are not touched.
func (d *Dispatcher) CancelSession(session SessionID) int {
	return d.reg.CancelSession(session, Resolution{Outcome: Cancelled, Err: ErrCancelled})
}

// Waiting reports whether the session has a question waiting for the person: a host
// queues the person's new messages meanwhile (§6.5).
func (d *Dispatcher) Waiting(session SessionID) bool { return d.reg.Waiting(session) }

// Pending returns the session's pending questions, oldest first, as the data of their
// ask events: to show a device that connects, or to list what the person owes an answer.
// They are copies: changing them changes nothing pending.
func (d *Dispatcher) Pending(session SessionID) []AskData { return d.reg.Pending(session) }

// Disconnected tells the dispatcher that the session's last device has gone. It applies
// [Options.OnDisconnect]; with the default [KeepWaiting] it does nothing.
func (d *Dispatcher) Disconnected(session SessionID) {
	if d.opts.OnDisconnect != FailOnDisconnect || !d.reg.Waiting(session) {
		return
	}
	if d.opts.DisconnectGrace <= 0 {
		d.failDisconnected(session)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.grace[session] != nil {
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
	if d.presence != nil && d.presence.Connected(session) {
		return
	}
	d.reg.CancelSession(session, Resolution{Outcome: Disconnected, Err: ErrDisconnected})
}

// Close ends every pending question as [Shutdown] (each waiting call returns
// [ResultShutdown]) and makes later calls return it at once. It does not close the
// transport. Close may be called more than once.
func (d *Dispatcher) Close() error {
	d.mu.Lock()
	d.closed = true
	for s, t := range d.grace {
		t.Stop()
		delete(d.grace, s)
	}
	d.mu.Unlock()
	d.reg.Close()
	return nil
}
