package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkRoundTrip is one question asked and answered at once, end to end, by askuser
// and by the MCP Go SDK's elicitation, in the same run.
//
//   - askuser: the model's arguments (JSON) into Dispatcher.Dispatch, validated, sent
//     through an askusertest.Transport; a device goroutine receives the ask event, decodes it and
//     answers with askusertest.Device.Send; the tool result string comes out.
//   - mcp: a server session over mcp.NewInMemoryTransports calls ServerSession.Elicit with
//     the same question as a form (an enum property plus an optional free-text property,
//     our "Other"); the client's ElicitationHandler accepts at once; the content is
//     encoded as the result string. The schema is built once, outside the loop.
//   - mcp-toolcall: the closest MCP equivalent of the whole askuser path: the client calls
//     a tool with the model's arguments, the tool's handler decodes them, builds the form,
//     elicits from within the call, and returns the answer as the tool result text.
//
// The -4q variants ask four questions of four options, each option with a description
// and a markdown preview (MCP: four enum properties whose descriptions carry the option
// descriptions and previews, plus four optional free-text properties).
func BenchmarkRoundTrip(b *testing.B) {
	for _, c := range []struct {
		suffix string
		args   []byte
	}{{"", typicalArgs}, {"-4q", fourArgs}} {
		b.Run("askuser"+c.suffix, func(b *testing.B) { benchAskuser(b, c.args) })
		b.Run("mcp"+c.suffix, func(b *testing.B) { benchMCPElicit(b, c.args) })
		b.Run("mcp-toolcall"+c.suffix, func(b *testing.B) { benchMCPToolCall(b, c.args) })
	}
}

func benchAskuser(b *testing.B, args []byte) {
	ctx := context.Background()
	mt := askusertest.NewTransport()
	d := askuser.New(mt, nil)
	defer d.Close()
	session := askuser.IntSession(123)
	dev := mt.Connect(session)
	done := make(chan struct{})
	go func() {
		defer close(done)
		answerAsks(ctx, dev)
	}()
	defer func() { dev.Close(); <-done }()

	b.ReportAllocs()
	stop := cpuTime(b)
	for b.Loop() {
		res := d.Dispatch(ctx, askuser.ToolCall{Session: session, Arguments: args})
		if res.Outcome != askuser.Answered {
			b.Fatalf("outcome %v: %s", res.Outcome, res.Content)
		}
	}
	stop()
}

// answerAsks is a device that answers every question with its first option, as fast as
// it can, until the device is closed.
func answerAsks(ctx context.Context, dev *askusertest.Device) {
	for {
		ev, err := dev.Recv(ctx)
		if err != nil {
			return
		}
		if ev.Type != wire.EventAsk {
			continue // the resolution event, or anything else: nothing to do
		}
		var ask wire.AskData
		if err := json.Unmarshal(ev.Data, &ask); err != nil {
			panic(err)
		}
		res := wire.ResultData{RequestID: ask.RequestID}
		for _, q := range ask.Questions {
			res.Answers = append(res.Answers, askuser.Answer{Question: q.Question, SelectedLabels: []string{q.Options[0].Label}})
		}
		data, err := json.Marshal(res)
		if err != nil {
			panic(err)
		}
		if err := dev.Send(ctx, wire.Event{Type: wire.EventResult, SessionID: dev.Session(), Data: data}); err != nil {
			panic(err)
		}
	}
}

// elicitForm turns a question set into an MCP elicitation: one enum property per question
// (its options' labels), whose description carries the question, the options'
// descriptions and previews; and one optional free-text property per question, the
// "Other" every askuser client offers. Nothing is required, since either property of a
// question may answer it.
func elicitForm(req *askuser.Request) *mcp.ElicitParams {
	props := map[string]any{}
	var msg strings.Builder
	for i, q := range req.Questions {
		var desc strings.Builder
		desc.WriteString(q.Question)
		labels := make([]string, len(q.Options))
		for k, o := range q.Options {
			labels[k] = o.Label
			fmt.Fprintf(&desc, "\n- %s: %s", o.Label, o.Description)
			if o.Preview != "" {
				desc.WriteString("\n" + o.Preview)
			}
		}
		props[fmt.Sprintf("q%d", i)] = map[string]any{"type": "string", "title": q.Header, "description": desc.String(), "enum": labels}
		props[fmt.Sprintf("q%dOther", i)] = map[string]any{"type": "string", "title": "Other", "description": "Your own answer instead", "minLength": 1}
		if i > 0 {
			msg.WriteString("\n")
		}
		msg.WriteString(q.Question)
	}
	return &mcp.ElicitParams{
		Message:         msg.String(),
		RequestedSchema: map[string]any{"type": "object", "properties": props},
	}
}

// answerForm is the client's side: accept at once, choosing the first value of every
// enum property.
func answerForm(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	schema, _ := req.Params.RequestedSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	content := map[string]any{}
	for name, p := range props {
		if enum, ok := p.(map[string]any)["enum"].([]any); ok {
			content[name] = enum[0]
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// mcpPair connects a server and a client with an elicitation handler over in-memory
// transports. The protocol version is pinned to 2025-11-25: from 2026-07-28 on, a server
// may not send elicitation/create while serving a request (SEP-2322), and the SDK's
// default is the latest version.
func mcpPair(b *testing.B, server *mcp.Server) (*mcp.ServerSession, *mcp.ClientSession) {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "v0.0.1"}, &mcp.ClientOptions{ElicitationHandler: answerForm})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		b.Fatalf("negotiated protocol version %s", v)
	}
	return ss, cs
}

func benchMCPElicit(b *testing.B, args []byte) {
	ctx := context.Background()
	req, err := askuser.ParseArguments(args)
	if err != nil {
		b.Fatal(err)
	}
	params := elicitForm(req)
	ss, cs := mcpPair(b, mcp.NewServer(&mcp.Implementation{Name: "bench-server", Version: "v0.0.1"}, nil))
	defer cs.Close()
	defer ss.Close()

	b.ReportAllocs()
	stop := cpuTime(b)
	for b.Loop() {
		res, err := ss.Elicit(ctx, params)
		if err != nil {
			b.Fatal(err)
		}
		if res.Action != "accept" {
			b.Fatalf("action %q", res.Action)
		}
		out, err := json.Marshal(res.Content)
		if err != nil {
			b.Fatal(err)
		}
		_ = string(out)
	}
	stop()
}

func benchMCPToolCall(b *testing.B, args []byte) {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "bench-server", Version: "v0.0.1"}, nil)
	def := askuser.Definition()
	server.AddTool(&mcp.Tool{Name: def.Name, Description: def.Description, InputSchema: def.InputSchema},
		func(ctx context.Context, call *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var req askuser.Request
			if err := json.Unmarshal(call.Params.Arguments, &req); err != nil {
				return nil, err
			}
			res, err := call.Session.Elicit(ctx, elicitForm(&req))
			if err != nil {
				return nil, err
			}
			out, err := json.Marshal(res.Content)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
		})
	ss, cs := mcpPair(b, server)
	defer cs.Close()
	defer ss.Close()
	params := &mcp.CallToolParams{Name: def.Name, Arguments: json.RawMessage(args)}

	b.ReportAllocs()
	stop := cpuTime(b)
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			b.Fatal(err)
		}
		if res.IsError || len(res.Content) != 1 {
			b.Fatalf("tool result %+v", res)
		}
		_ = res.Content[0].(*mcp.TextContent).Text
	}
	stop()
}
