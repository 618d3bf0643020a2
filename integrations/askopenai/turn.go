package askopenai

import (
	"context"
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/askuser-go/askuser"
)

// The whole turn: every tool call of the model's message or response, the host's own
// tools gated by the dispatcher's Policy, through [askuser.Dispatcher.RunTools].

// customArguments is a custom tool's free-form input as the gate and the host's tool
// take it: a JSON string, so that the approval card shows it and an edit gives one back.
func customArguments(input string) json.RawMessage {
	b, _ := json.Marshal(input) // a string always encodes
	return b
}

// ChatToolResults runs every tool call of msg for the session, each on its own and all
// at once ([askuser.Dispatcher.RunTools]), and returns one tool message per call, in
// the order of the calls: its tool_call_id is the call's id, untouched, and its content
// what the model reads. ask_user_questions calls are asked on the session's devices; a
// call of any other tool is gated by the dispatcher's [askuser.Options.Policy] (denied,
// allowed, or waiting for the person's decision) and, when it may run, run by run with
// the arguments it may run with: the model's, or the person's edit. A call that needs
// no approval runs while a sibling waits for the person, and a denied call loses none
// of the others' results. A dispatcher without a Policy runs every call without asking.
// A message without tool calls gives none.
//
// Use ChatToolResults when the host has tools of its own: the tool messages it returns
// are all that follow the assistant message. [ChatToolMessages] answers the
// ask_user_questions calls alone, and leaves the other calls to the host.
//
// Chat Completions has no error flag beside a tool message: when a call did not run
// (denied, timed out, ...) or the person did not answer, the content is the error
// result itself ({"error": "The user denied this tool call; the tool did not run. ..."},
// ...; see [askuser.ApprovalResult.Content]), and when the host's tool fails with no
// content, its error's text; the model reads either as such.
//
// A custom tool's call reaches the gate and run with its free-form input as a JSON
// string.
func ChatToolResults(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, msg openai.ChatCompletionMessage, run askuser.ToolFunc) []openai.ChatCompletionMessageParamUnion {
	calls := make([]askuser.ToolCall, len(msg.ToolCalls))
	for i, tc := range msg.ToolCalls {
		calls[i] = askuser.ToolCall{Session: session, ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)}
		if tc.Type == "custom" {
			calls[i].Name, calls[i].Arguments = tc.Custom.Name, customArguments(tc.Custom.Input)
		}
	}
	outs := d.RunTools(ctx, calls, run)
	msgs := make([]openai.ChatCompletionMessageParamUnion, len(outs))
	for i, o := range outs {
		msgs[i] = openai.ToolMessage(o.Content, o.Call.ID)
	}
	return msgs
}

// ResponsesToolOutputs runs every function_call and custom_tool_call item of resp's
// output for the session, as [ChatToolResults] runs a message's tool calls, and returns
// one input item per call, in the order of the calls: a function_call_output (or a
// custom_tool_call_output) whose call_id is the call's, untouched, and whose output is
// what the model reads. Items of the tools that the API runs itself, and those of the
// computer, shell and patch tools, are left to the host. A nil resp, or one without
// such a call, gives none.
//
// Use ResponsesToolOutputs when the host has tools of its own; [ResponsesOutputs]
// answers the ask_user_questions calls alone. As in Chat Completions, an output has no
// error flag: the output of a call that did not run says so.
func ResponsesToolOutputs(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, resp *responses.Response, run askuser.ToolFunc) []responses.ResponseInputItemUnionParam {
	if resp == nil {
		return nil
	}
	var calls []askuser.ToolCall
	var custom []bool
	for _, item := range resp.Output {
		switch item.Type {
		case "function_call":
			fc := item.AsFunctionCall()
			calls = append(calls, askuser.ToolCall{Session: session, ID: fc.CallID, Name: fc.Name, Arguments: json.RawMessage(fc.Arguments)})
			custom = append(custom, false)
		case "custom_tool_call":
			cc := item.AsCustomToolCall()
			calls = append(calls, askuser.ToolCall{Session: session, ID: cc.CallID, Name: cc.Name, Arguments: customArguments(cc.Input)})
			custom = append(custom, true)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	outs := d.RunTools(ctx, calls, run)
	items := make([]responses.ResponseInputItemUnionParam, len(outs))
	for i, o := range outs {
		if custom[i] {
			items[i] = responses.ResponseInputItemUnionParam{OfCustomToolCallOutput: &responses.ResponseCustomToolCallOutputParam{
				CallID: o.Call.ID,
				Output: responses.ResponseCustomToolCallOutputOutputUnionParam{OfString: openai.String(o.Content)},
			}}
			continue
		}
		items[i] = responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: openai.String(o.Call.ID),
			Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(o.Content)},
		}}
	}
	return items
}
