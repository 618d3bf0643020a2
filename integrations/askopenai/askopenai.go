// Package askopenai connects askuser to the OpenAI Go SDK
// (github.com/openai/openai-go/v3), for both of its APIs: the ask_user_questions tool as
// a strict function tool, and the model's tool calls answered as that API expects.
//
// Chat Completions: [ChatTool] among the request's tools; [ChatToolResults] turns every
// tool call of the assistant message into a tool message: ask_user_questions asked on
// the person's devices, the host's own tools gated by the dispatcher's
// [askuser.Options.Policy] and run by the host's function.
//
//	params.Tools = append(params.Tools, askopenai.ChatTool())
//	completion, err := client.Chat.Completions.New(ctx, params)
//	...
//	msg := completion.Choices[0].Message
//	params.Messages = append(params.Messages, msg.ToParam())
//	params.Messages = append(params.Messages, askopenai.ChatToolResults(ctx, d, session, msg, runTool)...)
//
// Responses: [ResponsesTool] among the request's tools; [ResponsesToolOutputs] turns the
// response's function_call items into function_call_output items, in the same way.
//
//	resp, err := client.Responses.New(ctx, params)
//	...
//	params.PreviousResponseID = openai.String(resp.ID)
//	params.Input = responses.ResponseNewParamsInputUnion{
//		OfInputItemList: askopenai.ResponsesToolOutputs(ctx, d, session, resp, runTool),
//	}
//
// (A dispatcher without a Policy runs the host's tools without asking.) A host that runs
// its other tools itself answers the ask_user_questions calls alone with
// [ChatToolMessages] and [ResponsesOutputs], and adds its own results beside theirs.
//
// Each blocks until every call it runs has ended. The call id (tool_call_id, call_id)
// passes through untouched: it becomes the question's or the approval's request id
// ([askuser.ToolCall.ID]), so a run resumed after a restart that makes the same call
// again joins the question or approval still pending instead of asking twice.
//
// Neither API has an error flag beside a tool's output: when the person did not answer,
// or a call did not run (denied, timed out, ...), the output is the error result itself
// ({"error": "User declined to answer"}, {"error": "The user denied this tool call; the
// tool did not run. ..."}, ...; see [askuser.Result.Content] and
// [askuser.ApprovalResult.Content]), which the model reads as such.
//
// The tool's schema is the [askuser.OpenAIStrict] dialect, with "strict": true: under
// strict mode the model writes "preview": null on an option without a preview, and
// offers no "metadata".
package askopenai

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/askuser-go/askuser"
)

// parameters returns the OpenAI-strict input schema as the SDK takes it.
func parameters() map[string]any {
	var schema map[string]any
	if err := json.Unmarshal(askuser.Definition(askuser.OpenAIStrict).InputSchema, &schema); err != nil {
		panic("askopenai: the askuser input schema is not a JSON object: " + err.Error())
	}
	return schema
}

// ChatTool returns the ask_user_questions function tool for Chat Completions, with its
// parameters in the [askuser.OpenAIStrict] dialect and "strict": true. Each call returns
// a fresh value.
func ChatTool() openai.ChatCompletionToolUnionParam {
	def := askuser.Definition(askuser.OpenAIStrict)
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        def.Name,
		Description: openai.String(def.Description),
		Parameters:  parameters(),
		Strict:      openai.Bool(true),
	})
}

// ResponsesTool returns the ask_user_questions function tool for the Responses API,
// with its parameters in the [askuser.OpenAIStrict] dialect and "strict": true. Each
// call returns a fresh value.
func ResponsesTool() responses.ToolUnionParam {
	def := askuser.Definition(askuser.OpenAIStrict)
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:        def.Name,
		Description: openai.String(def.Description),
		Parameters:  parameters(),
		Strict:      openai.Bool(true),
	}}
}

// call is one ask_user_questions call of the model.
type call struct{ id, arguments string }

// dispatch asks every call at once, each as its own question, and returns the results
// in the order of the calls when every one has ended.
func dispatch(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, calls []call) []askuser.Result {
	out := make([]askuser.Result, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			out[i] = d.Dispatch(ctx, askuser.ToolCall{
				Session:   session,
				ID:        c.id,
				Name:      askuser.ToolName,
				Arguments: json.RawMessage(c.arguments),
			})
		})
	}
	wg.Wait()
	return out
}

// ChatToolMessages runs every ask_user_questions call among msg's tool calls through d,
// for the session's devices, and returns one tool message per call, in the order of the
// calls: its tool_call_id is the call's id and its content the tool result
// ([askuser.Result.Content]). The calls are asked at once, each as its own question.
// Calls of other tools are left to the host, whose tool messages follow the assistant
// message too, in any order. A message without such a call gives none. A host with
// tools of its own, to gate or not, can use [ChatToolResults] instead, which answers
// every call.
//
// The call id is passed to Dispatch untouched as [askuser.ToolCall.ID]. The API always
// gives one; were it empty, the dispatcher would make a fresh request id (so a resumed
// run could not join the pending question) and the tool message would carry the empty
// id back as it came.
func ChatToolMessages(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, msg openai.ChatCompletionMessage) []openai.ChatCompletionMessageParamUnion {
	var calls []call
	for _, tc := range msg.ToolCalls {
		if tc.Function.Name == askuser.ToolName { // a custom tool call has no Function
			calls = append(calls, call{id: tc.ID, arguments: tc.Function.Arguments})
		}
	}
	results := dispatch(ctx, d, session, calls)
	out := make([]openai.ChatCompletionMessageParamUnion, len(calls))
	for i, c := range calls {
		out[i] = openai.ToolMessage(results[i].Content, c.id)
	}
	return out
}

// ResponsesOutputs runs every ask_user_questions function_call item of resp's output
// through d, for the session's devices, and returns one function_call_output input item
// per call, in the order of the calls: its call_id is the call's call_id and its output
// the tool result ([askuser.Result.Content]). The calls are asked at once, each as its
// own question. Items of other tools are left to the host, whose outputs go in the same
// input. A nil resp, or one without such a call, gives none. [ResponsesToolOutputs]
// answers every function call instead.
//
// The call_id is passed to Dispatch untouched as [askuser.ToolCall.ID]; were it empty,
// the dispatcher would make a fresh request id and the output would carry the empty
// call_id back as it came.
func ResponsesOutputs(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, resp *responses.Response) []responses.ResponseInputItemUnionParam {
	if resp == nil {
		return nil
	}
	var calls []call
	for _, item := range resp.Output {
		if item.Type == "function_call" && item.Name == askuser.ToolName {
			fc := item.AsFunctionCall()
			calls = append(calls, call{id: fc.CallID, arguments: fc.Arguments})
		}
	}
	results := dispatch(ctx, d, session, calls)
	out := make([]responses.ResponseInputItemUnionParam, len(calls))
	for i, c := range calls {
		out[i] = responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: openai.String(c.id),
			Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(results[i].Content)},
		}}
	}
	return out
}
