package askopenai_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askopenai"
	"github.com/askuser-go/askuser/internal/paneltest"
)

const (
	session = 123
	// chatCallID is the tool call id of the recorded Chat Completions exchanges.
	chatCallID = "call_Dn2RJJSxzDm49vlVTehseJ0k"
	// layoutAnswer is the tool result when the person picks the sidebar, byte for byte.
	layoutAnswer = `{"answers":[{"question":"Which layout should the settings page use?","selectedLabels":["Sidebar (Recommended)"],"customInput":null}]}`
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonValue is v as the API receives it: encoded by the SDK, decoded generically.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal(mustJSON(t, v), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func schemaValue(t *testing.T, d askuser.Dialect) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(askuser.Definition(d).InputSchema, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// chatTurn gives the tool messages for the model's turn.
type chatTurn func(context.Context, openai.ChatCompletionMessage) []openai.ChatCompletionMessageParamUnion

// converseChat runs a recorded Chat Completions exchange with the SDK's client: the
// model's turn, the tool messages for its ask_user_questions calls, the next turn.
func converseChat(t *testing.T, api *fakeAPI, d *askuser.Dispatcher) *openai.ChatCompletion {
	t.Helper()
	return converseChatTurn(t, api, func(ctx context.Context, msg openai.ChatCompletionMessage) []openai.ChatCompletionMessageParamUnion {
		return askopenai.ChatToolMessages(ctx, d, askuser.IntSession(session), msg)
	})
}

// converseChatTurn is converseChat with the tool messages given by turn.
func converseChatTurn(t *testing.T, api *fakeAPI, turn chatTurn) *openai.ChatCompletion {
	t.Helper()
	ctx := context.Background()
	client := api.client()
	params := openai.ChatCompletionNewParams{
		Model: openai.ChatModelGPT5_2,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are a coding agent. Ask the user with ask_user_questions when a decision is theirs."),
			openai.UserMessage("Build the settings page."),
		},
		Tools: []openai.ChatCompletionToolUnionParam{askopenai.ChatTool()},
	}
	completion, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	msg := completion.Choices[0].Message
	params.Messages = append(params.Messages, msg.ToParam())
	params.Messages = append(params.Messages, turn(ctx, msg)...)
	final, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	return final
}

// checkToolMessage checks the last message of a Chat Completions request: the tool
// message for the call, with the exact result.
func checkToolMessage(t *testing.T, req map[string]any, callID, content string) {
	t.Helper()
	msgs := req["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want system, user, assistant, tool", len(msgs))
	}
	calls := msgs[2].(map[string]any)["tool_calls"].([]any)
	if c := calls[0].(map[string]any); c["id"] != callID || c["function"].(map[string]any)["name"] != askuser.ToolName {
		t.Errorf("the assistant's tool call was not sent back as it came: %v", c)
	}
	want := map[string]any{"role": "tool", "tool_call_id": callID, "content": content}
	if !reflect.DeepEqual(msgs[3], want) {
		t.Errorf("tool message on the wire:\n%s\nwant:\n%s", mustJSON(t, msgs[3]), mustJSON(t, want))
	}
}

// The request carries the tool as strict function calling takes it: the OpenAI-strict
// schema exactly, "strict": true.
func TestChatToolOnTheWire(t *testing.T) {
	api := newFakeAPI(t, "testdata/chat_answered.json", "/chat/completions")
	d, _ := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick("Sidebar (Recommended)"))
	converseChat(t, api, d)
	def := askuser.Definition(askuser.OpenAIStrict)
	want := map[string]any{"type": "function", "function": map[string]any{
		"name": askuser.ToolName, "description": def.Description, "strict": true,
		"parameters": schemaValue(t, askuser.OpenAIStrict),
	}}
	for n := range 2 {
		tools := api.request(t, n)["tools"].([]any)
		if len(tools) != 1 || !reflect.DeepEqual(tools[0], want) {
			t.Errorf("request %d: tools on the wire:\n%s\nwant:\n%s", n, mustJSON(t, tools), mustJSON(t, want))
		}
	}
}

// The person answers: the follow-up request carries the assistant's tool call and a
// tool message with its id and the exact answers; the device was asked under that id.
func TestChatAnswered(t *testing.T) {
	api := newFakeAPI(t, "testdata/chat_answered.json", "/chat/completions")
	d, asked := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick("Sidebar (Recommended)"))
	final := converseChat(t, api, d)
	if ask := <-asked; ask.RequestID != chatCallID || ask.Questions[0].Options[0].Preview == "" {
		t.Errorf("the device was asked %+v, want request id %q and the previews", ask, chatCallID)
	}
	checkToolMessage(t, api.request(t, 1), chatCallID, layoutAnswer)
	if !strings.HasPrefix(final.Choices[0].Message.Content, "Sidebar layout it is.") {
		t.Errorf("final message %q", final.Choices[0].Message.Content)
	}
}

// A person who declines, or does not answer in time, gives the model the error result
// as the tool message's content: Chat Completions has no error flag beside it.
func TestChatNotAnswered(t *testing.T) {
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
			api := newFakeAPI(t, "testdata/chat_unanswered.json", "/chat/completions")
			d, asked := paneltest.New(t, askuser.IntSession(session), tc.opts, tc.device)
			converseChat(t, api, d)
			if ask := <-asked; ask.RequestID != chatCallID {
				t.Errorf("request id %q, want %q", ask.RequestID, chatCallID)
			}
			checkToolMessage(t, api.request(t, 1), chatCallID, tc.content)
		})
	}
}

// NEEDS THE CORE CHANGE (ParseArguments accepting null for optional fields): this test
// fails until ParseArguments reads "preview": null as no preview. Run it after that
// change: go test -run TestChatStrictNullPreview
//
// Under strict function calling every field is required, so a model writes
// "preview": null on an option without one: the question is asked all the same.
func TestChatStrictNullPreview(t *testing.T) {
	api := newFakeAPI(t, "testdata/chat_null_preview.json", "/chat/completions")
	d, _ := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick("PostgreSQL (Recommended)"))
	converseChat(t, api, d)
	checkToolMessage(t, api.request(t, 1), "call_q8Zk3VfT1sYd6NwP0eLxR2mC",
		`{"answers":[{"question":"Which database should the service start with?","selectedLabels":["PostgreSQL (Recommended)"],"customInput":null}]}`)
}

const dbArguments = `{"questions":[{"question":"Which database should we use?","header":"Database","options":[{"label":"PostgreSQL","description":"Relational","preview":"psql"},{"label":"SQLite","description":"Embedded","preview":"sqlite3"}],"multiSelect":false}]}`

// Only ask_user_questions calls are answered, in the order of the calls and each under
// its own id; other tools' calls are the host's.
func TestChatOnlyAskCallsAnswered(t *testing.T) {
	d, _ := paneltest.New(t, askuser.IntSession(session), nil, paneltest.Pick("SQLite"))
	var msg openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":null,"refusal":null,"annotations":[],"tool_calls":[
		{"id":"call_weather","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"SF\"}"}},
		{"id":"call_db1","type":"function","function":{"name":"ask_user_questions","arguments":`+string(mustJSON(t, dbArguments))+`}},
		{"id":"call_db2","type":"function","function":{"name":"ask_user_questions","arguments":`+string(mustJSON(t, strings.Replace(dbArguments, "we use", "the cache use", 1)))+`}}]}`), &msg); err != nil {
		t.Fatal(err)
	}
	got := jsonValue(t, askopenai.ChatToolMessages(context.Background(), d, askuser.IntSession(session), msg))
	want := []any{
		map[string]any{"role": "tool", "tool_call_id": "call_db1", "content": `{"answers":[{"question":"Which database should we use?","selectedLabels":["SQLite"],"customInput":null}]}`},
		map[string]any{"role": "tool", "tool_call_id": "call_db2", "content": `{"answers":[{"question":"Which database should the cache use?","selectedLabels":["SQLite"],"customInput":null}]}`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tool messages:\n%s\nwant:\n%s", mustJSON(t, got), mustJSON(t, want))
	}
	if none := askopenai.ChatToolMessages(context.Background(), d, askuser.IntSession(session), openai.ChatCompletionMessage{Content: "hi"}); len(none) != 0 {
		t.Errorf("a message without a call gave %v", none)
	}
}
