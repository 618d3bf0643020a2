package askgenai_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askgenai"
	"github.com/askuser-go/askuser/internal/paneltest"
	"github.com/askuser-go/askuser/wire"
)

// A turn of three calls of the host's functions, over the SDK's client: the follow-up
// request carries one functionResponse per functionCall, in the order of the calls,
// each with the call's name and no id (the calls had none), and its exact response:
// list_files's output (run while write_file waited for the person) and write_file's
// result with the notice of the person's edit as the function's output, or the
// person's denial with its reason under "error", losing neither sibling's response;
// drop_table's denial by the Policy under "error", which Gemini reads as the
// function's error. The calls ran under the stable ids of their positions in the turn.
func TestTurnResponsesGatedTurn(t *testing.T) {
	paneltest.EachDecision(t, askuser.IntSession(session), func(t *testing.T, g paneltest.GatedTurn) {
		api := newFakeAPI(t, "testdata/gated.json")
		final := converseTurn(t, api, 3, func(ctx context.Context, turn *genai.Content) []*genai.Part {
			return askgenai.TurnResponses(ctx, g.D, askuser.IntSession(session), turnID, turn, g.Host.Run)
		})

		contents := api.request(t, 1)["contents"].([]any)
		if len(contents) != 3 {
			t.Fatalf("%d contents, want user, model, user", len(contents))
		}
		if first := contents[1].(map[string]any)["parts"].([]any)[0].(map[string]any); first["thoughtSignature"] == nil {
			t.Errorf("the model's turn was not sent back as it came: %v", first)
		}
		response := func(name, content string) any {
			return map[string]any{"functionResponse": map[string]any{"name": name, "response": decode(t, []byte(content))}}
		}
		want := map[string]any{"role": "user", "parts": []any{
			response("list_files", paneltest.ListFilesOutput),
			response("write_file", g.Written),
			response("drop_table", paneltest.DropTableDenied),
		}}
		if !reflect.DeepEqual(contents[2], want) {
			t.Errorf("function responses on the wire:\n%s\nwant:\n%s", mustJSON(t, contents[2]), mustJSON(t, want))
		}
		g.Check(t, askgenai.CallID(turnID, 0), askgenai.CallID(turnID, 1))
		if !strings.HasPrefix(final.Text(), "I wrote the settings page") { // the recording's
			t.Errorf("final text %q", final.Text())
		}
	})
}

// A turn mixing a question and the host's functions: each call gets its response, in
// order, the ids as they came; an output that is no object, or an object with an
// "error" key that is no error, is the function's "output"; a function that fails is
// its "error"; a call without args runs with {}; positions count every function call.
func TestTurnResponsesMixedTurn(t *testing.T) {
	approve := func(a wire.ApprovalData) *wire.ApprovalResultData {
		return &wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionApprove, Digest: a.Digest}
	}
	d, asked, _ := paneltest.NewGated(t, askuser.IntSession(session), &askuser.Options{Policy: paneltest.Policy()}, paneltest.Pick("SQLite"), approve)
	var mu sync.Mutex
	var ran []askuser.ToolCall // guarded by mu
	outputs := map[string]string{"count": "3", "lint": `{"error":null,"warnings":[]}`, "status": "all green"}
	run := func(_ context.Context, c askuser.ToolCall) (string, error) {
		mu.Lock()
		ran = append(ran, c) // the calls run at once
		mu.Unlock()
		if out, ok := outputs[c.Name]; ok {
			return out, nil
		}
		return paneltest.NewHost().Run(context.Background(), c)
	}
	turn := content(t, `{"role":"model","parts":[
		{"text":"Let me check."},
		{"functionCall":{"id":"fc-count","name":"count","args":{}}},
		{"functionCall":{"name":"ask_user_questions","args":`+dbArgs+`}},
		{"functionCall":{"name":"lint","args":{"dir":"web"}}},
		{"functionCall":{"name":"status"}},
		{"functionCall":{"name":"deploy","args":{"env":"prod"}}}]}`)
	parts := askgenai.TurnResponses(context.Background(), d, askuser.IntSession(session), turnID, turn, run)
	got := make([]any, len(parts))
	for i, p := range parts {
		got[i] = decode(t, mustJSON(t, p.FunctionResponse))
	}
	want := []any{
		map[string]any{"id": "fc-count", "name": "count", "response": map[string]any{"output": 3.0}},
		map[string]any{"name": "ask_user_questions", "response": decode(t, []byte(`{"answers":[{"question":"Which database should we use?","selectedLabels":["SQLite"],"customInput":null}]}`))},
		map[string]any{"name": "lint", "response": map[string]any{"output": map[string]any{"error": nil, "warnings": []any{}}}},
		map[string]any{"name": "status", "response": map[string]any{"output": "all green"}},
		map[string]any{"name": "deploy", "response": map[string]any{"error": "no such tool: deploy"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("function responses:\n%s\nwant:\n%s", mustJSON(t, got), mustJSON(t, want))
	}
	if ask := <-asked; ask.RequestID != askgenai.CallID(turnID, 1) {
		t.Errorf("the question was asked under %q, want CallID(turn, 1)", ask.RequestID)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range ran {
		if c.Name == "status" && (c.ID != askgenai.CallID(turnID, 3) || string(c.Arguments) != "{}") {
			t.Errorf("status ran as %s %s, want CallID(turn, 3) and {}", c.ID, c.Arguments)
		}
	}
	if none := askgenai.TurnResponses(context.Background(), d, askuser.IntSession(session), turnID, nil, run); none != nil {
		t.Errorf("a nil turn gave %v", none)
	}
}
