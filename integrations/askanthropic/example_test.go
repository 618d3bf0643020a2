package askanthropic_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askanthropic"
	"github.com/askuser-go/askuser/wire"
)

// The model's turn asks the person; the tool_result goes back in the next user message.
// (A real host gets msg from client.Messages.New with askanthropic.Tool() among its
// tools, and its transport is wshub or another real one.)
func Example() {
	devices := &firstChoice{}
	d := askuser.New(devices, nil)
	devices.d = d
	defer d.Close()

	var msg anthropic.Message // as client.Messages.New returns it
	_ = json.Unmarshal([]byte(`{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-6",
		"content":[{"type":"tool_use","id":"toolu_01","name":"ask_user_questions","input":{"questions":[
			{"question":"Which framework should we use?","header":"Framework","multiSelect":false,
			 "options":[{"label":"Vue 3 (Recommended)","description":"Matches the existing stack"},
			            {"label":"React","description":"Larger ecosystem"}]}]}}],
		"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`), &msg)

	results := askanthropic.ToolResults(context.Background(), d, askuser.IntSession(1), &msg)
	next := anthropic.NewUserMessage(results...) // with the host's other tool results, if any
	b, _ := json.Marshal(next)
	fmt.Println(string(b))
	// Output:
	// {"content":[{"tool_use_id":"toolu_01","is_error":false,"content":[{"text":"{\"answers\":[{\"question\":\"Which framework should we use?\",\"selectedLabels\":[\"Vue 3 (Recommended)\"],\"customInput\":null}]}","type":"text"}],"type":"tool_result"}],"role":"user"}
}

// Every tool_use of the turn gets its tool_result: the host's tools through the gate of
// the dispatcher's Policy, then the host's function, is_error set when a call did not
// run. (Here no call needs the person: list_files is allowed, drop_table denied.)
func ExampleToolResultBlocks() {
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

	var msg anthropic.Message // as client.Messages.New returns it
	_ = json.Unmarshal([]byte(`{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-6",
		"content":[{"type":"tool_use","id":"toolu_01","name":"list_files","input":{"dir":"."}},
		           {"type":"tool_use","id":"toolu_02","name":"drop_table","input":{"table":"users"}}],
		"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`), &msg)

	for _, b := range askanthropic.ToolResultBlocks(context.Background(), d, askuser.IntSession(1), &msg, runTool) {
		r := b.OfToolResult
		fmt.Println(r.ToolUseID, r.IsError.Value, r.Content[0].OfText.Text)
	}
	// Output:
	// toolu_01 false ["README.md","go.mod"]
	// toolu_02 true {"error": "This tool call is not allowed here; the tool did not run. Do not call it again."}
}

// The tool as the request sends it: the Anthropic-strict schema, with strict tool use.
func ExampleTool() {
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet4_6,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Scaffold the admin module."))},
		Tools:     []anthropic.ToolUnionParam{askanthropic.Tool()},
	}
	tool := params.Tools[0].OfTool
	fmt.Println(tool.Name, tool.Strict.Value)
	// Output: ask_user_questions true
}

// firstChoice stands in for the person's devices in the example: a transport whose one
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
