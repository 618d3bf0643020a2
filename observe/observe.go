package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// Observer is told of what happens to a dispatcher's calls and requests, and, given to a
// transport such as wshub's, to its devices: for traces, metrics and logs. The askotel
// module's is one; [Log] writes to a [slog.Logger]; [Hooks] is one of plain functions;
// [Join] makes one of several. Without an Observer nothing is built for it: it costs the
// calls nothing.
//
// The methods are called synchronously, from the goroutine where each thing happens
// (the caller's, a device's, a timer's), concurrently, and must return quickly.
type Observer interface {
	// Begin is called as a call comes to the dispatcher: an ask_user_questions call
	// (askuser's Dispatcher.Dispatch) or a tool call of the host's (Dispatcher.Approve,
	// and the gated calls of Dispatcher.RunTools, whose tool runs within it). It returns
	// the context the call goes on with (which carries its span, say) and a function that is called once, as the call returns, with how it ended
	// (should host code within the call panic, with an error saying the call did not
	// return, as the panic goes on); the function may be nil.
	Begin(ctx context.Context, c CallInfo) (context.Context, func(CallEnd))
	// Observe is told of each thing that happens to a request or a device; o.Event says
	// which. ctx is the caller's for what happens in a call (an ask sent), and the
	// device's or a timer's otherwise.
	Observe(ctx context.Context, o Observation)
	// Carrier returns what the store keeps of ctx's trace with a request made in it
	// ([store.Record.Carrier]), so that a dispatcher that ends the request elsewhere can link
	// to it; nil for nothing.
	Carrier(ctx context.Context) map[string]string
}

// CallInfo describes a call as it begins, for [Observer.Begin].
type CallInfo struct {
	Kind    store.Kind
	Session wire.SessionID
	// ID is the model's tool-call id, "" when it gave none.
	ID string
	// Tool is the tool's name: ask_user_questions, or the host's tool.
	Tool string
	// Arguments are the call's arguments as the model wrote them. They are the person's
	// business: an observer records them only when its host says so.
	Arguments json.RawMessage
}

// CallEnd describes how a call ended, for the function [Observer.Begin] returns.
type CallEnd struct {
	// RequestID names the call's request, "" when none was made.
	RequestID string
	Outcome   wire.Outcome
	// IsError is the error flag the model gets with the result.
	IsError bool
	// Err is the call's error: the outcome's, or the host tool's own.
	Err error
	// Content is the tool result the model reads; like Arguments, the person's business.
	Content string
}

// Event is what an [Observation] is of.
type Event int

const (
	// Asked: a request was sent to the session's devices (Questions, ExpiresAt).
	Asked Event = iota + 1
	// Ended: a request ended, observed by the dispatcher that ended it, or a call was
	// refused before anything was asked (Outcome, Waited, Err).
	Ended
	// Decided: a gated tool call was decided (Audit).
	Decided
	// Refused: a device's event was refused (Code, Err), observed by the transport that
	// refused it.
	Refused
	// Notified: the Notifier was called for a request.
	Notified
	// Connected and Disconnected: a device connected to, or left, the transport,
	// observed by the transport.
	Connected
	Disconnected
	// Failed: the store failed to record or to end a request (Err, and Outcome when
	// ending); the call ends as its outcome says all the same.
	Failed
	// Progressed: an approval that needs several approvals recorded one, or an edit,
	// and stays pending (Audit: that step, its Decision, By, Via and DecidedAt, and
	// Approvals so far; Outcome zero). Its end is Decided, as every approval's.
	Progressed
	// Escalated: an approval's escalation step fired, observed by the dispatcher that
	// fired it, once across the dispatchers sharing its store (To: the people the step
	// added; ExpiresAt).
	Escalated
)

// String returns the event's name: "asked", "ended", "decided", and so on.
func (e Event) String() string {
	names := [...]string{"asked", "ended", "decided", "refused", "notified", "connected", "disconnected", "failed", "progressed", "escalated"}
	if e < Asked || e > Escalated {
		return fmt.Sprintf("Event(%d)", int(e))
	}
	return names[e-Asked]
}

// Observation is one thing that happened, for [Observer.Observe]. Which fields are set
// depends on Event, as its constants say; Session and Kind are set for all but
// connections, and RequestID whenever a request is concerned.
type Observation struct {
	Event     Event
	Session   wire.SessionID
	RequestID string
	Kind      store.Kind
	// Questions is how many questions a question set asks; 0 for an approval.
	Questions int
	ExpiresAt time.Time
	Outcome   wire.Outcome
	// Waited is how long the request was pending; zero when it never was.
	Waited time.Duration
	Err    error
	Audit  *Audit
	// Code is a refusal's code, as the error event says it ("invalid_answer", ...).
	Code string
	// Carrier is the trace context kept with the request, when it was made with one.
	Carrier map[string]string
	// To, for Escalated, names the people the step added: its users, then its groups.
	To []string
}

// Hooks is an [Observer] of plain functions, for a host that wants a few callbacks: a
// nil one is not called.
type Hooks struct {
	// OnAsk is called after a request is sent to the session's devices (an [Asked]
	// observation).
	OnAsk func(Observation)
	// OnEnd is called once for every request that ends (an [Ended] observation), by the
	// dispatcher that ended it, however it ends, including calls refused as
	// [wire.Invalid] or [wire.Undelivered] before anything was asked. A call that joined
	// a pending request shares that request's.
	OnEnd func(Observation)
	// OnAudit is called once for every decision on a gated tool call: by a rule, by a
	// grant, or by the person (or the clock) on an approval, by the dispatcher that
	// recorded it.
	OnAudit func(Audit)
}

// Begin returns ctx: Hooks has no spans.
func (h Hooks) Begin(ctx context.Context, _ CallInfo) (context.Context, func(CallEnd)) {
	return ctx, nil
}

// Observe calls the hook of o.Event, if set.
func (h Hooks) Observe(_ context.Context, o Observation) {
	switch {
	case o.Event == Asked && h.OnAsk != nil:
		h.OnAsk(o)
	case o.Event == Ended && h.OnEnd != nil:
		h.OnEnd(o)
	case o.Event == Decided && h.OnAudit != nil && o.Audit != nil:
		h.OnAudit(*o.Audit)
	}
}

// Carrier returns nil: Hooks keeps no trace.
func (h Hooks) Carrier(context.Context) map[string]string { return nil }

// Log returns an [Observer] that logs to l: each request's life at debug level, each
// decision on a gated tool call at info level, and refused device events and failures
// of the store at warn level, with attributes named as the metrics name them
// (askuser.request.kind, askuser.outcome, askuser.refusal.code, ...).
func Log(l *slog.Logger) Observer { return logger{l} }

type logger struct{ l *slog.Logger }

func (logger) Begin(ctx context.Context, _ CallInfo) (context.Context, func(CallEnd)) {
	return ctx, nil
}

func (logger) Carrier(context.Context) map[string]string { return nil }

func (g logger) Observe(ctx context.Context, o Observation) {
	switch o.Event {
	case Asked:
		g.l.LogAttrs(ctx, slog.LevelDebug, "askuser: request asked", requestAttrs(o,
			slog.Time("askuser.request.expires_at", o.ExpiresAt))...)
	case Ended:
		attrs := requestAttrs(o, slog.String("askuser.outcome", o.Outcome.String()), slog.Duration("askuser.request.waited", o.Waited))
		if o.Err != nil && o.Outcome != wire.Answered && o.Outcome != wire.Approved && o.Outcome != wire.Edited {
			attrs = append(attrs, slog.String("error", o.Err.Error()))
		}
		g.l.LogAttrs(ctx, slog.LevelDebug, "askuser: request ended", attrs...)
	case Decided, Progressed:
		if a := o.Audit; a != nil {
			msg := "askuser: tool call decided"
			if o.Event == Progressed {
				msg = "askuser: tool call approval recorded"
			}
			g.l.LogAttrs(ctx, slog.LevelInfo, msg, requestAttrs(o,
				slog.String("askuser.tool", a.Tool), slog.String("askuser.outcome", a.Outcome.String()),
				slog.String("askuser.decision", a.Decision), slog.String("askuser.rule", a.Rule),
				slog.String("askuser.decided_by", a.By), slog.String("askuser.via", a.Via),
				slog.String("askuser.reason", a.Reason))...)
		}
	case Escalated:
		g.l.LogAttrs(ctx, slog.LevelInfo, "askuser: tool call approval escalated", requestAttrs(o,
			slog.Any("askuser.escalated_to", o.To))...)
	case Refused:
		attrs := []slog.Attr{slog.String("askuser.refusal.code", o.Code),
			slog.String("askuser.session", o.Session.String()), slog.String("askuser.request.id", o.RequestID)}
		if o.Err != nil {
			attrs = append(attrs, slog.String("error", o.Err.Error()))
		}
		g.l.LogAttrs(ctx, slog.LevelWarn, "askuser: device event refused", attrs...)
	case Failed:
		attrs := requestAttrs(o)
		if o.Outcome != 0 {
			attrs = append(attrs, slog.String("askuser.outcome", o.Outcome.String()))
		}
		if o.Err != nil {
			attrs = append(attrs, slog.String("error", o.Err.Error()))
		}
		g.l.LogAttrs(ctx, slog.LevelWarn, "askuser: the store failed", attrs...)
	}
}

// requestAttrs are the attributes of a request in the logs, named as the metrics name
// them, then extra.
func requestAttrs(o Observation, extra ...slog.Attr) []slog.Attr {
	return append([]slog.Attr{
		slog.String("askuser.request.kind", o.Kind.String()),
		slog.String("askuser.session", o.Session.String()),
		slog.String("askuser.request.id", o.RequestID),
	}, extra...)
}

// Join returns an [Observer] that tells each of obs, in order, of everything (nil ones
// left out): Begin goes through them in turn, each given the context the one before
// returned, and the function it returns calls theirs in the reverse order; Carrier is
// the first non-nil carrier. Join of no observer is nil, and of one is that one.
func Join(obs ...Observer) Observer {
	var j joined
	for _, o := range obs {
		if o != nil {
			j = append(j, o)
		}
	}
	switch len(j) {
	case 0:
		return nil
	case 1:
		return j[0]
	}
	return j
}

type joined []Observer

func (j joined) Begin(ctx context.Context, c CallInfo) (context.Context, func(CallEnd)) {
	var ends []func(CallEnd)
	for _, o := range j {
		var end func(CallEnd)
		if ctx, end = o.Begin(ctx, c); end != nil {
			ends = append(ends, end)
		}
	}
	if len(ends) == 0 {
		return ctx, nil
	}
	return ctx, func(e CallEnd) {
		for i := len(ends) - 1; i >= 0; i-- {
			ends[i](e)
		}
	}
}

func (j joined) Observe(ctx context.Context, o Observation) {
	for _, ob := range j {
		ob.Observe(ctx, o)
	}
}

func (j joined) Carrier(ctx context.Context) map[string]string {
	for _, o := range j {
		if c := o.Carrier(ctx); c != nil {
			return c
		}
	}
	return nil
}

// Audit is the record of one decision on a gated tool call, for the [Observer] (and
// [Hooks.OnAudit]): what was asked, what was decided, by whom or by which rule, and
// when.
type Audit struct {
	Session wire.SessionID
	// RequestID is the approval's request id; "" when no person was asked.
	RequestID string
	// Tool and Arguments are the call as the model made it, the arguments compacted (as
	// a JSON string of what the model wrote when that is not JSON).
	Tool      string
	Arguments json.RawMessage
	// Description is what the approval card said of the tool; "" when no person was
	// asked.
	Description string
	// Outcome is how the call was decided: [wire.Approved], [wire.Edited], [wire.Denied], or why no
	// decision came ([wire.TimedOut], [wire.Cancelled], ...).
	Outcome wire.Outcome
	// Decision is the person's decision ("approve", "deny", "edit", "always"); "" when
	// none made it.
	Decision string
	// Reason is the reason of a denial.
	Reason string
	// Edited are the arguments the tool runs with when the person edited them.
	Edited json.RawMessage
	// Rule is the rule that decided, when no person did ("default" for the Policy's
	// Default); "" otherwise.
	Rule string
	// Grant is the grant that allowed the call without asking, or that an "always"
	// decision made.
	Grant *store.Grant
	// AskedAt is when the call came to the gate; DecidedAt when it was decided.
	AskedAt, DecidedAt time.Time
	// By is who decided: the principal the transport authenticated the device as; ""
	// when no person decided, or the transport names none.
	By string
	// Via is how the person's decision came: "" from a device, "link" from an answer or
	// action link.
	Via string
	// Approvals are the approvals recorded of an approval that needed several (see
	// askuser.Approvers), every step with who, when and on which arguments' digest;
	// nil otherwise.
	Approvals []store.Approval
}
