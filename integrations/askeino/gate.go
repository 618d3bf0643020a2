package askeino

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/google/uuid"
)

// The gate: a host's own Eino tool behind askuser's approvals. Before the wrapped tool
// runs, the dispatcher's Policy allows the call, denies it, or asks the person, who
// approves, denies, edits the arguments or always allows it ([askuser.Dispatcher.Approve]).

// runApproved runs inner as r allows: with the arguments it may run with, its result
// given back as the model reads it (with the notice of an edit); or not at all, and
// then the refusal for the model, with a nil error. An error of inner is returned as it
// is.
func runApproved(ctx context.Context, inner tool.InvokableTool, r askuser.ApprovalResult, opts []tool.Option) (string, error) {
	if !r.Allowed() {
		return r.Content(""), nil
	}
	out, err := inner.InvokableRun(ctx, string(r.Arguments), opts...)
	if err != nil {
		return "", err
	}
	return r.Content(out), nil
}

// gateCall is the call of inner that a run makes: the session's, under id, with the
// tool's name from inner's Info.
func gateCall(ctx context.Context, inner tool.InvokableTool, session askuser.SessionID, id, arguments string) (askuser.ToolCall, error) {
	info, err := inner.Info(ctx)
	if err != nil {
		return askuser.ToolCall{}, err
	}
	return askuser.ToolCall{Session: session, ID: id, Name: info.Name, Arguments: json.RawMessage(arguments)}, nil
}

// Gate is a host's Eino tool behind the dispatcher's gate: a [tool.InvokableTool] that
// asks for approval, blocking, before the wrapped tool runs. Its methods may be called
// concurrently, as a ToolsNode calls them for the parallel calls of a turn: a call that
// needs no approval runs while a sibling waits for the person.
type Gate struct {
	d     *askuser.Dispatcher
	inner tool.InvokableTool
	opts  Options
}

var _ tool.InvokableTool = (*Gate)(nil)

// NewGate returns inner behind d's gate. opts may be nil. The dispatcher's
// [askuser.Options.Policy] decides which calls run, which are refused and which are
// asked about; without a Policy every call is asked about.
func NewGate(d *askuser.Dispatcher, inner tool.InvokableTool, opts *Options) *Gate {
	return &Gate{d: d, inner: inner, opts: opts.withDefaults()}
}

// Info returns the wrapped tool's Info.
func (g *Gate) Info(ctx context.Context) (*schema.ToolInfo, error) { return g.inner.Info(ctx) }

// InvokableRun decides the call ([askuser.Dispatcher.Approve]) on the devices of the
// run's session, waiting for the person when the Policy asks, and then runs the wrapped
// tool with the arguments it may run with (the model's, or the person's edit) and
// returns its result as the model reads it ([askuser.ApprovalResult.Content]: with the
// notice of an edit). A call that may not run (denied, timed out, cancelled, ...) does
// not reach the wrapped tool, and returns the refusal for the model with a nil error,
// since it is for the model to read. The error is non-nil when the context names no
// session ([ErrNoSession]) and when the wrapped tool fails.
//
// The approval's request id is the tool-call id of the context
// ([compose.GetToolCallID]); outside a ToolsNode there is none, and askuser makes a
// random one. The wrapped tool should not interrupt the run itself: a resumed run would
// ask for its approval again. A host that checkpoints uses [InterruptGate].
func (g *Gate) InvokableRun(ctx context.Context, argumentsInJSON string, opts ...tool.Option) (string, error) {
	session := g.opts.Session(ctx)
	if session.IsZero() {
		return "", ErrNoSession
	}
	call, err := gateCall(ctx, g.inner, session, compose.GetToolCallID(ctx), argumentsInJSON)
	if err != nil {
		return "", err
	}
	return runApproved(ctx, g.inner, g.d.Approve(ctx, call, nil), opts)
}

// Approval is the info of an [InterruptGate]'s interrupt: the tool call waiting for the
// person's decision on the session's devices, by its request id (which the
// dispatcher's observer (observe.Hooks.OnEnd, observe.Hooks.OnAudit) names when it is
// decided, and askuser.Dispatcher.Pending lists while it waits).
type Approval struct {
	RequestID string
	// Tool and Arguments are the call as the model made it.
	Tool      string
	Arguments string
}

// ApprovalState is the state an [InterruptGate] saves with its interrupt, in the
// checkpoint: the request id, so that the resumed run gets the same approval's
// decision, and the arguments, to ask again where the approval is no longer known.
type ApprovalState struct {
	RequestID string
	Arguments string
}

// ApprovalResume is resume data a host may give an interrupted call of an
// [InterruptGate] ([compose.ResumeWithData] with the interrupt's id): the person's
// decision obtained some other way. It counts as a device's: askuser checks it against
// the approval (a decision it offers; an edit its schema takes), and the first decision
// wins. Without resume data, the resumed call waits for a device's decision.
type ApprovalResume struct {
	// Decision is one of package wire's decisions: "approve", "deny", "edit" or "always".
	Decision string
	// Reason is the reason of a denial; Arguments the arguments of an edit.
	Reason    string
	Arguments json.RawMessage
	// By is who decided, for the audit record (observe.Audit.By).
	By string
}

// InterruptGate is a host's Eino tool behind the dispatcher's gate for hosts that
// checkpoint their runs. A call that the Policy (or a grant) decides at once runs, or is
// refused, at once. A call that waits for the person interrupts the run
// ([tool.StatefulInterrupt], with an [*Approval] as the info and an [*ApprovalState])
// once the approval is recorded and shown on the session's devices; the host saves the
// checkpoint and later resumes the run; the resumed call, under the same request id,
// gets the decision given meanwhile, waiting for it if none has come yet, and never
// asks twice. Its methods may be called concurrently.
//
// The approval is asked by the dispatcher with a context of its own, so it stays pending
// after the interrupted run returns, until it is decided, times out or is cancelled. Its
// decision is kept, in memory, until a resumed call takes it, so that a resume after the
// decision gets it even from a store that forgets ended requests. Where the approval is
// neither pending here nor known (the host restarted), the resumed call asks for it
// again with the same request id, tool and arguments: with a dispatcher whose store
// keeps approvals across restarts that joins the approval asked before, or gets its
// decision while the store keeps it; with a plain in-process dispatcher the devices are
// asked again.
type InterruptGate struct {
	d     *askuser.Dispatcher
	inner tool.InvokableTool
	opts  Options
	asked startedSet[askuser.ApprovalResult]
}

var _ tool.InvokableTool = (*InterruptGate)(nil)

// NewInterruptGate returns inner behind d's gate, interrupting for approvals. opts may
// be nil.
func NewInterruptGate(d *askuser.Dispatcher, inner tool.InvokableTool, opts *Options) *InterruptGate {
	return &InterruptGate{d: d, inner: inner, opts: opts.withDefaults()}
}

// Info returns the wrapped tool's Info.
func (g *InterruptGate) Info(ctx context.Context) (*schema.ToolInfo, error) {
	return g.inner.Info(ctx)
}

// InvokableRun runs one call, first or resumed:
//
//   - First run: the call is decided by the Policy, with the tool-call id of the
//     context as the approval's request id (a random one when there is none, kept in the
//     ApprovalState). Decided at once (allowed, denied, by a grant, invalid), it runs or
//     is refused at once; asked, the run interrupts once the approval is pending.
//   - Resumed as the target, with [*ApprovalResume] data: the data decides the approval,
//     then the call runs or is refused as decided.
//   - Resumed as the target without data: the call runs or is refused as decided,
//     waiting for the decision.
//   - Re-run because another interrupt was resumed: the call runs or is refused when
//     the approval is decided already, and otherwise interrupts again with the same
//     approval.
//
// As with [Gate], a refusal is a result for the model with a nil error, and the wrapped
// tool runs with the arguments it may run with. The wrapped tool should not interrupt
// the run itself.
func (g *InterruptGate) InvokableRun(ctx context.Context, argumentsInJSON string, opts ...tool.Option) (string, error) {
	session := g.opts.Session(ctx)
	if session.IsZero() {
		return "", ErrNoSession
	}
	wasInterrupted, hasState, st := tool.GetInterruptState[*ApprovalState](ctx)
	if !wasInterrupted || !hasState || st == nil {
		id := compose.GetToolCallID(ctx)
		if id == "" {
			id = uuid.NewString()
		}
		st = &ApprovalState{RequestID: id, Arguments: argumentsInJSON}
		call, err := gateCall(ctx, g.inner, session, id, argumentsInJSON)
		if err != nil {
			return "", err
		}
		a := g.start(call)
		decided, err := g.decidedOrPending(ctx, session, id, a)
		if err != nil {
			return "", err
		}
		if !decided {
			return "", approvalInterrupt(ctx, call, st)
		}
		return runApproved(ctx, g.inner, g.asked.take(askKey{session, id}, a), opts)
	}

	call, err := gateCall(ctx, g.inner, session, st.RequestID, st.Arguments)
	if err != nil {
		return "", err
	}
	a := g.start(call)
	k := askKey{session, st.RequestID}
	isTarget, hasData, data := tool.GetResumeContext[*ApprovalResume](ctx)
	if !isTarget {
		select {
		case <-a.done:
			return runApproved(ctx, g.inner, g.asked.take(k, a), opts)
		default:
			return "", approvalInterrupt(ctx, call, st)
		}
	}
	if hasData && data != nil {
		ev, err := wire.NewEvent(wire.EventApprovalResult, session, wire.ApprovalResultData{
			RequestID: st.RequestID, Decision: data.Decision, Reason: data.Reason, Arguments: data.Arguments,
		})
		if err == nil {
			ev.User = data.By
			err = deliver(ctx, g.d, ev, a.done)
		}
		if err != nil && !errors.Is(err, wire.ErrNotPending) {
			return "", err
		}
	}
	select {
	case <-a.done:
		return runApproved(ctx, g.inner, g.asked.take(k, a), opts)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func approvalInterrupt(ctx context.Context, call askuser.ToolCall, st *ApprovalState) error {
	return tool.StatefulInterrupt(ctx, &Approval{RequestID: call.ID, Tool: call.Name, Arguments: string(call.Arguments)}, st)
}

// start asks for the call's approval unless this gate is already asking for it, and
// returns it.
func (g *InterruptGate) start(call askuser.ToolCall) *started[askuser.ApprovalResult] {
	return g.asked.start(askKey{call.Session, call.ID}, func() askuser.ApprovalResult {
		return g.d.Approve(context.Background(), call, nil)
	})
}

// decidedOrPending waits until the call a is deciding is decided (true), or its approval
// is pending in the dispatcher's store, and so shown to the devices (false). Approve
// says neither, so the store is looked at, more and more rarely; a call the Policy
// decides at once returns as fast as Approve does.
func (g *InterruptGate) decidedOrPending(ctx context.Context, session askuser.SessionID, id string, a *started[askuser.ApprovalResult]) (bool, error) {
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		select {
		case <-a.done:
			return true, nil
		default:
		}
		if slices.ContainsFunc(g.d.Pending(session), func(r store.Record) bool { return r.Approval != nil && r.Approval.RequestID == id }) {
			return false, nil
		}
		select {
		case <-a.done:
			return true, nil
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(wait):
		}
	}
}
