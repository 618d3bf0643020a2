package askuser

import (
	"context"
	"fmt"
	"sync"
)

// ToolFunc is a host's tool dispatcher: it runs one tool call and returns its result.
type ToolFunc func(ctx context.Context, call ToolCall) (string, error)

// ToolOutput is how one tool call of a model's turn ended, as [Dispatcher.RunTools]
// returns it: what the model reads, and the error flag beside it.
type ToolOutput struct {
	// Call is the call as it was given; its ID passes back to the provider untouched.
	Call ToolCall
	// Content is the tool result for the model.
	Content string
	// IsError is the flag many LLM APIs take beside a tool result: set when the person
	// did not answer, when a gated call did not run, and when the host's tool failed.
	IsError bool
	// Err is nil when the call ended well. Otherwise it is the outcome's error when
	// askuser ended it without a result (no answer, not allowed to run: errors.Is finds
	// [ErrTimeout], [ErrDenied], ... in it, and Refused is set), or the host's tool's own
	// error.
	Err error
	// Refused says that askuser ended the call without a result (no answer, or not
	// allowed to run), as opposed to the host's tool failing.
	Refused bool
}

// RunTools runs the tool calls of one model turn, each on its own and all at once:
// ask_user_questions through [Dispatcher.Dispatch], and every other call through run,
// gated by [Options.Policy] through [Dispatcher.Approve], so that run runs only a call
// that may run, with the arguments it may run with. It returns when every call has
// ended, with one output per call in the order of calls. A call that needs no approval
// runs while a sibling waits for the person, and a sibling's denial or timeout loses no
// other call's result. When a tool of the host fails with no content, its error's text
// is the content. Should a tool of the host panic, RunTools panics with the same value in
// the caller's goroutine, once every other call has ended.
func (d *Dispatcher) RunTools(ctx context.Context, calls []ToolCall, run ToolFunc) []ToolOutput {
	out := make([]ToolOutput, len(calls))
	tool := d.wrap(run)
	var wg sync.WaitGroup
	var panicked sync.Once
	var panicValue any
	for i, c := range calls {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					panicked.Do(func() { panicValue = v })
				}
			}()
			content, err := tool(ctx, c)
			if err != nil && content == "" {
				content = err.Error()
			}
			if re, ok := err.(*resultError); ok {
				out[i] = ToolOutput{Call: c, Content: content, IsError: true, Err: re.err, Refused: true}
				return
			}
			out[i] = ToolOutput{Call: c, Content: content, IsError: err != nil, Err: err}
		})
	}
	wg.Wait()
	if panicValue != nil {
		panic(panicValue)
	}
	return out
}

// wrap returns the ToolFunc that runs one of [Dispatcher.RunTools]' calls: an
// ask_user_questions call through [Dispatcher.Dispatch], with no permission check in
// between (asking is not an action the person has to approve), and every other call
// through next: at once without [Options.Policy], and through the policy's gate with one
// ([Dispatcher.Approve]), so that next runs only a call that may run, with the arguments
// it may run with. The string is the tool result for the model; the error is a
// *resultError of the outcome's error when the call did not run ([Result.Err],
// [ApprovalResult.Err]), or next's own. Should next panic, the panic goes on to the
// caller, the call having ended for the observer as an error.
func (d *Dispatcher) wrap(next ToolFunc) ToolFunc {
	return func(ctx context.Context, call ToolCall) (string, error) {
		if call.Name == ToolName {
			res := d.Dispatch(ctx, call)
			if res.IsError() {
				return res.Content, &resultError{res.Err}
			}
			return res.Content, nil
		}
		if next == nil {
			return "", fmt.Errorf("askuser: no tool to run %q", call.Name)
		}
		if d.policy == nil {
			return next(ctx, call)
		}
		return d.gated(ctx, call, next)
	}
}
