package askgenai

import (
	"context"
	"encoding/json"

	"google.golang.org/genai"

	"github.com/askuser-go/askuser"
)

// TurnResponses runs every function call of turn, the model's content, for the
// session, each on its own and all at once ([askuser.Dispatcher.RunTools]), and returns
// one function response part per call, in the order of the calls. ask_user_questions
// calls are asked on the session's devices; a call of any other function is gated by
// the dispatcher's [askuser.Options.Policy] (denied, allowed, or waiting for the
// person's decision) and, when it may run, run by run with the arguments it may run
// with: the model's, or the person's edit. A call that needs no approval runs while a
// sibling waits for the person, and a denied call loses none of the others' results. A
// dispatcher without a Policy runs every call without asking. A nil turn, or one without
// a function call, gives none.
//
// Use TurnResponses when the host has functions of its own: its parts are all the user
// content after turn holds. [FunctionResponses] answers the ask_user_questions calls
// alone, and leaves the other calls to the host.
//
// Each response carries the call's id and name as they came (the id empty when the
// call had none), and as Response what the model reads, as Gemini tells a function's
// output from its error:
//
//   - a call that ended well: its result when that is a JSON object without an "error"
//     key ({"answers": [...]}, an edited call's {"notice": ..., "result": ...}, a
//     tool's own object), and otherwise {"output": the result} (as a JSON value when it
//     is one, else as a string);
//   - a call that gave no answer or result (the person declined or did not answer, the
//     call was denied, timed out, ..., or the host's function failed): the error result
//     when it is an object with an "error" key ({"error": "The user denied this tool
//     call; the tool did not run. ...", "reason": "..."}), and otherwise {"error": the
//     result}: the equivalent of an error flag.
//
// Calls are numbered as [FunctionResponses] numbers them: a call with an id runs under
// that id, one without under [CallID](turnID, i), its position among the function calls
// of the turn, so that a resumed run asks nothing twice. A call without arguments runs
// with {} (ask_user_questions without arguments is refused as such).
func TurnResponses(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, turnID string, turn *genai.Content, run askuser.ToolFunc) []*genai.Part {
	if turn == nil {
		return nil
	}
	var fcs []*genai.FunctionCall
	var calls []askuser.ToolCall
	for _, p := range turn.Parts {
		if p == nil || p.FunctionCall == nil {
			continue
		}
		fc := p.FunctionCall
		call := askuser.ToolCall{Session: session, ID: fc.ID, Name: fc.Name, Arguments: arguments(fc)}
		if call.ID == "" {
			call.ID = CallID(turnID, len(calls))
		}
		if fc.Args == nil && fc.Name != askuser.ToolName {
			call.Arguments = json.RawMessage("{}")
		}
		fcs = append(fcs, fc)
		calls = append(calls, call)
	}
	if len(calls) == 0 {
		return nil
	}
	outs := d.RunTools(ctx, calls, run)
	parts := make([]*genai.Part, len(outs))
	for i, o := range outs {
		parts[i] = &genai.Part{FunctionResponse: &genai.FunctionResponse{
			ID:       fcs[i].ID,
			Name:     fcs[i].Name,
			Response: turnResponse(o),
		}}
	}
	return parts
}

// turnResponse is a call's output as a FunctionResponse's Response, an error under
// "error", anything else as the function's output.
func turnResponse(o askuser.ToolOutput) map[string]any {
	var v any
	if err := json.Unmarshal([]byte(o.Content), &v); err != nil {
		v = o.Content
	}
	obj, _ := v.(map[string]any)
	_, hasError := obj["error"]
	switch {
	case o.IsError && hasError, !o.IsError && obj != nil && !hasError:
		return obj
	case o.IsError:
		return map[string]any{"error": v}
	}
	return map[string]any{"output": v}
}
