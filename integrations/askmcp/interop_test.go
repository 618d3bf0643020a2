package askmcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askmcp"
	mgoclient "github.com/mark3labs/mcp-go/client"
	mgotransport "github.com/mark3labs/mcp-go/client/transport"
	mgo "github.com/mark3labs/mcp-go/mcp"
	mgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The other Go MCP implementation, github.com/mark3labs/mcp-go, plays the other side:
// its server elicits through our host side, and its client calls our tool.

// TestMCPGoServerElicitsThroughHost: an mcp-go server's tool elicits a form (over
// streamable HTTP, on 2025-11-25); the go-sdk client's askmcp handler asks it on a
// device; the server's tool gets the content.
func TestMCPGoServerElicitsThroughHost(t *testing.T) {
	h := newHost(t, nil)
	srv := mgoserver.NewMCPServer("mcp-go-server", "1.0.0", mgoserver.WithElicitation())
	srv.AddTool(mgo.NewTool("deploy"), func(ctx context.Context, req mgo.CallToolRequest) (*mgo.CallToolResult, error) {
		res, err := srv.RequestElicitation(ctx, mgo.ElicitationRequest{Params: mgo.ElicitationParams{
			Message: "Where to?",
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"region":  map[string]any{"type": "string", "title": "Region", "enum": []string{"eu", "us"}},
					"canary":  map[string]any{"type": "boolean", "title": "Canary"},
					"percent": map[string]any{"type": "integer", "title": "Percent", "minimum": 1, "maximum": 100},
				},
				"required": []string{"region", "canary", "percent"},
			},
		}})
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res.Content)
		return mgo.NewToolResultText(string(res.Action) + " " + string(b)), nil
	})
	hs := httptest.NewServer(mgoserver.NewStreamableHTTPServer(srv))
	defer hs.Close()
	cs, err := h.client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	go func() {
		a, _ := h.devices.ask(t, 0)
		_ = answer(t, h.d, h.session, a.RequestID,
			pick(a.Questions[0].Question, "us"), pick(a.Questions[1].Question, "Yes"), typed(a.Questions[2].Question, "25"))
	}()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); got != `accept {"canary":true,"percent":25,"region":"us"}` {
		t.Fatalf("mcp-go tool result %q", got)
	}
}

// mgoElicitor is an mcp-go client's elicitation handler answering with content.
type mgoElicitor struct {
	content map[string]any
	asked   chan mgo.ElicitationRequest
}

func (e *mgoElicitor) Elicit(_ context.Context, req mgo.ElicitationRequest) (*mgo.ElicitationResult, error) {
	e.asked <- req
	return &mgo.ElicitationResult{ElicitationResponse: mgo.ElicitationResponse{Action: mgo.ElicitationResponseActionAccept, Content: e.content}}, nil
}

// TestMCPGoClientCallsTool: an mcp-go client (streamable HTTP, declaring elicitation)
// calls our ask_user_questions; it is asked by elicitation (inside the call on
// 2025-11-25, by an input request it fulfils and retries on 2026-07-28) and its answer
// is the tool result.
func TestMCPGoClientCallsTool(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { testMCPGoClientCallsTool(t, version) })
	}
}

func testMCPGoClientCallsTool(t *testing.T, version string) {
	s := newServer(t, nil)
	// go-sdk v1.8.0 serves 2026-07-28 over streamable HTTP only in stateless mode.
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: version >= "2026-07-28"}))
	defer hs.Close()
	tr, err := mgotransport.NewStreamableHTTP(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	el := &mgoElicitor{content: map[string]any{"q1": "Vue 3 (Recommended)"}, asked: make(chan mgo.ElicitationRequest, 1)}
	c := mgoclient.NewClient(tr, mgoclient.WithElicitationHandler(el))
	defer c.Close()
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	init, err := c.Initialize(t.Context(), mgo.InitializeRequest{Params: mgo.InitializeParams{
		ProtocolVersion: version,
		ClientInfo:      mgo.Implementation{Name: "mcp-go-client", Version: "1.0.0"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != version {
		t.Fatalf("negotiated %s", init.ProtocolVersion)
	}
	tools, err := c.ListTools(t.Context(), mgo.ListToolsRequest{})
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != askuser.ToolName {
		t.Fatalf("tools %+v, %v", tools, err)
	}
	var args map[string]any
	_ = json.Unmarshal([]byte(frameworkArgs), &args)
	res, err := c.CallTool(t.Context(), mgo.CallToolRequest{Params: mgo.CallToolParams{
		Name: askuser.ToolName, Arguments: args, Meta: &mgo.Meta{AdditionalFields: map[string]any{askmcp.MetaToolCallID: "toolu_01"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Content[0].(mgo.TextContent).Text
	if res.IsError || !strings.Contains(got, `"selectedLabels":["Vue 3 (Recommended)"]`) {
		t.Fatalf("result %v %q", res.IsError, got)
	}
	if req := <-el.asked; req.Params.Message != "Which framework should we use?" {
		t.Fatalf("elicitation message %q", req.Params.Message)
	}
	if version < "2026-07-28" {
		if a, _ := s.devices.ask(t, 0); a.RequestID != "toolu_01" {
			t.Fatalf("request id %q", a.RequestID)
		}
	}
}

// mgoAnswers is an mcp-go client's elicitation handler that answers each form with the
// next of its contents (the last one again once they run out), recording the messages.
type mgoAnswers struct {
	mu       sync.Mutex
	contents []map[string]any
	messages []string
}

func (e *mgoAnswers) Elicit(_ context.Context, req mgo.ElicitationRequest) (*mgo.ElicitationResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.contents[min(len(e.messages), len(e.contents)-1)]
	e.messages = append(e.messages, req.Params.Message)
	return &mgo.ElicitationResult{ElicitationResponse: mgo.ElicitationResponse{Action: mgo.ElicitationResponseActionAccept, Content: c}}, nil
}

// TestClientContentOutsideSchema: a client that accepts the tool's form with content
// outside the form's own schema (mcp-go sends it as its handler gave it; go-sdk's
// server refuses it) is asked again, told why; an answer that fits then ends the call,
// and a client that never sends one counts as declining once the rounds are used up.
// Either way the call goes on at once, never waiting for askuser's timeout (5 minutes
// here). go-sdk's own client refuses such content itself, with -32602: the same.
func TestClientContentOutsideSchema(t *testing.T) {
	bad := map[string]any{"q1": 42} // q1 is a string of the form's choices
	good := map[string]any{"q1": "React"}
	mcpGo := func(t *testing.T, contents ...map[string]any) (*mgoclient.Client, *mgoAnswers) {
		s := newServer(t, nil)
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, nil))
		t.Cleanup(hs.Close)
		tr, err := mgotransport.NewStreamableHTTP(hs.URL)
		if err != nil {
			t.Fatal(err)
		}
		el := &mgoAnswers{contents: contents}
		c := mgoclient.NewClient(tr, mgoclient.WithElicitationHandler(el))
		t.Cleanup(func() { c.Close() })
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Initialize(t.Context(), mgo.InitializeRequest{Params: mgo.InitializeParams{
			ProtocolVersion: "2025-11-25", ClientInfo: mgo.Implementation{Name: "mcp-go-client", Version: "1.0.0"},
		}}); err != nil {
			t.Fatal(err)
		}
		return c, el
	}
	call := func(t *testing.T, c *mgoclient.Client) (string, bool) {
		var args map[string]any
		_ = json.Unmarshal([]byte(frameworkArgs), &args)
		res, err := c.CallTool(t.Context(), mgo.CallToolRequest{Params: mgo.CallToolParams{Name: askuser.ToolName, Arguments: args}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(mgo.TextContent).Text, res.IsError
	}
	t.Run("asked again", func(t *testing.T) {
		c, el := mcpGo(t, bad, good)
		got, isErr := call(t, c)
		if isErr || !strings.Contains(got, `"selectedLabels":["React"]`) {
			t.Fatalf("result %v %q", isErr, got)
		}
		if len(el.messages) != 2 || !strings.Contains(el.messages[1], "did not match the form's schema") {
			t.Fatalf("forms asked: %q", el.messages)
		}
	})
	t.Run("declining", func(t *testing.T) {
		c, el := mcpGo(t, bad)
		got, isErr := call(t, c)
		if !isErr || !strings.Contains(got, "declined") {
			t.Fatalf("result %v %q; want the declined result", isErr, got)
		}
		if len(el.messages) != askmcp.DefaultMaxRounds {
			t.Fatalf("asked %d times, want %d", len(el.messages), askmcp.DefaultMaxRounds)
		}
	})
	t.Run("go-sdk client", func(t *testing.T) {
		s := newServer(t, nil)
		var rounds atomic.Int32
		cs := s.client(t, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if rounds.Add(1) == 1 {
				return &mcp.ElicitResult{Action: askmcp.ActionAccept, Content: bad}, nil
			}
			return &mcp.ElicitResult{Action: askmcp.ActionAccept, Content: good}, nil
		}}, "2025-11-25")
		res, err := cs.CallTool(t.Context(), callParams(frameworkArgs, ""))
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || !strings.Contains(text(t, res), `"selectedLabels":["React"]`) || rounds.Load() != 2 {
			t.Fatalf("result %q after %d forms", text(t, res), rounds.Load())
		}
	})
}
