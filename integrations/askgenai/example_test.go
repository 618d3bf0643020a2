package askgenai_test

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/genai"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askgenai"
	"github.com/askuser-go/askuser/wire"
)

// The model's function call asks the person; the function response goes back in the
// next user content. (A real host gets turn from client.Models.GenerateContent with
// askgenai.Tool() among its tools, and its transport is wshub or another real one.)
func Example() {
	devices := &firstChoice{}
	d := askuser.New(devices, nil)
	devices.d = d
	defer d.Close()

	var turn genai.Content // resp.Candidates[0].Content
	_ = json.Unmarshal([]byte(`{"role":"model","parts":[{"functionCall":{"name":"ask_user_questions","args":{"questions":[
		{"question":"Which framework should we use?","header":"Framework","multiSelect":false,
		 "options":[{"label":"Vue 3 (Recommended)","description":"Matches the existing stack"},
		            {"label":"React","description":"Larger ecosystem"}]}]}}}]}`), &turn)

	// The call has no id, so it is asked under askgenai.CallID("conv-1/turn-3", 0).
	parts := askgenai.FunctionResponses(context.Background(), d, askuser.IntSession(1), "conv-1/turn-3", &turn)
	next := genai.NewContentFromParts(parts, genai.RoleUser) // with the host's other responses, if any
	b, _ := json.Marshal(next)
	fmt.Println(string(b))
	// Output:
	// {"parts":[{"functionResponse":{"name":"ask_user_questions","response":{"answers":[{"customInput":null,"question":"Which framework should we use?","selectedLabels":["Vue 3 (Recommended)"]}]}}}],"role":"user"}
}

// Every function call of the turn gets its response: the host's functions through the
// gate of the dispatcher's Policy, then the host's function, a call that did not run
// answered under "error". (Here no call needs the person: list_files is allowed,
// drop_table denied.)
func ExampleTurnResponses() {
	devices := &firstChoice{}
	d := askuser.New(devices, &askuser.Options{Policy: &askuser.Policy{
		Deny:  []askuser.Rule{{Tool: "drop_*"}},
		Allow: []askuser.Rule{{Tool: "list_files"}},
	}})
	devices.d = d
	defer d.Close()
	runTool := func(ctx context.Context, call askuser.ToolCall) (string, error) {
		return `{"files":["README.md","go.mod"]}`, nil // the host's own list_files
	}

	var turn genai.Content // resp.Candidates[0].Content
	_ = json.Unmarshal([]byte(`{"role":"model","parts":[
		{"functionCall":{"name":"list_files","args":{"dir":"."}}},
		{"functionCall":{"name":"drop_table","args":{"table":"users"}}}]}`), &turn)

	for _, p := range askgenai.TurnResponses(context.Background(), d, askuser.IntSession(1), "conv-1/turn-4", &turn, runTool) {
		b, _ := json.Marshal(p.FunctionResponse.Response)
		fmt.Println(p.FunctionResponse.Name, string(b))
	}
	// Output:
	// list_files {"files":["README.md","go.mod"]}
	// drop_table {"error":"This tool call is not allowed here; the tool did not run. Do not call it again."}
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
