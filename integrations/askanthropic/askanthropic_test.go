package askanthropic_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askanthropic"
	"github.com/askuser-go/askuser/internal/paneltest"
)

const (
	session   = 123
	toolUseID = "toolu_01A09q90qw90lq917835lq9" // the recorded exchanges' tool_use id
	// answeredResult is the tool result when the person picks Vue 3, byte for byte.
	answeredResult = `{"answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["Vue 3 (Recommended)"],"customInput":null}]}`
)

// converse runs the recorded exchange with the SDK's client: the model's turn, the
// tool results for its ask_user_questions call, and the model's next turn.
func converse(t *testing.T, api *fakeAPI, d *askuser.Dispatcher) *anthropic.Message {
	t.Helper()
	return converseTurn(t, api, func(ctx context.Context, msg *anthropic.Message) []anthropic.ContentBlockParamUnion {
		return askanthropic.ToolResults(ctx, d, askuser.IntSession(session), msg)
	})
}

// converseTurn is converse with the tool results given by turn.
func converseTurn(t *testing.T, api *fakeAPI, turn func(context.Context, *anthropic.Message) []anthropic.ContentBlockParamUnion) *anthropic.Message {
	t.Helper()
	ctx := context.Background()
	client := api.client()
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet4_6,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Scaffold the new admin module."))},
		Tools:     []anthropic.ToolUnionParam{askanthropic.Tool()},
	}
	msg, err := client.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != anthropic.StopReasonToolUse {
		t.Fatalf("stop_reason %q, want tool_use", msg.StopReason)
	}
	params.Messages = append(params.Messages, msg.ToParam())
	params.Messages = append(params.Messages, anthropic.NewUserMessage(turn(ctx, msg)...))
	final, err := client.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	return final
}

// jsonEqual reports whether two JSON texts are the same value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The request carries the tool as the API takes it: the Anthropic-strict schema exactly,
// with strict tool use.
func TestToolOnTheWire(t *testing.T) {
	api := newFakeAPI(t, "testdata/answered.json")
	d, _ := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick("Vue 3 (Recommended)"))
	converse(t, api, d)

	tools := api.request(t, 0)["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools = %v", tools)
	}
	tool := tools[0].(map[string]any)
	def := askuser.Definition(askuser.AnthropicStrict)
	if tool["name"] != askuser.ToolName || tool["description"] != def.Description || tool["strict"] != true {
		t.Errorf("tool = %v", tool)
	}
	if !jsonEqual(t, mustJSON(t, tool["input_schema"]), def.InputSchema) {
		t.Errorf("input_schema on the wire:\n%s\nwant the AnthropicStrict schema:\n%s", mustJSON(t, tool["input_schema"]), def.InputSchema)
	}
}

// lastToolResult returns the tool_result blocks of the last message of a request,
// checking that it is the user's.
func lastToolResults(t *testing.T, req map[string]any) []any {
	t.Helper()
	msgs := req["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "user" {
		t.Fatalf("the last message is %v, want the user's tool results", last)
	}
	return last["content"].([]any)
}

// checkToolResult checks a tool_result block as the API receives it.
func checkToolResult(t *testing.T, block any, id, content string, isError bool) {
	t.Helper()
	want := map[string]any{
		"type":        "tool_result",
		"tool_use_id": id,
		"is_error":    isError,
		"content":     []any{map[string]any{"type": "text", "text": content}},
	}
	if !reflect.DeepEqual(block, want) {
		t.Errorf("tool_result on the wire:\n%s\nwant:\n%s", mustJSON(t, block), mustJSON(t, want))
	}
}

// The person answers on their device: the follow-up request carries the assistant's
// tool_use as it came and a tool_result with the same id, the exact answers and
// is_error false; the device was asked under the tool_use id.
func TestAnswered(t *testing.T) {
	api := newFakeAPI(t, "testdata/answered.json")
	d, asked := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick("Vue 3 (Recommended)"))
	final := converse(t, api, d)

	if ask := <-asked; ask.RequestID != toolUseID {
		t.Errorf("the device was asked under request id %q, want the tool_use id %q", ask.RequestID, toolUseID)
	}
	req := api.request(t, 1)
	msgs := req["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want user, assistant, user", len(msgs))
	}
	assistant := msgs[1].(map[string]any)["content"].([]any)
	if use := assistant[1].(map[string]any); use["type"] != "tool_use" || use["id"] != toolUseID || use["name"] != askuser.ToolName {
		t.Errorf("the assistant's tool_use was not sent back as it came: %v", use)
	}
	results := lastToolResults(t, req)
	if len(results) != 1 {
		t.Fatalf("%d tool results, want 1", len(results))
	}
	checkToolResult(t, results[0], toolUseID, answeredResult, false)
	if !strings.HasPrefix(final.Content[0].Text, "Vue 3 it is.") {
		t.Errorf("final message %q", final.Content[0].Text)
	}
}

// A person who declines, or does not answer in time, gives the model an error result
// with is_error set.
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
			d, asked := paneltest.New(t, askuser.IntSession(session), tc.opts, tc.device)
			converse(t, api, d)
			if ask := <-asked; ask.RequestID != toolUseID {
				t.Errorf("request id %q, want %q", ask.RequestID, toolUseID)
			}
			results := lastToolResults(t, api.request(t, 1))
			if len(results) != 1 {
				t.Fatalf("%d tool results, want 1", len(results))
			}
			checkToolResult(t, results[0], toolUseID, tc.content, true)
		})
	}
}

// message decodes a Messages API response as the SDK does.
func message(t *testing.T, raw string) *anthropic.Message {
	t.Helper()
	var m anthropic.Message
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

const askInput = `{"questions":[{"question":"Which database should we use?","header":"Database","options":[{"label":"PostgreSQL","description":"Relational"},{"label":"SQLite","description":"Embedded"}],"multiSelect":false}]}`

// Only ask_user_questions calls are answered, in the order of the calls and each under
// its own id; other tools' calls are the host's.
func TestOnlyAskCallsAnswered(t *testing.T) {
	d, asked := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick("SQLite", "Vue 3 (Recommended)"))
	msg := message(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[
		{"type":"tool_use","id":"toolu_weather","name":"get_weather","input":{"city":"SF"}},
		{"type":"tool_use","id":"toolu_db","name":"ask_user_questions","input":`+askInput+`},
		{"type":"tool_use","id":"toolu_fw","name":"ask_user_questions","input":{"questions":[{"question":"Which framework should we use for the new module?","header":"Framework","options":[{"label":"Vue 3 (Recommended)","description":"d"},{"label":"React","description":"d"}],"multiSelect":false}]}}
	],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
	results := askanthropic.ToolResults(context.Background(), d, askuser.IntSession(session), msg)
	if len(results) != 2 {
		t.Fatalf("%d results, want 2", len(results))
	}
	checkToolResult(t, jsonValue(t, results[0]), "toolu_db", `{"answers":[{"question":"Which database should we use?","selectedLabels":["SQLite"],"customInput":null}]}`, false)
	checkToolResult(t, jsonValue(t, results[1]), "toolu_fw", answeredResult, false)
	ids := map[string]bool{(<-asked).RequestID: true, (<-asked).RequestID: true}
	if !ids["toolu_db"] || !ids["toolu_fw"] {
		t.Errorf("the device was asked %v, want both tool_use ids", ids)
	}
	if none := askanthropic.ToolResults(context.Background(), d, askuser.IntSession(session), message(t, `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}]}`)); len(none) != 0 {
		t.Errorf("a message without a call gave %d results", len(none))
	}
	if none := askanthropic.ToolResults(context.Background(), d, askuser.IntSession(session), nil); none != nil {
		t.Errorf("a nil message gave %v", none)
	}
}

func jsonValue(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal(mustJSON(t, v), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Invalid input ends the call at once with an error result that lists what to fix; no
// device is asked.
func TestInvalidInput(t *testing.T) {
	d, asked := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick())
	msg := message(t, `{"id":"msg_1","type":"message","role":"assistant","content":[
		{"type":"tool_use","id":"toolu_bad","name":"ask_user_questions","input":{"questions":[{"options":[{"label":"A"},{"label":"A"}],"multiSelect":false}]}}]}`)
	results := askanthropic.ToolResults(context.Background(), d, askuser.IntSession(session), msg)
	block := jsonValue(t, results[0]).(map[string]any)
	text := block["content"].([]any)[0].(map[string]any)["text"].(string)
	if block["is_error"] != true || !strings.Contains(text, `questions[0].question: missing required field \"question\"`) || !strings.Contains(text, "questions[0].options[1].label: same label as questions[0].options[0].label") {
		t.Errorf("tool_result %v", block)
	}
	select {
	case ask := <-asked:
		t.Errorf("the device was asked %v", ask)
	default:
	}
}
