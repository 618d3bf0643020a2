package askeino

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/google/uuid"
)

func init() {
	// Checkpoints keep interrupt infos and states as interface values, by name.
	schema.RegisterName[*Question]("askuser_askeino_question")
	schema.RegisterName[*State]("askuser_askeino_state")
	schema.RegisterName[*Resume]("askuser_askeino_resume")
	schema.RegisterName[*Approval]("askuser_askeino_approval")
	schema.RegisterName[*ApprovalState]("askuser_askeino_approval_state")
	schema.RegisterName[*ApprovalResume]("askuser_askeino_approval_resume")
}

// Question is the info of an [InterruptTool]'s interrupt: what the session's devices
// were asked, and its request id, by which a host can tell when it is answered (the
// dispatcher's observe.Observer is told of its end, under that id).
type Question struct {
	RequestID string
	Questions []askuser.Question
	Metadata  json.RawMessage
}

// State is the state an [InterruptTool] saves with its interrupt, in the checkpoint:
// the request id, so that the resumed run waits on the same question, and the
// arguments, to ask it again where it is no longer pending (a host restarted without a
// dispatcher that keeps questions across restarts).
type State struct {
	RequestID string
	Arguments string
}

// Resume is resume data a host may give an interrupted ask_user_questions call
// ([compose.ResumeWithData] with the interrupt's id): the person's answers obtained
// some other way, or their decline. They count as a device's: askuser checks them
// against the question, and the first answer wins. Without resume data, the resumed
// call waits for a device's answer.
type Resume struct {
	Answers  []askuser.Answer
	Declined bool
}

// InterruptTool is ask_user_questions as an Eino [tool.InvokableTool] for hosts that
// checkpoint their runs: the first run of a call asks the question on the session's
// devices and interrupts at once ([tool.StatefulInterrupt], with a [*Question] as the
// info and a [*State]); the host saves the checkpoint and later resumes the run; the
// resumed call returns the answer, waiting for it if it has not come yet, on the same
// request id, so that it never asks twice. Its methods may be called concurrently.
//
// The question is asked by the dispatcher with a context of its own, so it stays
// pending after the interrupted run returns, until it is answered, declined, times out
// or is cancelled. Its outcome is kept, in memory, until a resumed call takes it.
type InterruptTool struct {
	d     *askuser.Dispatcher
	opts  Options
	asked startedSet[askuser.Result]
}

var _ tool.InvokableTool = (*InterruptTool)(nil)

// NewInterruptTool returns the interrupting tool, asking through d. opts may be nil.
func NewInterruptTool(d *askuser.Dispatcher, opts *Options) *InterruptTool {
	return &InterruptTool{d: d, opts: opts.withDefaults()}
}

// Info returns [ToolInfo].
func (t *InterruptTool) Info(context.Context) (*schema.ToolInfo, error) { return ToolInfo() }

// InvokableRun runs one call, first or resumed:
//
//   - First run: invalid arguments get askuser's error result at once (nobody is asked,
//     nothing interrupts). Otherwise the question is asked, with the tool-call id of
//     the context as its request id (a random one when there is none, kept in the
//     State), and the run interrupts.
//   - Resumed as the target, with [*Resume] data: the data answers (or declines) the
//     question, then the call returns the outcome.
//   - Resumed as the target without data: the call returns the outcome, waiting for it.
//   - Re-run because another interrupt was resumed: the call returns the outcome when
//     there is one already, and otherwise interrupts again with the same question.
//
// Where the question is no longer pending and its outcome is not known here (the
// host restarted), it is asked again with the same request id: a dispatcher that keeps
// questions across restarts then joins the one asked before.
func (t *InterruptTool) InvokableRun(ctx context.Context, argumentsInJSON string, _ ...tool.Option) (string, error) {
	session := t.opts.Session(ctx)
	if session.IsZero() {
		return "", ErrNoSession
	}
	wasInterrupted, hasState, st := tool.GetInterruptState[*State](ctx)
	if !wasInterrupted || !hasState || st == nil {
		id := compose.GetToolCallID(ctx)
		if id == "" {
			id = uuid.NewString()
		}
		req, err := askuser.ParseArguments([]byte(argumentsInJSON))
		if err != nil {
			res := t.d.Dispatch(ctx, askuser.ToolCall{Session: session, ID: id, Name: askuser.ToolName, Arguments: json.RawMessage(argumentsInJSON)})
			return res.Content, nil
		}
		t.start(session, id, req)
		return "", interrupt(ctx, id, req, &State{RequestID: id, Arguments: argumentsInJSON})
	}

	req, err := askuser.ParseArguments([]byte(st.Arguments))
	if err != nil {
		return "", errors.New("askeino: the interrupt state's arguments are not valid: " + err.Error())
	}
	a := t.start(session, st.RequestID, req)
	isTarget, hasData, data := tool.GetResumeContext[*Resume](ctx)
	if !isTarget {
		select {
		case <-a.done:
			return t.asked.take(askKey{session, st.RequestID}, a).Content, nil
		default:
			return "", interrupt(ctx, st.RequestID, req, st)
		}
	}
	if hasData && data != nil {
		ev, err := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: st.RequestID, Answers: data.Answers, Declined: data.Declined})
		if err == nil {
			err = deliver(ctx, t.d, ev, a.done)
		}
		if err != nil && !errors.Is(err, wire.ErrNotPending) {
			return "", err
		}
	}
	select {
	case <-a.done:
		return t.asked.take(askKey{session, st.RequestID}, a).Content, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func interrupt(ctx context.Context, id string, req *askuser.Request, st *State) error {
	return tool.StatefulInterrupt(ctx, &Question{RequestID: id, Questions: req.Questions, Metadata: req.Metadata}, st)
}

// start asks the question unless this tool is already asking it, and returns it.
func (t *InterruptTool) start(session askuser.SessionID, id string, req *askuser.Request) *started[askuser.Result] {
	return t.asked.start(askKey{session, id}, func() askuser.Result {
		return dispatch(context.Background(), t.d, session, id, req)
	})
}

// dispatch asks req as the ask_user_questions call id of the session: req, parsed from
// a call, always encodes; should it not, the call is refused as invalid.
func dispatch(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, id string, req *askuser.Request) askuser.Result {
	args, _ := json.Marshal(req)
	return d.Dispatch(ctx, askuser.ToolCall{Session: session, ID: id, Name: askuser.ToolName, Arguments: args})
}
