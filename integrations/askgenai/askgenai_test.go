package askgenai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askgenai"
	"github.com/askuser-go/askuser/internal/paneltest"
	"github.com/askuser-go/askuser/wire"
)

const (
	session = 123
	turnID  = "conv-7/turn-2" // the host's name for the model's turn
	// ciAnswer is the tool result when the person picks unit tests and lint, and staging.
	ciAnswer = `{"answers":[{"question":"Which checks should CI run on every pull request?","selectedLabels":["Unit tests (Recommended)","Lint"],"customInput":null},{"question":"Where should the service be deployed first?","selectedLabels":["Staging (Recommended)"],"customInput":null}]}`
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// ciChoices answers the recorded questions: unit tests and lint, and staging.
func ciChoices(ask wire.AskData) *wire.ResultData {
	return &wire.ResultData{RequestID: ask.RequestID, Answers: []askuser.Answer{
		{Question: ask.Questions[0].Question, SelectedLabels: []string{"Unit tests (Recommended)", "Lint"}},
		{Question: ask.Questions[1].Question, SelectedLabels: []string{"Staging (Recommended)"}},
	}}
}

// converse runs a recorded exchange with the SDK's client: the model's turn, the
// function responses for its ask_user_questions call, the next turn.
func converse(t *testing.T, api *fakeAPI, d *askuser.Dispatcher) *genai.GenerateContentResponse {
	t.Helper()
	return converseTurn(t, api, 1, func(ctx context.Context, turn *genai.Content) []*genai.Part {
		return askgenai.FunctionResponses(ctx, d, askuser.IntSession(session), turnID, turn)
	})
}

// converseTurn is converse with a model's turn of calls function calls, and the
// function responses given by respond.
func converseTurn(t *testing.T, api *fakeAPI, calls int, respond func(context.Context, *genai.Content) []*genai.Part) *genai.GenerateContentResponse {
	t.Helper()
	ctx := context.Background()
	client := api.client(t)
	config := &genai.GenerateContentConfig{Tools: []*genai.Tool{askgenai.Tool()}}
	history := []*genai.Content{genai.NewContentFromText("Set up CI and deployment for the service.", genai.RoleUser)}
	resp, err := client.Models.GenerateContent(ctx, model, history, config)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.FunctionCalls()) != calls {
		t.Fatalf("the model's turn has %d function calls, want %d", len(resp.FunctionCalls()), calls)
	}
	turn := resp.Candidates[0].Content
	history = append(history, turn)
	history = append(history, genai.NewContentFromParts(respond(ctx, turn), genai.RoleUser))
	final, err := client.Models.GenerateContent(ctx, model, history, config)
	if err != nil {
		t.Fatal(err)
	}
	return final
}

// checkFunctionResponse checks the last content of a generateContent request: the
// user's functionResponse for the call, without an id since the call had none, with the
// tool result as its response object.
func checkFunctionResponse(t *testing.T, req map[string]any, content string) {
	t.Helper()
	contents := req["contents"].([]any)
	if len(contents) != 3 {
		t.Fatalf("%d contents, want user, model, user", len(contents))
	}
	modelTurn := contents[1].(map[string]any)["parts"].([]any)[0].(map[string]any)
	if modelTurn["functionCall"].(map[string]any)["name"] != askuser.ToolName || modelTurn["thoughtSignature"] == nil {
		t.Errorf("the model's turn was not sent back as it came: %v", modelTurn)
	}
	want := map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{
		"name":     askuser.ToolName,
		"response": decode(t, []byte(content)),
	}}}}
	if !reflect.DeepEqual(contents[2], want) {
		t.Errorf("function response on the wire:\n%s\nwant:\n%s", mustJSON(t, contents[2]), mustJSON(t, want))
	}
}

// The declaration goes on the wire with the Gemini schema as its parameters, exactly.
func TestDeclarationOnTheWire(t *testing.T) {
	api := newFakeAPI(t, "testdata/answered.json")
	d, _ := paneltest.New(t, askuser.IntSession(session), nil, ciChoices)
	converse(t, api, d)
	def := askuser.Definition(askuser.Gemini)
	want := map[string]any{"functionDeclarations": []any{map[string]any{
		"name": askuser.ToolName, "description": def.Description, "parameters": decode(t, def.InputSchema),
	}}}
	for n := range 2 {
		tools := api.request(t, n)["tools"].([]any)
		if len(tools) != 1 || !reflect.DeepEqual(tools[0], want) {
			t.Errorf("request %d: tools on the wire:\n%s\nwant:\n%s", n, mustJSON(t, tools), mustJSON(t, want))
		}
	}
}

// The person answers: the follow-up request carries the function response with the
// exact answers; the call had no id, so the question was asked under the stable id
// derived from the turn.
func TestAnswered(t *testing.T) {
	api := newFakeAPI(t, "testdata/answered.json")
	d, asked := paneltest.New(t, askuser.IntSession(session), nil, ciChoices)
	final := converse(t, api, d)
	if ask := <-asked; ask.RequestID != askgenai.CallID(turnID, 0) {
		t.Errorf("the device was asked under %q, want CallID(turn, 0) = %q", ask.RequestID, askgenai.CallID(turnID, 0))
	}
	checkFunctionResponse(t, api.request(t, 1), ciAnswer)
	if !strings.HasPrefix(final.Text(), "Unit tests and lint") {
		t.Errorf("final text %q", final.Text())
	}
}

// A person who declines, or does not answer in time, gives the model a response whose
// "error" key Gemini reads as the function's error.
func TestNotAnswered(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    *askuser.Options
		device  paneltest.Reply
		content string
	}{
		{"declined", nil, paneltest.Decline, `{"error": "User declined to answer"}`},
		{"timed out", &askuser.Options{Timeout: 50 * time.Millisecond}, paneltest.Silent, `{"error": "User did not respond within timeout"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPI(t, "testdata/unanswered.json")
			d, _ := paneltest.New(t, askuser.IntSession(session), tc.opts, tc.device)
			converse(t, api, d)
			checkFunctionResponse(t, api.request(t, 1), tc.content)
			resp := api.request(t, 1)["contents"].([]any)[2].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionResponse"].(map[string]any)["response"].(map[string]any)
			if _, ok := resp["error"]; !ok {
				t.Errorf("response %v has no error key", resp)
			}
		})
	}
}

// content decodes a model turn as the SDK does.
func content(t *testing.T, raw string) *genai.Content {
	t.Helper()
	var c genai.Content
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

const dbArgs = `{"questions":[{"question":"Which database should we use?","header":"Database","options":[{"label":"PostgreSQL","description":"Relational"},{"label":"SQLite","description":"Embedded"}],"multiSelect":false}]}`

// Calls with an id are asked under it and answered with it; calls without one get the
// id of their position among the turn's function calls; other functions are the host's.
func TestCallIDs(t *testing.T) {
	d, asked := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick("SQLite"))
	turn := content(t, `{"role":"model","parts":[
		{"text":"Let me check."},
		{"functionCall":{"name":"get_weather","args":{"city":"SF"}}},
		{"functionCall":{"name":"ask_user_questions","args":`+dbArgs+`}},
		{"functionCall":{"id":"fc-given","name":"ask_user_questions","args":`+strings.Replace(dbArgs, "we use", "the cache use", 1)+`}}]}`)
	parts := askgenai.FunctionResponses(context.Background(), d, askuser.IntSession(session), turnID, turn)
	if len(parts) != 2 {
		t.Fatalf("%d parts, want 2", len(parts))
	}
	if r := parts[0].FunctionResponse; r.ID != "" || r.Name != askuser.ToolName || r.Response["answers"] == nil {
		t.Errorf("first response %+v", r)
	}
	if r := parts[1].FunctionResponse; r.ID != "fc-given" || r.Response["answers"] == nil {
		t.Errorf("second response %+v", r)
	}
	ids := map[string]bool{(<-asked).RequestID: true, (<-asked).RequestID: true}
	if !ids[askgenai.CallID(turnID, 1)] || !ids["fc-given"] {
		t.Errorf("asked under %v, want CallID(turn, 1) (after get_weather) and fc-given", ids)
	}
	if none := askgenai.FunctionResponses(context.Background(), d, askuser.IntSession(session), turnID, nil); none != nil {
		t.Errorf("a nil turn gave %v", none)
	}
}

func TestCallIDIsStable(t *testing.T) {
	a := askgenai.CallID("conv-7/turn-2", 0)
	if a != askgenai.CallID("conv-7/turn-2", 0) || !strings.HasPrefix(a, "gemini-") || len(a) > wire.MaxRequestIDBytes {
		t.Errorf("CallID = %q", a)
	}
	for _, other := range []string{askgenai.CallID("conv-7/turn-2", 1), askgenai.CallID("conv-7/turn-3", 0), askgenai.CallID("conv-7/turn-20", 0)} {
		if other == a {
			t.Errorf("two calls share the id %q", a)
		}
	}
	if askgenai.CallID("", 0) != "" {
		t.Error("an empty turn id must give no id")
	}
}

// The Gemini dialect is exactly a genai.Schema: it decodes with no unknown field and
// encodes back to the same value.
func TestDeclarationIsAGenaiSchema(t *testing.T) {
	raw := askuser.Definition(askuser.Gemini).InputSchema
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s genai.Schema
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("the Gemini dialect is not a genai.Schema: %v", err)
	}
	if !reflect.DeepEqual(decode(t, mustJSON(t, &s)), decode(t, raw)) {
		t.Errorf("genai.Schema lost something:\n%s\nwant:\n%s", mustJSON(t, &s), raw)
	}
	if got := askgenai.FunctionDeclaration().Parameters; !reflect.DeepEqual(got, &s) || got.Type != genai.TypeObject {
		t.Errorf("Parameters = %+v", got)
	}
}
