package askopenai_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askopenai"
	"github.com/askuser-go/askuser/internal/paneltest"
)

const (
	// responsesCallID and firstResponseID are those of the recorded Responses exchanges.
	responsesCallID = "call_unLAR8MvFNptuiZK6K6HCy5k"
	firstResponseID = "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"
)

// responsesTurn gives the input items for the model's response.
type responsesTurn func(context.Context, *responses.Response) []responses.ResponseInputItemUnionParam

// converseResponses runs a recorded Responses exchange with the SDK's client: the
// model's function_call, the function_call_output items, the next response.
func converseResponses(t *testing.T, api *fakeAPI, d *askuser.Dispatcher) *responses.Response {
	t.Helper()
	return converseResponsesTurn(t, api, func(ctx context.Context, resp *responses.Response) []responses.ResponseInputItemUnionParam {
		return askopenai.ResponsesOutputs(ctx, d, askuser.IntSession(session), resp)
	})
}

// converseResponsesTurn is converseResponses with the input items given by turn.
func converseResponsesTurn(t *testing.T, api *fakeAPI, turn responsesTurn) *responses.Response {
	t.Helper()
	ctx := context.Background()
	client := api.client()
	params := responses.ResponseNewParams{
		Model: openai.ChatModelGPT5_2,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Build the settings page.")},
		Tools: []responses.ToolUnionParam{askopenai.ResponsesTool()},
	}
	resp, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	params.PreviousResponseID = openai.String(resp.ID)
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: turn(ctx, resp)}
	final, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	return final
}

// checkOutputs checks the follow-up Responses request: the previous response's id, and
// as input the one function_call_output for the call, with the exact result.
func checkOutputs(t *testing.T, req map[string]any, content string) {
	t.Helper()
	if req["previous_response_id"] != firstResponseID {
		t.Errorf("previous_response_id %v", req["previous_response_id"])
	}
	want := []any{map[string]any{"type": "function_call_output", "call_id": responsesCallID, "output": content}}
	if !reflect.DeepEqual(req["input"], want) {
		t.Errorf("input on the wire:\n%s\nwant:\n%s", mustJSON(t, req["input"]), mustJSON(t, want))
	}
}

// The tool goes on the wire as a strict function tool with the OpenAI-strict schema;
// the answer comes back as a function_call_output with the call's call_id.
func TestResponsesAnswered(t *testing.T) {
	api := newFakeAPI(t, "testdata/responses_answered.json", "/responses")
	d, asked := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick("Sidebar (Recommended)"))
	final := converseResponses(t, api, d)

	def := askuser.Definition(askuser.OpenAIStrict)
	wantTool := map[string]any{"type": "function", "name": askuser.ToolName, "description": def.Description,
		"strict": true, "parameters": schemaValue(t, askuser.OpenAIStrict)}
	if tools := api.request(t, 0)["tools"].([]any); len(tools) != 1 || !reflect.DeepEqual(tools[0], wantTool) {
		t.Errorf("tools on the wire:\n%s\nwant:\n%s", mustJSON(t, tools), mustJSON(t, wantTool))
	}
	if ask := <-asked; ask.RequestID != responsesCallID {
		t.Errorf("the device was asked under request id %q, want the call_id %q", ask.RequestID, responsesCallID)
	}
	checkOutputs(t, api.request(t, 1), layoutAnswer)
	if got := final.OutputText(); got != "Sidebar layout it is. I'll put Profile, Security and Billing in a left-hand list with the form beside it." {
		t.Errorf("final output %q", got)
	}
}

// A person who declines, or does not answer in time, gives the model the error result
// as the output: the Responses API has no error flag beside it.
func TestResponsesNotAnswered(t *testing.T) {
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
			api := newFakeAPI(t, "testdata/responses_unanswered.json", "/responses")
			d, _ := paneltest.New(t, askuser.IntSession(session), tc.opts, tc.device)
			converseResponses(t, api, d)
			checkOutputs(t, api.request(t, 1), tc.content)
		})
	}
}

// Only ask_user_questions function calls are answered; other items are the host's.
func TestResponsesOnlyAskCallsAnswered(t *testing.T) {
	d, _ := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick("SQLite"))
	var resp responses.Response
	if err := json.Unmarshal([]byte(`{"id":"resp_1","object":"response","status":"completed","output":[
		{"type":"reasoning","id":"rs_1","summary":[]},
		{"type":"function_call","id":"fc_1","call_id":"call_weather","name":"get_weather","arguments":"{\"city\":\"SF\"}","status":"completed"},
		{"type":"function_call","id":"fc_2","call_id":"call_db","name":"ask_user_questions","arguments":`+string(mustJSON(t, dbArguments))+`,"status":"completed"}]}`), &resp); err != nil {
		t.Fatal(err)
	}
	got := jsonValue(t, askopenai.ResponsesOutputs(context.Background(), d, askuser.IntSession(session), &resp))
	want := []any{map[string]any{"type": "function_call_output", "call_id": "call_db",
		"output": `{"answers":[{"question":"Which database should we use?","selectedLabels":["SQLite"],"customInput":null}]}`}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outputs:\n%s\nwant:\n%s", mustJSON(t, got), mustJSON(t, want))
	}
	if none := askopenai.ResponsesOutputs(context.Background(), d, askuser.IntSession(session), nil); none != nil {
		t.Errorf("a nil response gave %v", none)
	}
}
