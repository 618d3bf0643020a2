package askeino_test

import (
	"context"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askeino"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
)

// agentGraph is a ReAct loop as a compose graph (a chat model node, a ToolsNode with
// the tools, a branch back to the model), compiled with a checkpoint store, as Eino's
// own interrupt-and-resume tests build it.
func agentGraph(t *testing.T, m *scriptedModel, store compose.CheckPointStore, tls ...tool.BaseTool) compose.Runnable[[]*schema.Message, *schema.Message] {
	t.Helper()
	ctx := t.Context()
	var infos []*schema.ToolInfo
	for _, tl := range tls {
		info, err := tl.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
	}
	cm, err := m.WithTools(infos)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tls})
	if err != nil {
		t.Fatal(err)
	}
	g := compose.NewGraph[[]*schema.Message, *schema.Message]()
	must(t, g.AddChatModelNode("model", cm))
	must(t, g.AddToolsNode("tools", tools))
	must(t, g.AddEdge(compose.START, "model"))
	must(t, g.AddBranch("model", compose.NewGraphBranch(func(_ context.Context, msg *schema.Message) (string, error) {
		if len(msg.ToolCalls) > 0 {
			return "tools", nil
		}
		return compose.END, nil
	}, map[string]bool{"tools": true, compose.END: true})))
	must(t, g.AddEdge("tools", "model"))
	r, err := g.Compile(ctx, compose.WithCheckPointStore(store), compose.WithGraphName("agent"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// interrupted runs the graph's first invocation, which must interrupt on the tool, and
// returns the interrupt's id and info.
func interrupted(t *testing.T, r compose.Runnable[[]*schema.Message, *schema.Message], ctx context.Context, checkpoint string) (string, *askeino.Question) {
	t.Helper()
	_, err := r.Invoke(ctx, []*schema.Message{schema.UserMessage("Start the new module.")}, compose.WithCheckPointID(checkpoint))
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok {
		t.Fatalf("%v: %v", errNoInterrupt, err)
	}
	if len(info.InterruptContexts) != 1 {
		t.Fatalf("%d interrupts", len(info.InterruptContexts))
	}
	ic := info.InterruptContexts[0]
	if got := ic.Address.String(); got != "runnable:agent;node:tools;tool:ask_user_questions:call_1" {
		t.Fatalf("interrupt address %q", got)
	}
	q, ok := ic.Info.(*askeino.Question)
	if !ok {
		t.Fatalf("interrupt info %T", ic.Info)
	}
	return ic.ID, q
}

// TestInterruptAndResume: the first run asks the question (the devices see it at once,
// with the tool-call id) and interrupts; a device answers; the resumed run gets the
// answer as the tool result, and the question was asked once.
func TestInterruptAndResume(t *testing.T) {
	d, dev := newDispatcher(t)
	m := &scriptedModel{callID: "call_1", args: frameworkArgs}
	r := agentGraph(t, m, &memoryStore{}, askeino.NewInterruptTool(d, nil))
	ctx := askeino.WithSession(t.Context(), session)

	id, q := interrupted(t, r, ctx, "run-1")
	if q.RequestID != "call_1" || len(q.Questions) != 1 {
		t.Fatalf("interrupt info %+v", q)
	}
	a := dev.ask(t, 0)
	if a.RequestID != "call_1" {
		t.Fatalf("asked with id %q", a.RequestID)
	}
	answer(t, d, session, a)

	out, err := r.Invoke(compose.Resume(ctx, id), nil, compose.WithCheckPointID("run-1"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Content != "The user said: "+frameworkAnswer {
		t.Fatalf("final message %q", out.Content)
	}
	if tm := m.toolMessage(t); tm.ToolCallID != "call_1" || tm.Content != frameworkAnswer {
		t.Fatalf("tool message %q: %q", tm.ToolCallID, tm.Content)
	}
	if n := dev.count(wire.EventAsk); n != 1 {
		t.Fatalf("asked %d times", n)
	}
}

// TestResumeWaitsForAnswer: resumed before anyone answered, the call waits for the
// device's answer.
func TestResumeWaitsForAnswer(t *testing.T) {
	d, dev := newDispatcher(t)
	m := &scriptedModel{callID: "call_1", args: frameworkArgs}
	r := agentGraph(t, m, &memoryStore{}, askeino.NewInterruptTool(d, nil))
	ctx := askeino.WithSession(t.Context(), session)
	id, _ := interrupted(t, r, ctx, "run-2")
	go func() { answer(t, d, session, dev.ask(t, 0)) }()
	out, err := r.Invoke(compose.Resume(ctx, id), nil, compose.WithCheckPointID("run-2"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Content != "The user said: "+frameworkAnswer || dev.count(wire.EventAsk) != 1 {
		t.Fatalf("final message %q after %d asks", out.Content, dev.count(wire.EventAsk))
	}
}

// TestResumeWithData: the host resumes with the person's answers, or their decline,
// as resume data; they count as a device's (the devices see the question end) and the
// model gets them.
func TestResumeWithData(t *testing.T) {
	for _, c := range []struct {
		name    string
		data    func(q *askeino.Question) *askeino.Resume
		content string
		outcome askuser.Outcome
	}{
		{"answers", func(q *askeino.Question) *askeino.Resume {
			return &askeino.Resume{Answers: []askuser.Answer{{Question: q.Questions[0].Question, SelectedLabels: []string{"React"}}}}
		}, `{"answers":[{"question":"Which framework should we use?","selectedLabels":["React"],"customInput":null}]}`, askuser.Answered},
		{"decline", func(*askeino.Question) *askeino.Resume { return &askeino.Resume{Declined: true} }, `{"error": "User declined to answer"}`, askuser.Declined},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := newDevices()
			var ended []observe.Observation
			d := askuser.New(dev, &askuser.Options{Observer: observe.Hooks{OnEnd: func(e observe.Observation) { ended = append(ended, e) }}})
			defer d.Close()
			m := &scriptedModel{callID: "call_1", args: frameworkArgs}
			r := agentGraph(t, m, &memoryStore{}, askeino.NewInterruptTool(d, nil))
			ctx := askeino.WithSession(t.Context(), session)
			id, q := interrupted(t, r, ctx, "run-3")
			out, err := r.Invoke(compose.ResumeWithData(ctx, id, c.data(q)), nil, compose.WithCheckPointID("run-3"))
			if err != nil {
				t.Fatal(err)
			}
			if out.Content != "The user said: "+c.content {
				t.Fatalf("final message %q", out.Content)
			}
			if len(ended) != 1 || ended[0].Outcome != c.outcome || ended[0].RequestID != "call_1" {
				t.Fatalf("ended %+v", ended)
			}
			if dev.count(wire.EventAsk) != 1 || dev.count(wire.EventResolved) != 1 {
				t.Fatalf("%d asks, %d resolutions", dev.count(wire.EventAsk), dev.count(wire.EventResolved))
			}
		})
	}
}

// TestInterruptToolInvalidArguments: invalid arguments are answered at once, without
// interrupting, and nobody is asked.
func TestInterruptToolInvalidArguments(t *testing.T) {
	d, dev := newDispatcher(t)
	m := &scriptedModel{callID: "call_1", args: `{"questions":"nope"}`}
	r := agentGraph(t, m, &memoryStore{}, askeino.NewInterruptTool(d, nil))
	out, err := r.Invoke(askeino.WithSession(t.Context(), session), []*schema.Message{schema.UserMessage("go")}, compose.WithCheckPointID("run-4"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "The user said: {\"error\": \"Invalid arguments"; len(out.Content) < len(want) || out.Content[:len(want)] != want {
		t.Fatalf("final message %q", out.Content)
	}
	if dev.count(wire.EventAsk) != 0 {
		t.Fatal("a device was asked")
	}
}
