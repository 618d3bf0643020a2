package askmcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askmcp"
	"github.com/askuser-go/askuser/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A host that is an MCP client asks a server's form elicitation on the person's
// devices. Here the device is scripted: it prints what it is shown and answers.
func ExampleElicitationHandler() {
	ctx := context.Background()
	dev := newDevices()
	d := askuser.New(dev, nil)
	defer d.Close()
	session := askuser.IntSession(123)

	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, &mcp.ClientOptions{
		ElicitationHandler: askmcp.ElicitationHandler(d, session, nil),
	})
	server := mcp.NewServer(&mcp.Implementation{Name: "deployer", Version: "v1"}, nil)
	st, ct := mcp.NewInMemoryTransports()
	ss, _ := server.Connect(ctx, st, nil)
	defer ss.Close()
	cs, _ := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	defer cs.Close()

	go func() { // the person's device
		ask := dev.firstAsk()
		q := ask.Questions[0]
		fmt.Printf("%s: %q, options %s / %s\n", q.Header, q.Question, q.Options[0].Label, q.Options[1].Label)
		ev, _ := wire.NewEvent(wire.EventResult, session, wire.ResultData{
			RequestID: ask.RequestID,
			Answers:   []askuser.Answer{{Question: q.Question, SelectedLabels: []string{"Europe"}}},
		})
		_ = d.Deliver(ctx, ev)
	}()

	res, err := ss.Elicit(ctx, &mcp.ElicitParams{
		Message: "Where should we deploy?",
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"region": map[string]any{"type": "string", "title": "Region", "oneOf": []any{
					map[string]any{"const": "eu-west-1", "title": "Europe"},
					map[string]any{"const": "us-east-1", "title": "United States"},
				}},
			},
			"required": []any{"region"},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Action, res.Content)
	// Output:
	// Region: "Where should we deploy?\n\nRegion", options Europe / United States
	// accept map[region:eu-west-1]
}

// An MCP server serves ask_user_questions; the calling client, which can elicit, is
// asked by a form, and its answer is the tool result.
func ExampleAddTool() {
	ctx := context.Background()
	d := askuser.New(newDevices(), nil) // the person's other devices, here none answering
	defer d.Close()
	server := mcp.NewServer(&mcp.Implementation{Name: "askuser", Version: "v1"}, nil)
	askmcp.AddTool(server, d, nil)

	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Println("form:", req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "React"}}, nil
		},
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, _ := server.Connect(ctx, st, nil)
	defer ss.Close()
	cs, _ := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: askuser.ToolName, Arguments: json.RawMessage(
		`{"questions":[{"question":"Which framework should we use?","header":"Framework","multiSelect":false,
		  "options":[{"label":"Vue 3","description":"Matches the stack"},{"label":"React","description":"Larger ecosystem"}]}]}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// form: Which framework should we use?
	// false {"answers":[{"question":"Which framework should we use?","selectedLabels":["React"],"customInput":null}]}
}

// A host that is an MCP client gates the tools of the servers it calls: the gates are
// its Policy's Describe and, with its own tools, the tool function of RunTools.
func ExampleNewGate() {
	ctx := context.Background()
	var files, github *mcp.ClientSession // connected to two servers
	trusted := askmcp.NewGate(files, &askmcp.GateOptions{Server: "files", Trusted: true, Prefix: "files_"})
	other := askmcp.NewGate(github, &askmcp.GateOptions{Server: "github", Prefix: "github_"})
	hub := newDevices() // wshub, in a host
	d := askuser.New(hub, &askuser.Options{Policy: &askuser.Policy{
		Deny:     []askuser.Rule{{Tool: "github_delete_*"}}, // the host's rules come first
		Describe: askmcp.Describe(trusted, other),
	}})
	defer d.Close()
	var calls []askuser.ToolCall // the model's turn
	var hostTools askuser.ToolFunc
	for _, out := range d.RunTools(ctx, calls, askmcp.Run(hostTools, trusted, other)) {
		_ = out // out.Content and out.IsError go back to the model
	}
}

// A server whose own tool is destructive has each call approved on the person's
// devices, never by eliciting the calling client.
func ExampleApproved() {
	hub := newDevices() // wshub, in a host
	d := askuser.New(hub, nil)
	defer d.Close()
	tool := &mcp.Tool{Name: "delete_branch", Description: "Deletes a git branch", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
	server := mcp.NewServer(&mcp.Implementation{Name: "git", Version: "v1"}, nil)
	server.AddTool(tool, askmcp.Approved(d, tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// runs only once the person approved, with the arguments approved
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil
	}, nil))
}
