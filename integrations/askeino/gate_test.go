package askeino_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/integrations/askeino"
	"github.com/askuser-go/askuser/internal/paneltest"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// hostTool is one of paneltest.Host's tools as an Eino tool: the host's own tool that
// the gate wraps.
type hostTool struct {
	name string
	host *paneltest.Host
}

func (h hostTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: h.name, Desc: "The host's " + h.name}, nil
}

func (h hostTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	return h.host.Run(ctx, askuser.ToolCall{ID: compose.GetToolCallID(ctx), Name: h.name, Arguments: json.RawMessage(args)})
}

// The recorded gated turn, as Eino tool calls: list_files runs, write_file waits for
// the person, drop_table is denied.
var gatedCalls = []schema.ToolCall{
	{ID: "call_list", Function: schema.FunctionCall{Name: "list_files", Arguments: `{"dir":"web/src/pages"}`}},
	{ID: "call_write", Function: schema.FunctionCall{Name: "write_file", Arguments: `{"path":"web/src/pages/settings.tsx","content":"export default function Settings() {\n  return <SettingsLayout />;\n}\n"}`}},
	{ID: "call_drop", Function: schema.FunctionCall{Name: "drop_table", Arguments: `{"table":"legacy_user_prefs"}`}},
}

// gatedTools wraps the host's three tools with gate.
func gatedTools(host *paneltest.Host, gate func(tool.InvokableTool) tool.BaseTool) []tool.BaseTool {
	var out []tool.BaseTool
	for _, c := range gatedCalls {
		out = append(out, gate(hostTool{c.Function.Name, host}))
	}
	return out
}

// checkToolMessages checks the tool messages the model was given for the gated turn:
// one per call, under its id, with the exact results, write_file's edited.
func checkToolMessages(t *testing.T, m *scriptedModel) {
	t.Helper()
	checkToolMessagesWith(t, m, paneltest.WriteFileEdited)
}

// checkToolMessagesWith is checkToolMessages with written as write_file's result.
func checkToolMessagesWith(t *testing.T, m *scriptedModel, written string) {
	t.Helper()
	want := map[string]string{
		"call_list":  paneltest.ListFilesOutput,
		"call_write": written,
		"call_drop":  paneltest.DropTableDenied,
	}
	got := map[string]string{}
	for _, tm := range m.toolMessages(t) {
		got[tm.ToolCallID] = tm.Content
	}
	for id, content := range want {
		if got[id] != content {
			t.Errorf("tool message of %s:\n%s\nwant:\n%s", id, got[id], content)
		}
	}
	if len(got) != len(want) {
		t.Errorf("tool messages %v, want one per call", got)
	}
}

// gatedReAct is Eino's ReAct agent on a model that makes the recorded gated turn, with
// the host's three tools wrapped by gate.
func gatedReAct(t *testing.T, host *paneltest.Host, gate func(tool.InvokableTool) tool.BaseTool) (*react.Agent, *scriptedModel) {
	t.Helper()
	m := &scriptedModel{calls: gatedCalls}
	agent, err := react.NewAgent(t.Context(), &react.AgentConfig{
		ToolCallingModel: m,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: gatedTools(host, gate)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return agent, m
}

// TestReActAgentGates: Eino's ReAct agent runs the host's three tools behind the
// blocking Gate, in parallel: the device is asked about write_file alone, under its
// tool-call id, and edits or denies it once list_files has run (so list_files ran while
// its sibling waited); write_file runs with the edit, or not at all, drop_table never
// runs, and the model is given every result under its call's id.
func TestReActAgentGates(t *testing.T) {
	paneltest.EachDecision(t, session, func(t *testing.T, g paneltest.GatedTurn) {
		agent, m := gatedReAct(t, g.Host, func(inner tool.InvokableTool) tool.BaseTool {
			return askeino.NewGate(g.D, inner, nil)
		})
		if _, err := agent.Generate(askeino.WithSession(t.Context(), session), []*schema.Message{schema.UserMessage("Add the settings page.")}); err != nil {
			t.Fatal(err)
		}
		checkToolMessagesWith(t, m, g.Written)
		g.Check(t, "call_list", "call_write")
		if len(m.tools) != 3 || m.tools[1].Name != "write_file" {
			t.Errorf("the model was given tools %v, want the wrapped tools' infos", m.tools)
		}
	})
}

// TestGateRefusals: a call the Policy denies does not reach the tool and is a result
// for the model with a nil error; a run without a session is an error.
func TestGateRefusals(t *testing.T) {
	d, _, host := gatedDispatcher(t, nil)
	g := askeino.NewGate(d, hostTool{"drop_table", host}, nil)
	if out, err := g.InvokableRun(askeino.WithSession(t.Context(), session), `{"table":"t"}`); err != nil || out != paneltest.DropTableDenied {
		t.Errorf("denied: %q, %v", out, err)
	}
	if _, err := g.InvokableRun(t.Context(), `{}`); err != askeino.ErrNoSession {
		t.Errorf("no session: %v", err)
	}
	if ran := host.Ran(); len(ran) != 0 {
		t.Errorf("the tool ran %+v", ran)
	}
}

// interruptedGate runs the gated turn's first invocation in a checkpointing graph: the
// allowed and the denied call end at once, and the run interrupts on write_file's
// approval alone, which the devices were shown under its tool-call id. It returns the
// interrupt's id.
func interruptedGate(t *testing.T, r compose.Runnable[[]*schema.Message, *schema.Message], ctx context.Context, dev *devices, checkpoint string) string {
	t.Helper()
	_, err := r.Invoke(ctx, []*schema.Message{schema.UserMessage("Add the settings page.")}, compose.WithCheckPointID(checkpoint))
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok {
		t.Fatalf("%v: %v", errNoInterrupt, err)
	}
	if len(info.InterruptContexts) != 1 {
		t.Fatalf("%d interrupts, want write_file's alone", len(info.InterruptContexts))
	}
	ic := info.InterruptContexts[0]
	if got := ic.Address.String(); got != "runnable:agent;node:tools;tool:write_file:call_write" {
		t.Fatalf("interrupt address %q", got)
	}
	a, ok := ic.Info.(*askeino.Approval)
	if !ok || a.RequestID != "call_write" || a.Tool != "write_file" || a.Arguments != gatedCalls[1].Function.Arguments {
		t.Fatalf("interrupt info %#v", ic.Info)
	}
	if shown := dev.approval(t, 0); shown.RequestID != "call_write" || shown.Tool != "write_file" {
		t.Fatalf("the devices were shown %+v", shown)
	}
	return ic.ID
}

// decide sends a device's decision on the approval it was shown.
func decide(t *testing.T, d *askuser.Dispatcher, a wire.ApprovalData, data wire.ApprovalResultData) {
	t.Helper()
	data.RequestID, data.Digest = a.RequestID, a.Digest
	ev, err := wire.NewEvent(wire.EventApprovalResult, session, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Deliver(context.Background(), ev); err != nil {
		t.Error(err)
	}
}

// gatedDispatcher is a dispatcher gating by paneltest.Policy, asking the recording
// devices, with the host's tools; onAudit may be nil.
func gatedDispatcher(t *testing.T, onAudit func(observe.Audit)) (*askuser.Dispatcher, *devices, *paneltest.Host) {
	t.Helper()
	dev := newDevices()
	d := askuser.New(dev, &askuser.Options{Policy: paneltest.Policy(), Observer: observe.Hooks{OnAudit: onAudit}})
	t.Cleanup(func() { d.Close() })
	return d, dev, paneltest.NewHost()
}

// gatedGraph is the checkpointing graph of the gated turn, each tool behind an
// InterruptGate of d.
func gatedGraph(t *testing.T, d *askuser.Dispatcher, host *paneltest.Host) (compose.Runnable[[]*schema.Message, *schema.Message], *scriptedModel) {
	t.Helper()
	m := &scriptedModel{calls: gatedCalls}
	return agentGraph(t, m, &memoryStore{}, gatedTools(host, func(inner tool.InvokableTool) tool.BaseTool {
		return askeino.NewInterruptGate(d, inner, nil)
	})...), m
}

// TestInterruptGateResumesWithTheDecision: the run interrupts for write_file's
// approval (list_files has run, drop_table was refused); a device edits it while the
// run is interrupted, and the approval ends (the dispatcher's store forgets it); the
// resumed run, under the same call id, gets that decision without asking again, runs
// write_file with the edit, and the model gets every result. list_files does not run
// again.
func TestInterruptGateResumesWithTheDecision(t *testing.T) {
	d, dev, host := gatedDispatcher(t, nil)
	r, m := gatedGraph(t, d, host)
	ctx := askeino.WithSession(t.Context(), session)

	id := interruptedGate(t, r, ctx, dev, "gate-1")
	decide(t, d, dev.approval(t, 0), wire.ApprovalResultData{Decision: wire.DecisionEdit, Arguments: json.RawMessage(paneltest.WriteFileEdit)})
	dev.nth(t, wire.EventApprovalResolved, 0)
	if pending := askusertest.Approvals(d, session); len(pending) != 0 {
		t.Fatalf("still pending: %+v", pending)
	}

	if _, err := r.Invoke(compose.Resume(ctx, id), nil, compose.WithCheckPointID("gate-1")); err != nil {
		t.Fatal(err)
	}
	checkToolMessages(t, m)
	host.CheckGatedTurn(t, dev.approvals(t), "call_list", "call_write")
	if n := dev.count(wire.EventApproval); n != 1 {
		t.Errorf("asked %d times", n)
	}
}

// TestInterruptGateResumeWaits: resumed before anyone decided, the call waits for the
// device's decision.
func TestInterruptGateResumeWaits(t *testing.T) {
	d, dev, host := gatedDispatcher(t, nil)
	r, m := gatedGraph(t, d, host)
	ctx := askeino.WithSession(t.Context(), session)
	id := interruptedGate(t, r, ctx, dev, "gate-2")
	var wg sync.WaitGroup
	wg.Go(func() {
		decide(t, d, dev.approval(t, 0), wire.ApprovalResultData{Decision: wire.DecisionEdit, Arguments: json.RawMessage(paneltest.WriteFileEdit)})
	})
	_, err := r.Invoke(compose.Resume(ctx, id), nil, compose.WithCheckPointID("gate-2"))
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	checkToolMessages(t, m)
	if n := dev.count(wire.EventApproval); n != 1 {
		t.Errorf("asked %d times", n)
	}
}

// TestInterruptGateResumeWithData: the host resumes with the person's decision as
// resume data, a denial with a reason: it counts as a device's (the devices see the
// approval end, the audit record names who decided), write_file does not run, and the
// model gets the denial with the reason.
func TestInterruptGateResumeWithData(t *testing.T) {
	var mu sync.Mutex
	var audits []observe.Audit
	d, dev, host := gatedDispatcher(t, func(a observe.Audit) {
		mu.Lock()
		audits = append(audits, a)
		mu.Unlock()
	})
	r, m := gatedGraph(t, d, host)
	ctx := askeino.WithSession(t.Context(), session)
	id := interruptedGate(t, r, ctx, dev, "gate-3")

	resume := &askeino.ApprovalResume{Decision: wire.DecisionDeny, Reason: "Not now", By: "alice"}
	if _, err := r.Invoke(compose.ResumeWithData(ctx, id, resume), nil, compose.WithCheckPointID("gate-3")); err != nil {
		t.Fatal(err)
	}
	const denied = `{"error": "The user denied this tool call; the tool did not run. Do not call it again unless the user asks you to.", "reason": "Not now"}`
	for _, tm := range m.toolMessages(t) {
		if tm.ToolCallID == "call_write" && tm.Content != denied {
			t.Errorf("write_file's tool message %q, want %q", tm.Content, denied)
		}
	}
	for _, c := range host.Ran() {
		if c.Name == "write_file" {
			t.Errorf("write_file ran: %+v", c)
		}
	}
	if dev.count(wire.EventApproval) != 1 || dev.count(wire.EventApprovalResolved) != 1 {
		t.Errorf("%d approvals, %d resolutions", dev.count(wire.EventApproval), dev.count(wire.EventApprovalResolved))
	}
	mu.Lock()
	defer mu.Unlock()
	var byPerson []observe.Audit
	for _, a := range audits {
		if a.RequestID == "call_write" {
			byPerson = append(byPerson, a)
		}
	}
	if len(byPerson) != 1 || byPerson[0].Outcome != askuser.Denied || byPerson[0].By != "alice" || byPerson[0].Reason != "Not now" {
		t.Errorf("audited %+v", byPerson)
	}
}

// TestInterruptGateNoApprovalNeeded: a turn whose calls the Policy decides at once
// never interrupts.
func TestInterruptGateNoApprovalNeeded(t *testing.T) {
	d, dev, host := gatedDispatcher(t, nil)
	m := &scriptedModel{calls: []schema.ToolCall{gatedCalls[0], gatedCalls[2]}}
	r := agentGraph(t, m, &memoryStore{},
		askeino.NewInterruptGate(d, hostTool{"list_files", host}, nil), askeino.NewInterruptGate(d, hostTool{"drop_table", host}, nil))
	if _, err := r.Invoke(askeino.WithSession(t.Context(), session), []*schema.Message{schema.UserMessage("go")}, compose.WithCheckPointID("gate-4")); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tm := range m.toolMessages(t) {
		got[tm.ToolCallID] = tm.Content
	}
	if got["call_list"] != paneltest.ListFilesOutput || got["call_drop"] != paneltest.DropTableDenied || dev.count(wire.EventApproval) != 0 {
		t.Errorf("tool messages %v after %d approvals", got, dev.count(wire.EventApproval))
	}
}

// TestReActAgentInterruptGate: Eino's ReAct agent, as a node of a graph that keeps
// checkpoints, runs the host's three tools behind InterruptGates. The run interrupts
// for write_file's approval alone (list_files has run, drop_table was refused); a
// device edits it while the run is interrupted; the run resumed under the same call id
// gets that edit without a second ask, and the model is given every result under its
// call's id.
func TestReActAgentInterruptGate(t *testing.T) {
	d, dev, host := gatedDispatcher(t, nil)
	agent, m := gatedReAct(t, host, func(inner tool.InvokableTool) tool.BaseTool {
		return askeino.NewInterruptGate(d, inner, nil)
	})
	sub, opts := agent.ExportGraph()
	g := compose.NewGraph[[]*schema.Message, *schema.Message]()
	must(t, g.AddGraphNode("react", sub, opts...))
	must(t, g.AddEdge(compose.START, "react"))
	must(t, g.AddEdge("react", compose.END))
	r, err := g.Compile(t.Context(), compose.WithCheckPointStore(&memoryStore{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := askeino.WithSession(t.Context(), session)

	_, err = r.Invoke(ctx, []*schema.Message{schema.UserMessage("Add the settings page.")}, compose.WithCheckPointID("react-1"))
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok {
		t.Fatalf("%v: %v", errNoInterrupt, err)
	}
	if len(info.InterruptContexts) != 1 {
		t.Fatalf("%d interrupts, want write_file's alone", len(info.InterruptContexts))
	}
	ic := info.InterruptContexts[0]
	if a, ok := ic.Info.(*askeino.Approval); !ok || a.RequestID != "call_write" || a.Tool != "write_file" {
		t.Fatalf("interrupt info %#v", ic.Info)
	}
	decide(t, d, dev.approval(t, 0), wire.ApprovalResultData{Decision: wire.DecisionEdit, Arguments: json.RawMessage(paneltest.WriteFileEdit)})
	dev.nth(t, wire.EventApprovalResolved, 0)

	if _, err := r.Invoke(compose.Resume(ctx, ic.ID), nil, compose.WithCheckPointID("react-1")); err != nil {
		t.Fatal(err)
	}
	checkToolMessages(t, m)
	host.CheckGatedTurn(t, dev.approvals(t), "call_list", "call_write")
	if n := dev.count(wire.EventApproval); n != 1 {
		t.Errorf("asked %d times", n)
	}
}
