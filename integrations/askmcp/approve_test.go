package askmcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askmcp"
	"github.com/askuser-go/askuser/internal/paneltest"
	"github.com/askuser-go/askuser/wire"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServerToolApprovedOnDevices: a Go SDK server whose own tool is destructive gates
// it with Approved, over real streamable HTTP. Each call waits for the person's
// decision on a device (a real WebSocket): approved, it runs; denied, it does not, and
// the model reads the reason; edited, it runs with the person's arguments and says so.
// The calling client declares elicitation with a handler that would approve anything
// (the agent approving itself): it is never asked, and no elicitation/create ever
// reaches it.
func TestServerToolApprovedOnDevices(t *testing.T) {
	session := askuser.StringSession("person")
	d, shown := paneltest.NewApprover(t, session, nil, func(a wire.ApprovalData) *wire.ApprovalResultData {
		switch {
		case strings.Contains(string(a.Arguments), `"keep"`):
			return &wire.ApprovalResultData{Decision: wire.DecisionDeny, Reason: "that one stays"}
		case strings.Contains(string(a.Arguments), `"typo"`):
			return &wire.ApprovalResultData{Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"name":"fixed"}`)}
		}
		return &wire.ApprovalResultData{Decision: wire.DecisionApprove}
	})
	var mu sync.Mutex
	var deleted []string
	tool := &mcp.Tool{Name: "delete_branch", Description: "Deletes a git branch", InputSchema: &jsonschema.Schema{
		Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}, Required: []string{"name"},
	}}
	server := mcp.NewServer(impl, nil)
	server.AddTool(tool, askmcp.Approved(d, tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		mu.Lock()
		deleted = append(deleted, in.Name)
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted " + in.Name}}}, nil
	}, &askmcp.ApproveOptions{Session: func(*mcp.CallToolRequest) askuser.SessionID { return session }}))
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(hs.Close)

	var elicited, selfApproved atomic.Int32
	client := mcp.NewClient(impl, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		selfApproved.Add(1)
		return &mcp.ElicitResult{Action: askmcp.ActionAccept, Content: map[string]any{"approve": true}}, nil
	}})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "elicitation/create" {
				elicited.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	for _, c := range []struct {
		name, want string
		isError    bool
	}{
		{"old", "deleted old", false},
		{"keep", `"reason": "that one stays"`, true},
		{"typo", `"result": "deleted fixed"`, false},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_branch", Arguments: map[string]any{"name": c.name}})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); res.IsError != c.isError || !strings.Contains(got, c.want) {
			t.Errorf("%s: error %v, result %q; want %v and %q", c.name, res.IsError, got, c.isError, c.want)
		}
		if a := <-shown; a.Tool != "delete_branch" || a.Description != "Deletes a git branch" || !strings.Contains(string(a.ArgumentsSchema), `"name"`) || a.Source != nil {
			t.Errorf("%s: card %+v", c.name, a)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(deleted, []string{"old", "fixed"}) {
		t.Errorf("deleted %q, want old and fixed", deleted)
	}
	if elicited.Load() != 0 || selfApproved.Load() != 0 {
		t.Errorf("the client was elicited %d times, its handler called %d times; the approvals must never go to it", elicited.Load(), selfApproved.Load())
	}
}
