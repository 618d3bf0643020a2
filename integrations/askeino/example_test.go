package askeino_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askeino"
	"github.com/askuser-go/askuser/internal/paneltest"
	"github.com/askuser-go/askuser/wire"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// Eino's ReAct agent runs ask_user_questions when its model calls it; a scripted device
// answers, and the model reads the answer as the tool message of its call.
func ExampleNewTool() {
	ctx := context.Background()
	dev := newDevices()
	d := askuser.New(dev, nil)
	defer d.Close()
	session := askuser.IntSession(123)

	model := &scriptedModel{callID: "call_1", args: `{"questions":[{"question":"Which framework should we use?",
		"header":"Framework","multiSelect":false,"options":[{"label":"Vue 3","description":"Matches the stack"},
		{"label":"React","description":"Larger ecosystem"}]}]}`}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: model,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: []tool.BaseTool{askeino.NewTool(d, nil)}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() { // the person's device
		<-dev.wake
		dev.mu.Lock()
		var ask wire.AskData
		_ = json.Unmarshal(dev.events[0].Data, &ask)
		dev.mu.Unlock()
		fmt.Println("asked:", ask.RequestID, ask.Questions[0].Question)
		ev, _ := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: ask.RequestID,
			Answers: []askuser.Answer{{Question: ask.Questions[0].Question, SelectedLabels: []string{"React"}}}})
		_ = d.Deliver(ctx, ev)
	}()
	out, err := agent.Generate(askeino.WithSession(ctx, session), []*schema.Message{schema.UserMessage("Start the new module.")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Content)
	// Output:
	// asked: call_1 Which framework should we use?
	// The user said: {"answers":[{"question":"Which framework should we use?","selectedLabels":["React"],"customInput":null}]}
}

// The host's own tool behind the gate: the dispatcher's Policy lets list_files run and
// refuses drop_table; a call it asks about would wait for the person's decision on one of
// their devices. The model reads each result as the tool message of its call.
func ExampleNewGate() {
	ctx := context.Background()
	d := askuser.New(newDevices(), &askuser.Options{Policy: &askuser.Policy{
		Deny:  []askuser.Rule{{Tool: "drop_*"}},
		Allow: []askuser.Rule{{Tool: "list_files"}},
	}})
	defer d.Close()

	dropTable := hostTool{name: "drop_table"} // the host's own tool.InvokableTool
	model := &scriptedModel{calls: []schema.ToolCall{{ID: "call_1", Function: schema.FunctionCall{Name: "drop_table", Arguments: `{"table":"users"}`}}}}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: model,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: []tool.BaseTool{askeino.NewGate(d, dropTable, nil)}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := agent.Generate(askeino.WithSession(ctx, askuser.IntSession(123)), []*schema.Message{schema.UserMessage("Clean up the database.")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Content)
	// Output:
	// The user said: {"error": "This tool call is not allowed here; the tool did not run. Do not call it again."}
}

// The host's tool behind the interrupting gate, in the ReAct agent as a node of a graph
// that keeps checkpoints: the call waits for the person, so the run interrupts with the
// approval as its info; the host resumes it later, here with the person's decision
// obtained elsewhere, and the tool runs once, with the arguments approved.
func ExampleNewInterruptGate() {
	ctx := context.Background()
	d := askuser.New(newDevices(), &askuser.Options{Policy: &askuser.Policy{Ask: []askuser.Rule{{Tool: "write_file"}}}})
	defer d.Close()
	ctx = askeino.WithSession(ctx, askuser.IntSession(123))

	writeFile := hostTool{name: "write_file", host: paneltest.NewHost()} // the host's own tool.InvokableTool
	model := &scriptedModel{calls: []schema.ToolCall{{ID: "call_1", Function: schema.FunctionCall{Name: "write_file", Arguments: `{"path":"a.txt","content":"hi"}`}}}}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: model,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: []tool.BaseTool{askeino.NewInterruptGate(d, writeFile, nil)}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	sub, opts := agent.ExportGraph()
	g := compose.NewGraph[[]*schema.Message, *schema.Message]()
	_ = g.AddGraphNode("agent", sub, opts...)
	_ = g.AddEdge(compose.START, "agent")
	_ = g.AddEdge("agent", compose.END)
	graph, err := g.Compile(ctx, compose.WithCheckPointStore(&memoryStore{}))
	if err != nil {
		fmt.Println(err)
		return
	}

	_, err = graph.Invoke(ctx, []*schema.Message{schema.UserMessage("Write a.txt.")}, compose.WithCheckPointID("run-1"))
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok {
		fmt.Println("no interrupt:", err)
		return
	}
	ic := info.InterruptContexts[0]
	a := ic.Info.(*askeino.Approval)
	fmt.Println("waiting for approval:", a.RequestID, a.Tool, a.Arguments)

	resume := &askeino.ApprovalResume{Decision: wire.DecisionApprove, By: "alice"}
	out, err := graph.Invoke(compose.ResumeWithData(ctx, ic.ID, resume), nil, compose.WithCheckPointID("run-1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Content)
	// Output:
	// waiting for approval: call_1 write_file {"path":"a.txt","content":"hi"}
	// The user said: {"wrote":"a.txt","bytes":2}
}
