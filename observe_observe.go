package askuser

import (
	"context"
	"encoding/json"
	"time"
)

// Observer is told of what happens to a dispatcher's calls and requests, and, given to a
// transport such as wshub's, to its devices: for traces, metrics and logs. The otel
// module's is one; [Hooks] is one of plain functions. Without an Observer nothing is
// built for it: it costs the calls nothing.
//
// The methods are called synchronously, from the goroutine where each thing happens
// (the caller's, a device's, a timer's), concurrently, and must return quickly.
type Observer interface {
	// Begin is called as a call comes to the dispatcher: an ask_user_questions call
	// ([Dispatcher.Dispatch], [Dispatcher.Ask]) or a tool call of the host's
	// ([Dispatcher.Approve], and the gated calls of [Dispatcher.Wrap], whose tool runs
	// within it). It returns the context the call goes on with (which carries its span,
	// say) and a function that is called once, as the call returns, with how it ended
	// (should host code within the call panic, with an error saying the call did not
	// return, as the panic goes on); the function may be nil.
	Begin(ctx context.Context, c CallInfo) (context.Context, func(CallEnd))
	// Observe is told of each thing that happens to a request or a device; o.What says
	// which. ctx is the caller's for what happens in a call (an ask sent), and the
	// device's or a timer's otherwise.
	Observe(ctx context.Context, o Observation)
	// Carrier returns what the store keeps of ctx's trace with a request made in it
	// ([Record.Carrier]), so that a dispatcher that ends the request elsewhere can link
	// to it; nil for nothing.
	Carrier(ctx context.Context) map[string]string
}

// CallInfo describes a call as it begins, for [Observer.Begin].
type CallInfo struct {
	Kind    Kind
	Session SessionID
	// ID is the model's tool-call id, "" when it gave none.
	ID string
	// Tool is the tool's name: ask_user_questions, or the host's tool.
	Tool string
	// Arguments are the call's arguments as the model wrote them (nil for [Dispatcher.Ask],
	// whose request is Go's). They are the person's business: an observer records them
	// only when its host says so.
	Arguments json.RawMessage
}

// CallEnd describes how a call ended, for the function [Observer.Begin] returns.
type CallEnd struct {
	// RequestID names the call's request, "" when none was made.
	RequestID string
	Outcome   Outcome
	// IsError is the error flag the model gets with the result.
	IsError bool
	// Err is the call's error: the outcome's, or the host tool's own.
	Err error
	// Content is the tool result the model reads; like Arguments, the person's business.
	Content string
}

// What is what an [Observation] is of.
type What int

const (
	// ObservedAsk: a request was sent to the session's devices (Questions, ExpiresAt).
	ObservedAsk What = iota + 1
	// ObservedEnd: a request ended, observed by the dispatcher that ended it, or a call
	// was refused before anything was asked (Outcome, Waited, Err).
	ObservedEnd
	// ObservedDecision: a gated tool call was decided (Audit).
	ObservedDecision
	// ObservedRefusal: a device's event was refused (Code), observed by the transport
	// that refused it.
	ObservedRefusal
	// ObservedNotice: the Notifier was called for a request.
	ObservedNotice
	// ObservedConnect and ObservedDisconnect: a device connected to, or left, the
	// transport, observed by the transport.
	ObservedConnect
	ObservedDisconnect
)

// Observation is one thing that happened, for [Observer.Observe]. Which fields are set
// depends on What, as its constants say; Session and Kind are set for all but
// connections, and RequestID whenever a request is concerned.
type Observation struct {
	What      What
	Session   SessionID
	RequestID string
	Kind      Kind
	Questions int
	ExpiresAt time.Time
	Outcome   Outcome
	// Waited is how long the request was pending; zero when it never was.
	Waited time.Duration
	Err    error
	Audit  *Audit
	// Code is a refusal's code, as the error event says it ("invalid_answer", ...).
	Code string
	// Carrier is the trace context kept with the request, when it was made with one.
	Carrier map[string]string
}

// Hooks is an [Observer] of plain functions, for a host that wants a few callbacks: a
// nil one is not called.
type Hooks struct {
	// OnAsk is called after a request is sent to the session's devices.
	OnAsk func(Asked)
	// OnEnd is called once for every request that ends, by the dispatcher that ended
	// it, however it ends, including calls refused as [Invalid] or [Undelivered] before
	// anything was asked. A call that joined a pending request shares that request's.
	OnEnd func(Ended)
	// OnAudit is called once for every decision on a gated tool call: by a rule, by a
	// grant, or by the person (or the clock) on an approval, by the dispatcher that
	// recorded it.
	OnAudit func(Audit)
}

// Asked describes a request just sent, for [Hooks.OnAsk].
type Asked struct {
	Session   SessionID
	RequestID string
	Kind      Kind
	// Questions is how many questions a question set asks; 0 for an approval.
	Questions int
	ExpiresAt time.Time
}

// Ended describes a request that ended, for [Hooks.OnEnd].
type Ended struct {
	Session   SessionID
	RequestID string
	Kind      Kind
	Outcome   Outcome
	// Waited is how long the request was pending; zero when it never was.
	Waited time.Duration
	Err    error
}

// Begin returns ctx: Hooks has no spans.
func (h Hooks) Begin(ctx context.Context, _ CallInfo) (context.Context, func(CallEnd)) {
	return ctx, nil
}

// Observe calls the hook of o.What, if set.
func (h Hooks) Observe(_ context.Context, o Observation) {
	switch {
	case o.What == ObservedAsk && h.OnAsk != nil:
		h.OnAsk(Asked{Session: o.Session, RequestID: o.RequestID, Kind: o.Kind, Questions: o.Questions, ExpiresAt: o.ExpiresAt})
	case o.What == ObservedEnd && h.OnEnd != nil:
		h.OnEnd(Ended{Session: o.Session, RequestID: o.RequestID, Kind: o.Kind, Outcome: o.Outcome, Waited: o.Waited, Err: o.Err})
	case o.What == ObservedDecision && h.OnAudit != nil && o.Audit != nil:
		h.OnAudit(*o.Audit)
	}
}

// Carrier returns nil: Hooks keeps no trace.
func (h Hooks) Carrier(context.Context) map[string]string { return nil }

// Audit is the record of one decision on a gated tool call, for the [Observer] (and
// [Hooks.OnAudit]): what
// was asked, what was decided, by whom or by which rule, and when.
type Audit struct {
	Session SessionID
	// RequestID is the approval's request id; "" when no person was asked.
	RequestID string
	// Tool and Arguments are the call as the model made it, the arguments compacted (as
	// a JSON string of what the model wrote when that is not JSON).
	Tool      string
	Arguments json.RawMessage
	// Description is what the approval card said of the tool; "" when no person was
	// asked.
	Description string
	// Outcome is how the call was decided: [Approved], [Edited], [Denied], or why no
	// decision came ([TimedOut], [Cancelled], ...).
	Outcome Outcome
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
	Grant *Grant
	// AskedAt is when the call came to the gate; DecidedAt when it was decided.
	AskedAt, DecidedAt time.Time
	// By is who decided: the principal the transport authenticated the device as; ""
	// when no person decided, or the transport names none.
	By string
	// Via is how the person's decision came: "" from a device, "link" from an answer or
	// action link.
	Via string
}
