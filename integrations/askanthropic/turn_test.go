package askanthropic_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askanthropic"
	"github.com/askuser-go/askuser/internal/paneltest"
	"github.com/askuser-go/askuser/wire"
)

// A turn of three calls of the host's tools, over the SDK's client: the follow-up
// request carries one tool_result per tool_use, in the order of the calls, each with
// its call's id, its exact result and its error flag: list_files's output (run while
// write_file waited for the person), is_error false; write_file's result with the
// notice of the person's edit, is_error false, or the person's denial with its reason,
// is_error true, losing neither sibling's result; drop_table's denial by the Policy,
// is_error true. The host's tools ran with exactly the arguments allowed.
func TestToolResultBlocksGatedTurn(t *testing.T) {
	const (
		listID  = "toolu_01Kx8W3nQ5rTb2Ly7Hc9VmDf"
		writeID = "toolu_01Pj4Ed6Ga1Zs8Nu3Rw5YkTq"
		dropID  = "toolu_01Cm9Fv2Xh7Jo4Bt6Ai1UeSl"
	)
	paneltest.EachDecision(t, askuser.IntSession(session), func(t *testing.T, g paneltest.GatedTurn) {
		api := newFakeAPI(t, "testdata/gated.json")
		final := converseTurn(t, api, func(ctx context.Context, msg *anthropic.Message) []anthropic.ContentBlockParamUnion {
			return askanthropic.ToolResultBlocks(ctx, g.D, askuser.IntSession(session), msg, g.Host.Run)
		})

		req := api.request(t, 1)
		assistant := req["messages"].([]any)[1].(map[string]any)["content"].([]any)
		for i, id := range []string{listID, writeID, dropID} {
			if use := assistant[i+1].(map[string]any); use["type"] != "tool_use" || use["id"] != id {
				t.Errorf("the assistant's tool_use %d was not sent back as it came: %v", i, use)
			}
		}
		results := lastToolResults(t, req)
		if len(results) != 3 {
			t.Fatalf("%d tool results, want 3", len(results))
		}
		checkToolResult(t, results[0], listID, paneltest.ListFilesOutput, false)
		checkToolResult(t, results[1], writeID, g.Written, g.Denied)
		checkToolResult(t, results[2], dropID, paneltest.DropTableDenied, true)

		g.Check(t, listID, writeID)
		if !strings.HasPrefix(final.Content[0].Text, "I wrote the settings page") { // the recording's, whatever was sent
			t.Errorf("final message %q", final.Content[0].Text)
		}
	})
}

// A turn mixing a question and the host's tools: each tool_use gets its tool_result,
// in order; server tools are left alone; a tool that fails gives its error's text with
// is_error; a tool that returns nothing gives a tool_result without content; a
// toolset's tool_use gets its toolset_name back.
func TestToolResultBlocksMixedTurn(t *testing.T) {
	approve := func(a wire.ApprovalData) *wire.ApprovalResultData {
		return &wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionApprove, Digest: a.Digest}
	}
	d, _, _ := paneltest.NewGated(t, askuser.IntSession(session), &askuser.Options{Policy: paneltest.Policy()}, paneltest.Pick("SQLite"), approve)
	host := paneltest.NewHost()
	run := func(ctx context.Context, c askuser.ToolCall) (string, error) {
		if c.Name == "navigate" {
			return "", nil
		}
		return host.Run(ctx, c)
	}
	msg := message(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[
		{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"settings page"}},
		{"type":"tool_use","id":"toolu_db","name":"ask_user_questions","input":`+askInput+`},
		{"type":"tool_use","id":"toolu_ls","name":"list_files","input":{"dir":"web"}},
		{"type":"tool_use","id":"toolu_nav","name":"navigate","input":{"url":"https://example.com"},"toolset_name":"browser"},
		{"type":"tool_use","id":"toolu_up","name":"deploy","input":{}},
		{"type":"tool_use","id":"toolu_rm","name":"drop_table","input":{"table":"t"}}
	],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
	results := askanthropic.ToolResultBlocks(context.Background(), d, askuser.IntSession(session), msg, run)
	if len(results) != 5 {
		t.Fatalf("%d results, want 5", len(results))
	}
	checkToolResult(t, jsonValue(t, results[0]), "toolu_db", `{"answers":[{"question":"Which database should we use?","selectedLabels":["SQLite"],"customInput":null}]}`, false)
	checkToolResult(t, jsonValue(t, results[1]), "toolu_ls", paneltest.ListFilesOutput, false)
	if got, want := jsonValue(t, results[2]), map[string]any{"type": "tool_result", "tool_use_id": "toolu_nav", "is_error": false, "toolset_name": "browser"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tool_result of a toolset's tool that returned nothing: %v, want %v", got, want)
	}
	checkToolResult(t, jsonValue(t, results[3]), "toolu_up", "no such tool: deploy", true)
	checkToolResult(t, jsonValue(t, results[4]), "toolu_rm", paneltest.DropTableDenied, true)
	if none := askanthropic.ToolResultBlocks(context.Background(), d, askuser.IntSession(session), nil, run); none != nil {
		t.Errorf("a nil message gave %v", none)
	}
}
