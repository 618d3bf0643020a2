package askanthropic

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/askuser-go/askuser"
)

// ToolResultBlocks runs every tool_use block of msg for the session, each on its own and
// all at once ([askuser.Dispatcher.RunTools]), and returns one tool_result block per
// call, in the order of the calls: its tool_use_id is the call's id, untouched, its
// content what the model reads as one text block, and is_error set for every call that
// gave no answer or result (the person declined or did not answer, the call was denied
// or timed out, ...; and a host's tool that failed). ask_user_questions calls are asked
// on the session's devices; a call of any other tool is gated by the dispatcher's
// [askuser.Options.Policy] (denied, allowed, or waiting for the person's decision) and,
// when it may run, run by run with the arguments it may run with: the model's, or the
// person's edit. A call that needs no approval runs while a sibling waits for the
// person, and a denied call loses none of the others' results. A dispatcher without a
// Policy runs every call without asking. Blocks of the tools the API runs itself
// (server_tool_use) are not the host's and are left alone; a nil msg, or one without a
// tool_use block, gives none.
//
// The blocks are what the user message after msg holds:
//
//	params.Messages = append(params.Messages, msg.ToParam())
//	blocks := askanthropic.ToolResultBlocks(ctx, d, session, msg, runTool)
//	params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
//
// Use ToolResultBlocks when the host has tools of its own; [ToolResults] answers the
// ask_user_questions calls alone, and leaves the other calls to the host. A result
// with no content (a host's tool that returned "") is a tool_result without content,
// since the API refuses an empty text block; a tool_use of a toolset gets its
// toolset_name back.
func ToolResultBlocks(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, msg *anthropic.Message, run askuser.ToolFunc) []anthropic.ContentBlockParamUnion {
	if msg == nil {
		return nil
	}
	var uses []anthropic.ToolUseBlock
	var calls []askuser.ToolCall
	for _, block := range msg.Content {
		if block.Type == "tool_use" {
			use := block.AsToolUse()
			uses = append(uses, use)
			calls = append(calls, askuser.ToolCall{Session: session, ID: use.ID, Name: use.Name, Arguments: use.Input})
		}
	}
	if len(calls) == 0 {
		return nil
	}
	outs := d.RunTools(ctx, calls, run)
	blocks := make([]anthropic.ContentBlockParamUnion, len(outs))
	for i, o := range outs {
		result := anthropic.ToolResultBlockParam{ToolUseID: o.Call.ID, IsError: anthropic.Bool(o.IsError)}
		if o.Content != "" {
			result.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: o.Content}}}
		}
		if uses[i].ToolsetName != "" {
			result.ToolsetName = anthropic.String(uses[i].ToolsetName)
		}
		blocks[i] = anthropic.ContentBlockParamUnion{OfToolResult: &result}
	}
	return blocks
}
