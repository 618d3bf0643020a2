package askopenai_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askopenai"
	"github.com/askuser-go/askuser/internal/paneltest"
	"github.com/askuser-go/askuser/wire"
)

// A turn of three calls of the host's tools, over the SDK's client: the follow-up
// request carries one tool message per call, in the order of the calls, each with its
// call's id and its exact result: list_files's output, ran while write_file waited for
// the person; write_file's result with the notice of the person's edit, or the person's
// denial with its reason, losing neither sibling's result; drop_table's denial by the
// Policy. The contents say it all: Chat Completions has no error flag.
func TestChatToolResultsGatedTurn(t *testing.T) {
	const (
		listID  = "call_8fKq2LrX0aNd3TzYw1VbQe7M"
		writeID = "call_R4mWc9sJpT6yHn0uLx2GdA5k"
		dropID  = "call_Zb3Vh7QeN1oKy5fCj8wMs0Ui"
	)
	paneltest.EachDecision(t, askuser.IntSession(session), func(t *testing.T, g paneltest.GatedTurn) {
		api := newFakeAPI(t, "testdata/chat_gated.json", "/chat/completions")
		final := converseChatTurn(t, api, func(ctx context.Context, msg openai.ChatCompletionMessage) []openai.ChatCompletionMessageParamUnion {
			return askopenai.ChatToolResults(ctx, g.D, askuser.IntSession(session), msg, g.Host.Run)
		})

		msgs := api.request(t, 1)["messages"].([]any)
		if len(msgs) != 6 {
			t.Fatalf("%d messages, want system, user, assistant and three tool messages", len(msgs))
		}
		want := []any{
			map[string]any{"role": "tool", "tool_call_id": listID, "content": paneltest.ListFilesOutput},
			map[string]any{"role": "tool", "tool_call_id": writeID, "content": g.Written},
			map[string]any{"role": "tool", "tool_call_id": dropID, "content": paneltest.DropTableDenied},
		}
		if !reflect.DeepEqual(msgs[3:], want) {
			t.Errorf("tool messages on the wire:\n%s\nwant:\n%s", mustJSON(t, msgs[3:]), mustJSON(t, want))
		}
		g.Check(t, listID, writeID)
		if !strings.HasPrefix(final.Choices[0].Message.Content, "I wrote the settings page") { // the recording's
			t.Errorf("final message %q", final.Choices[0].Message.Content)
		}
	})
}

// The same turns over the Responses API: one function_call_output per function_call,
// in order, each with its call_id and its exact output.
func TestResponsesToolOutputsGatedTurn(t *testing.T) {
	const (
		listID  = "call_Lw5nT8qP2xVe7RkA0sHjC3Ud"
		writeID = "call_Gm1yK6dQ9bFz4XoW3tNcE8Pi"
		dropID  = "call_Vs0aJ2hR7cMu5LqY9eTgB4Zn"
	)
	paneltest.EachDecision(t, askuser.IntSession(session), func(t *testing.T, g paneltest.GatedTurn) {
		api := newFakeAPI(t, "testdata/responses_gated.json", "/responses")
		final := converseResponsesTurn(t, api, func(ctx context.Context, resp *responses.Response) []responses.ResponseInputItemUnionParam {
			return askopenai.ResponsesToolOutputs(ctx, g.D, askuser.IntSession(session), resp, g.Host.Run)
		})

		req := api.request(t, 1)
		want := []any{
			map[string]any{"type": "function_call_output", "call_id": listID, "output": paneltest.ListFilesOutput},
			map[string]any{"type": "function_call_output", "call_id": writeID, "output": g.Written},
			map[string]any{"type": "function_call_output", "call_id": dropID, "output": paneltest.DropTableDenied},
		}
		if !reflect.DeepEqual(req["input"], want) || req["previous_response_id"] != "resp_67ccd31a0e448190a0e2b6c8d1e4f5060bb6a6b452d3795b" {
			t.Errorf("follow-up on the wire:\n%s\nwant the input:\n%s", mustJSON(t, req), mustJSON(t, want))
		}
		g.Check(t, listID, writeID)
		if !strings.HasPrefix(final.OutputText(), "I wrote the settings page") { // the recording's
			t.Errorf("final output %q", final.OutputText())
		}
	})
}

// approveAll is a device's decision on every approval: approve it.
func approveAll(a wire.ApprovalData) *wire.ApprovalResultData {
	return &wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionApprove, Digest: a.Digest}
}

// A turn mixing a question, a custom tool's call and a call the Policy denies: each
// gets its result, in order and under its id; the custom tool's input reaches the host
// as a JSON string; a tool that fails gives its error's text.
func TestChatToolResultsMixedTurn(t *testing.T) {
	host := paneltest.NewHost()
	d, asked, _ := paneltest.NewGated(t, askuser.IntSession(session), &askuser.Options{Policy: paneltest.Policy()}, paneltest.Pick("SQLite"), approveAll)
	var msg openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":null,"refusal":null,"annotations":[],"tool_calls":[
		{"id":"call_db","type":"function","function":{"name":"ask_user_questions","arguments":`+string(mustJSON(t, dbArguments))+`}},
		{"id":"call_sh","type":"custom","custom":{"name":"shell","input":"ls -la web/"}},
		{"id":"call_drop","type":"function","function":{"name":"drop_table","arguments":"{\"table\":\"t\"}"}}]}`), &msg); err != nil {
		t.Fatal(err)
	}
	got := jsonValue(t, askopenai.ChatToolResults(context.Background(), d, askuser.IntSession(session), msg, host.Run))
	want := []any{
		map[string]any{"role": "tool", "tool_call_id": "call_db", "content": `{"answers":[{"question":"Which database should we use?","selectedLabels":["SQLite"],"customInput":null}]}`},
		map[string]any{"role": "tool", "tool_call_id": "call_sh", "content": "no such tool: shell"},
		map[string]any{"role": "tool", "tool_call_id": "call_drop", "content": paneltest.DropTableDenied},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tool messages:\n%s\nwant:\n%s", mustJSON(t, got), mustJSON(t, want))
	}
	if ask := <-asked; ask.RequestID != "call_db" {
		t.Errorf("asked under %q", ask.RequestID)
	}
	if ran := host.Ran(); len(ran) != 1 || ran[0].ID != "call_sh" || string(ran[0].Arguments) != `"ls -la web/"` {
		t.Errorf("the host ran %+v, want the custom tool with its input as a JSON string", ran)
	}
	if none := askopenai.ChatToolResults(context.Background(), d, askuser.IntSession(session), openai.ChatCompletionMessage{Content: "hi"}, host.Run); len(none) != 0 {
		t.Errorf("a message without a call gave %v", none)
	}
}

// A custom_tool_call item gets a custom_tool_call_output; items that are no call of the
// host's are left alone.
func TestResponsesToolOutputsCustomCall(t *testing.T) {
	host := paneltest.NewHost()
	d, _, _ := paneltest.NewGated(t, askuser.IntSession(session), &askuser.Options{Policy: paneltest.Policy()}, paneltest.Pick(), approveAll)
	var resp responses.Response
	if err := json.Unmarshal([]byte(`{"id":"resp_1","object":"response","status":"completed","output":[
		{"type":"reasoning","id":"rs_1","summary":[]},
		{"type":"custom_tool_call","id":"ctc_1","call_id":"call_sh","name":"shell","input":"ls"},
		{"type":"function_call","id":"fc_1","call_id":"call_ls","name":"list_files","arguments":"{\"dir\":\"web\"}","status":"completed"}]}`), &resp); err != nil {
		t.Fatal(err)
	}
	got := jsonValue(t, askopenai.ResponsesToolOutputs(context.Background(), d, askuser.IntSession(session), &resp, host.Run))
	want := []any{
		map[string]any{"type": "custom_tool_call_output", "call_id": "call_sh", "output": "no such tool: shell"},
		map[string]any{"type": "function_call_output", "call_id": "call_ls", "output": paneltest.ListFilesOutput},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outputs:\n%s\nwant:\n%s", mustJSON(t, got), mustJSON(t, want))
	}
	if none := askopenai.ResponsesToolOutputs(context.Background(), d, askuser.IntSession(session), nil, host.Run); none != nil {
		t.Errorf("a nil response gave %v", none)
	}
}
