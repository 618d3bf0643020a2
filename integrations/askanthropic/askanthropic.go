// Package askanthropic connects askuser to the Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2): it gives the ask_user_questions tool as
// an [anthropic.ToolParam] with strict tool use, and answers the model's tool_use blocks
// with tool_result blocks, is_error set for every call that gave no answer or result.
//
// [ToolResultBlocks] answers every tool_use of the turn: ask_user_questions asked on the
// person's devices, the host's own tools gated by the dispatcher's
// [askuser.Options.Policy] and run by the host's function.
//
//	params.Tools = append(params.Tools, askanthropic.Tool())
//	msg, err := client.Messages.New(ctx, params)
//	...
//	params.Messages = append(params.Messages, msg.ToParam())
//	blocks := askanthropic.ToolResultBlocks(ctx, d, session, msg, runTool) // blocks until every call has ended
//	params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
//
// A host that runs its other tools itself answers the ask_user_questions calls alone
// with [ToolResults], and adds its own tool_result blocks beside theirs:
//
//	results := askanthropic.ToolResults(ctx, d, session, msg) // blocks until answered
//	results = append(results, otherToolResults...)         // the host's other tools
//	params.Messages = append(params.Messages, anthropic.NewUserMessage(results...))
//
// The tool_use id passes through untouched: it becomes the question's or the approval's
// request id ([askuser.ToolCall.ID]), so a run resumed after a restart that makes the
// same call again joins the question or approval still pending instead of asking twice.
package askanthropic

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/askuser-go/askuser"
)

// ToolParam returns the ask_user_questions tool with its input schema in the
// [askuser.AnthropicStrict] dialect and Strict set, so that the API holds the model's
// input to the schema. The dialect is also valid without strict tool use: set Strict to
// anthropic.Bool(false) (or leave it unset) for a model that does not support it.
// Each call returns a fresh value.
func ToolParam() anthropic.ToolParam {
	def := askuser.Definition(askuser.AnthropicStrict)
	var schema map[string]any
	if err := json.Unmarshal(def.InputSchema, &schema); err != nil {
		panic("askanthropic: the askuser input schema is not a JSON object: " + err.Error())
	}
	in := anthropic.ToolInputSchemaParam{Properties: schema["properties"]}
	for _, r := range schema["required"].([]any) {
		in.Required = append(in.Required, r.(string))
	}
	delete(schema, "properties")
	delete(schema, "required")
	delete(schema, "type")  // ToolInputSchemaParam always writes "object"
	in.ExtraFields = schema // additionalProperties and title
	return anthropic.ToolParam{
		Name:        def.Name,
		Description: anthropic.String(def.Description),
		InputSchema: in,
		Strict:      anthropic.Bool(true),
	}
}

// Tool returns [ToolParam] as an element of [anthropic.MessageNewParams].Tools.
func Tool() anthropic.ToolUnionParam {
	p := ToolParam()
	return anthropic.ToolUnionParam{OfTool: &p}
}

// ToolResults runs every ask_user_questions tool_use block of msg through d, for the
// session's devices, and returns one tool_result block per call, in the order of the
// calls: the block's tool_use_id is the call's id, its content the tool result
// ([askuser.Result.Content]) as one text block, and is_error is set when the call ended
// without an answer ([askuser.Result.IsError]).
//
// The calls are asked at once, each as its own question, and ToolResults returns when
// every one has ended (answered, declined, timed out, cancelled, ...; see
// [askuser.Dispatcher.Dispatch]). Blocks of other tools are left to the host, whose
// tool_result blocks go in the same user message as these. A nil msg, or one without
// such a call, gives none. [ToolResultBlocks] answers every tool_use instead.
//
// The tool_use id is passed to Dispatch untouched as [askuser.ToolCall.ID]. The API
// always gives one; were it empty, the dispatcher would make a fresh request id (so a
// resumed run could not join the pending question) and the tool_result would carry the
// empty id back as it came.
func ToolResults(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, msg *anthropic.Message) []anthropic.ContentBlockParamUnion {
	if msg == nil {
		return nil
	}
	var calls []anthropic.ToolUseBlock
	for _, block := range msg.Content {
		if block.Type == "tool_use" && block.Name == askuser.ToolName {
			calls = append(calls, block.AsToolUse())
		}
	}
	out := make([]anthropic.ContentBlockParamUnion, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() {
			res := d.Dispatch(ctx, askuser.ToolCall{
				Session:   session,
				ID:        call.ID,
				Name:      call.Name,
				Arguments: call.Input,
			})
			out[i] = anthropic.NewToolResultBlock(call.ID, res.Content, res.IsError())
		})
	}
	wg.Wait()
	return out
}
