package askopenai_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askopenai"
	"github.com/askuser-go/askuser/wire"
)

// The assistant's tool call asks the person; the tool message goes back after the
// assistant message. (A real host gets msg from client.Chat.Completions.New with
// askopenai.ChatTool() among its tools, and its transport is wshub or another real one.)
func Example() {
	devices := &firstChoice{}
	d := askuser.New(devices, nil)
	devices.d = d
	defer d.Close()

	var msg openai.ChatCompletionMessage // completion.Choices[0].Message
	_ = json.Unmarshal([]byte(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_01","type":"function",
		"function":{"name":"ask_user_questions","arguments":"{\"questions\":[{\"question\":\"Which framework should we use?\",\"header\":\"Framework\",\"multiSelect\":false,\"options\":[{\"label\":\"Vue 3 (Recommended)\",\"description\":\"Matches the existing stack\",\"preview\":\"<App/>\"},{\"label\":\"React\",\"description\":\"Larger ecosystem\",\"preview\":\"<App />\"}]}]}"}}]}`), &msg)

	for _, m := range askopenai.ChatToolMessages(context.Background(), d, askuser.IntSession(1), msg) {
		fmt.Println(*m.GetToolCallID(), m.OfTool.Content.OfString.Value)
	}
	// Output:
	// call_01 {"answers":[{"question":"Which framework should we use?","selectedLabels":["Vue 3 (Recommended)"],"customInput":null}]}
}

// With the Responses API, each function_call of the tool gets a function_call_output.
func ExampleResponsesOutputs() {
	devices := &firstChoice{}
	d := askuser.New(devices, nil)
	devices.d = d
	defer d.Close()

	var resp responses.Response // as client.Responses.New returns it
	_ = json.Unmarshal([]byte(`{"id":"resp_01","object":"response","status":"completed","output":[{"type":"function_call",
		"id":"fc_01","call_id":"call_01","name":"ask_user_questions","status":"completed",
		"arguments":"{\"questions\":[{\"question\":\"Ship on Friday?\",\"header\":\"Release\",\"multiSelect\":false,\"options\":[{\"label\":\"Yes\",\"description\":\"Release as planned\",\"preview\":\"v2.4.0 on Friday\"},{\"label\":\"No\",\"description\":\"Wait for Monday\",\"preview\":\"v2.4.0 on Monday\"}]}]}"}]}`), &resp)

	next := responses.ResponseNewParams{
		Model:              openai.ChatModelGPT5_2,
		PreviousResponseID: openai.String(resp.ID),
		Input:              responses.ResponseNewParamsInputUnion{OfInputItemList: askopenai.ResponsesOutputs(context.Background(), d, askuser.IntSession(1), &resp)},
	}
	b, _ := json.Marshal(next.Input)
	fmt.Println(string(b))
	// Output:
	// [{"output":"{\"answers\":[{\"question\":\"Ship on Friday?\",\"selectedLabels\":[\"Yes\"],\"customInput\":null}]}","call_id":"call_01","type":"function_call_output"}]
}

// Every tool call of the turn gets its tool message: the host's tools through the gate
// of the dispatcher's Policy, then the host's function. (Here no call needs the person:
// list_files is allowed, drop_table denied.)
func ExampleChatToolResults() {
	devices := &firstChoice{}
	d := askuser.New(devices, &askuser.Options{Policy: &askuser.Policy{
		Deny:  []askuser.Rule{{Tool: "drop_*"}},
		Allow: []askuser.Rule{{Tool: "list_files"}},
	}})
	devices.d = d
	defer d.Close()
	runTool := func(ctx context.Context, call askuser.ToolCall) (string, error) {
		return `["README.md","go.mod"]`, nil // the host's own list_files
	}

	var msg openai.ChatCompletionMessage // completion.Choices[0].Message
	_ = json.Unmarshal([]byte(`{"role":"assistant","content":null,"tool_calls":[
		{"id":"call_01","type":"function","function":{"name":"list_files","arguments":"{\"dir\":\".\"}"}},
		{"id":"call_02","type":"function","function":{"name":"drop_table","arguments":"{\"table\":\"users\"}"}}]}`), &msg)

	for _, m := range askopenai.ChatToolResults(context.Background(), d, askuser.IntSession(1), msg, runTool) {
		fmt.Println(*m.GetToolCallID(), m.OfTool.Content.OfString.Value)
	}
	// Output:
	// call_01 ["README.md","go.mod"]
	// call_02 {"error": "This tool call is not allowed here; the tool did not run. Do not call it again."}
}

// firstChoice stands in for the person's devices in the examples: a transport whose one
// device answers every question with its first option.
type firstChoice struct{ d *askuser.Dispatcher }

func (f *firstChoice) Send(ctx context.Context, ev wire.Event) error {
	if ev.Type != wire.EventAsk {
		return nil
	}
	var ask wire.AskData
	if err := json.Unmarshal(ev.Data, &ask); err != nil {
		return err
	}
	data := wire.ResultData{RequestID: ask.RequestID}
	for _, q := range ask.Questions {
		data.Answers = append(data.Answers, askuser.Answer{Question: q.Question, SelectedLabels: []string{q.Options[0].Label}})
	}
	reply, err := wire.NewEvent(wire.EventResult, ev.SessionID, data)
	if err != nil {
		return err
	}
	return f.d.Deliver(ctx, reply)
}
