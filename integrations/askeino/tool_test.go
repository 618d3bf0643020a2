package askeino_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askeino"
	"github.com/askuser-go/askuser/wire"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"github.com/google/uuid"
)

const frameworkArgs = `{"questions":[{"question":"Which framework should we use?","header":"Framework",
	"options":[{"label":"Vue 3 (Recommended)","description":"Matches the existing stack"},
	           {"label":"React","description":"Larger ecosystem"}],"multiSelect":false}]}`

const frameworkAnswer = `{"answers":[{"question":"Which framework should we use?","selectedLabels":["Vue 3 (Recommended)"],"customInput":null}]}`

var session = askuser.IntSession(123)

func newDispatcher(t *testing.T) (*askuser.Dispatcher, *devices) {
	t.Helper()
	dev := newDevices()
	d := askuser.New(dev, nil)
	t.Cleanup(func() { d.Close() })
	return d, dev
}

// TestToolInfo: Eino's description of the tool is askuser's definition, with the input
// schema's constraints kept through Eino's schema type.
func TestToolInfo(t *testing.T) {
	info, err := askeino.NewTool(nil, nil).Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	def := askuser.Definition()
	if info.Name != def.Name || info.Desc != def.Description {
		t.Fatalf("info %q %q", info.Name, info.Desc)
	}
	js, err := info.ParamsOneOf.ToJSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(js)
	var a, b any
	_ = json.Unmarshal(got, &a)
	_ = json.Unmarshal(def.InputSchema, &b)
	if !jsonEqual(a, b) {
		t.Fatalf("schema through Eino:\n%s\nwant\n%s", got, def.InputSchema)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestReActAgentAsks: Eino's ReAct agent, with a model that calls ask_user_questions,
// runs the blocking tool: the device is asked with the model's tool-call id as the
// request id, and the model is given the answer as the tool message of that call.
func TestReActAgentAsks(t *testing.T) {
	d, dev := newDispatcher(t)
	m := &scriptedModel{callID: "call_abc", args: frameworkArgs}
	agent, err := react.NewAgent(t.Context(), &react.AgentConfig{
		ToolCallingModel: m,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: []tool.BaseTool{askeino.NewTool(d, nil)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		a := dev.ask(t, 0)
		if a.RequestID != "call_abc" {
			t.Errorf("request id %q, want the tool-call id", a.RequestID)
		}
		answer(t, d, session, a)
	}()
	out, err := agent.Generate(askeino.WithSession(t.Context(), session), []*schema.Message{schema.UserMessage("Start the new module.")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Content != "The user said: "+frameworkAnswer {
		t.Fatalf("final message %q", out.Content)
	}
	tm := m.toolMessage(t)
	if tm.ToolCallID != "call_abc" || tm.Content != frameworkAnswer {
		t.Fatalf("tool message %q: %q", tm.ToolCallID, tm.Content)
	}
	if len(m.tools) != 1 || m.tools[0].Name != askuser.ToolName {
		t.Fatalf("the model was given tools %v", m.tools)
	}
}

// TestToolResults: outside a ToolsNode there is no tool-call id, and askuser makes a
// random one; invalid arguments and a decline are results for the model, not errors; a
// run without a session is an error.
func TestToolResults(t *testing.T) {
	d, dev := newDispatcher(t)
	tl := askeino.NewTool(d, nil)
	ctx := askeino.WithSession(t.Context(), session)

	go func() {
		a := dev.ask(t, 0)
		if _, err := uuid.Parse(a.RequestID); err != nil {
			t.Errorf("request id %q is not a UUID", a.RequestID)
		}
		answer(t, d, session, a)
	}()
	if out, err := tl.InvokableRun(ctx, frameworkArgs); err != nil || out != frameworkAnswer {
		t.Fatalf("answered: %q, %v", out, err)
	}

	out, err := tl.InvokableRun(ctx, `{"questions":[]}`)
	if err != nil || !strings.Contains(out, `"problems": ["questions: must have 1 to 4 questions, got 0"]`) {
		t.Fatalf("invalid: %q, %v", out, err)
	}

	go func() {
		a := dev.ask(t, 1)
		ev, _ := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: a.RequestID, Declined: true})
		_ = d.Deliver(context.Background(), ev)
	}()
	if out, err := tl.InvokableRun(ctx, frameworkArgs); err != nil || out != `{"error": "User declined to answer"}` {
		t.Fatalf("declined: %q, %v", out, err)
	}

	if _, err := tl.InvokableRun(t.Context(), frameworkArgs); !errors.Is(err, askeino.ErrNoSession) {
		t.Fatalf("no session: %v", err)
	}
}
