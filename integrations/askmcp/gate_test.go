package askmcp_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askmcp"
	"github.com/askuser-go/askuser/internal/paneltest"
	"github.com/askuser-go/askuser/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pathArgs are the arguments of every tool of filesServer.
type pathArgs struct {
	Path string `json:"path"`
}

// filesServer is an MCP server of the Go SDK whose four tools declare the four kinds of
// annotations between them: read_file is read-only and closed-world; delete_file
// destructive and idempotent; append_line writes without destroying; fetch_url says
// nothing of itself. Each call is recorded in ran as "tool path".
func filesServer(ran *[]string, mu *sync.Mutex) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "files-server", Title: "Files", Version: "v1"}, nil)
	yes, no := true, false
	add := func(name, title string, a *mcp.ToolAnnotations) {
		mcp.AddTool(s, &mcp.Tool{Name: name, Title: title, Description: "The " + name + " tool", Annotations: a},
			func(_ context.Context, _ *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
				mu.Lock()
				*ran = append(*ran, name+" "+in.Path)
				mu.Unlock()
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + name + " " + in.Path}}}, nil, nil
			})
	}
	add("read_file", "Read a file", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no})
	add("delete_file", "Delete a file", &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true})
	add("append_line", "", &mcp.ToolAnnotations{Title: "Append a line", DestructiveHint: &no, OpenWorldHint: &no})
	add("fetch_url", "", nil)
	return s
}

// connectGate connects a go-sdk client to server over in-memory transports and
// returns the gate of its tools.
func connectGate(t *testing.T, server *mcp.Server, opts *askmcp.GateOptions) *askmcp.Gate {
	t.Helper()
	_, cs := connectPair(t, server, mcp.NewClient(impl, nil), "")
	return askmcp.NewGate(cs, opts)
}

// TestGateByAnnotations: one model turn of seven calls of an MCP server's tools,
// through the dispatcher's RunTools with the gates of the server as the Policy's
// Describe, decided by a device on a real WebSocket. For the server marked trusted,
// the read-only tool runs without asking; the destructive one, the one that writes
// without destroying, and the one with no annotations are asked about (denied with a
// reason, approved after an edit, approved); the host's rules come first (an Ask rule
// asks about a read-only call, a Deny rule denies one at once). For the same server
// not marked trusted, its read-only tool is asked about. Each card shows the server,
// its trust, the tool's title, description and annotations; only what was allowed ran,
// with the arguments allowed.
func TestGateByAnnotations(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	server := filesServer(&ran, &mu)
	trusted := connectGate(t, server, &askmcp.GateOptions{Trusted: true, Prefix: "files_"})
	untrusted := connectGate(t, server, &askmcp.GateOptions{Server: "files (a mirror)", Prefix: "other_"})
	path := func(args map[string]any) string { p, _ := args["path"].(string); return p }
	session := askuser.IntSession(11)
	d, shown := paneltest.NewApprover(t, session, &askuser.Options{Policy: &askuser.Policy{
		Deny:     []askuser.Rule{{Tool: "files_delete_file", When: func(a map[string]any) bool { return strings.HasPrefix(path(a), "/etc/") }}},
		Ask:      []askuser.Rule{{Tool: "files_read_file", When: func(a map[string]any) bool { return strings.Contains(path(a), "secret") }}},
		Describe: askmcp.Describe(trusted, untrusted),
	}}, func(a wire.ApprovalData) *wire.ApprovalResultData {
		switch a.Tool {
		case "files_delete_file":
			return &wire.ApprovalResultData{Decision: wire.DecisionDeny, Reason: "keep it"}
		case "files_append_line":
			return &wire.ApprovalResultData{Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"path":"notes.txt"}`)}
		}
		return &wire.ApprovalResultData{Decision: wire.DecisionApprove}
	})
	call := func(id, name, path string) askuser.ToolCall {
		return askuser.ToolCall{Session: session, ID: id, Name: name, Arguments: json.RawMessage(`{"path":"` + path + `"}`)}
	}
	out := d.RunTools(t.Context(), []askuser.ToolCall{
		call("c1", "files_read_file", "a.txt"),
		call("c2", "files_delete_file", "old.txt"),
		call("c3", "files_append_line", "log.txt"),
		call("c4", "files_fetch_url", "http://example.test/"),
		call("c5", "files_read_file", "secret.txt"),
		call("c6", "files_delete_file", "/etc/passwd"),
		call("c7", "other_read_file", "a.txt"),
	}, askmcp.Run(nil, trusted, untrusted))

	type want struct {
		isError  bool
		contains string
	}
	for i, w := range []want{
		{false, "ran read_file a.txt"},
		{true, `"reason": "keep it"`},
		{false, `"result": "ran append_line notes.txt"`},
		{false, "ran fetch_url http://example.test/"},
		{false, "ran read_file secret.txt"},
		{true, "not allowed here"},
		{false, "ran read_file a.txt"},
	} {
		if out[i].IsError != w.isError || !strings.Contains(out[i].Content, w.contains) {
			t.Errorf("call %s: error %v, content %q; want %v and %q", out[i].Call.ID, out[i].IsError, out[i].Content, w.isError, w.contains)
		}
	}
	mu.Lock()
	got := slices.Sorted(slices.Values(ran))
	mu.Unlock()
	if want := []string{"append_line notes.txt", "fetch_url http://example.test/", "read_file a.txt", "read_file a.txt", "read_file secret.txt"}; !slices.Equal(got, want) {
		t.Errorf("the server ran %q, want %q", got, want)
	}

	cards := map[string]wire.ApprovalData{}
	for range 5 {
		a := <-shown
		cards[a.RequestID] = a
	}
	select {
	case a := <-shown:
		t.Fatalf("a sixth approval: %+v", a)
	default:
	}
	type card struct {
		server, title string
		trusted       bool
		hints         map[string]bool
	}
	for id, w := range map[string]card{
		"c2": {"Files", "Delete a file", true, map[string]bool{"destructive": true, "idempotent": true, "readOnly": false}},
		"c3": {"Files", "Append a line", true, map[string]bool{"destructive": false, "idempotent": false, "openWorld": false, "readOnly": false}},
		"c4": {"Files", "", true, nil},
		"c5": {"Files", "Read a file", true, map[string]bool{"idempotent": false, "openWorld": false, "readOnly": true}},
		"c7": {"files (a mirror)", "Read a file", false, map[string]bool{"idempotent": false, "openWorld": false, "readOnly": true}},
	} {
		a, ok := cards[id]
		if !ok || a.Source == nil {
			t.Errorf("call %s: no card with a source (%+v)", id, a)
			continue
		}
		got := card{a.Source.Server, a.Source.Title, a.Source.Trusted, a.Source.Hints}
		if got.server != w.server || got.title != w.title || got.trusted != w.trusted || !maps.Equal(got.hints, w.hints) {
			t.Errorf("call %s: card %+v, want %+v", id, got, w)
		}
		if tool := strings.SplitN(a.Tool, "_", 2)[1]; a.Description != "The "+tool+" tool" || !strings.Contains(string(a.ArgumentsSchema), `"path"`) {
			t.Errorf("call %s: description %q, schema %s", id, a.Description, a.ArgumentsSchema)
		}
	}
}

// TestGateCall: a host with a loop of its own decides and calls through Gate.Call. An
// untrusted server's read-only tool is asked about; the person's edit is what the
// server runs; a denial runs nothing and says why; a name without the Prefix is
// refused without asking.
func TestGateCall(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	g := connectGate(t, filesServer(&ran, &mu), &askmcp.GateOptions{Prefix: "f_"})
	session := askuser.IntSession(12)
	d, shown := paneltest.NewApprover(t, session, nil, func(a wire.ApprovalData) *wire.ApprovalResultData {
		if strings.Contains(string(a.Arguments), "secret") {
			return &wire.ApprovalResultData{Decision: wire.DecisionDeny}
		}
		return &wire.ApprovalResultData{Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"path":"b.txt"}`)}
	})
	r, res, err := g.Call(t.Context(), d, askuser.ToolCall{Session: session, Name: "f_read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)})
	if err != nil || r.Outcome != askuser.Edited || res == nil || !strings.Contains(r.Content(res.Content[0].(*mcp.TextContent).Text), "ran read_file b.txt") {
		t.Fatalf("edited call: %+v, %+v, %v", r, res, err)
	}
	if a := <-shown; a.Source == nil || a.Source.Server != "Files" || a.Source.Trusted || !a.Source.Hints["readOnly"] {
		t.Fatalf("card %+v", a.Source)
	}
	r, res, err = g.Call(t.Context(), d, askuser.ToolCall{Session: session, Name: "f_read_file", Arguments: json.RawMessage(`{"path":"secret"}`)})
	if err != nil || r.Outcome != askuser.Denied || res != nil || !strings.Contains(r.Content(""), "The user denied") {
		t.Fatalf("denied call: %+v, %+v, %v", r, res, err)
	}
	<-shown
	if r, res, err = g.Call(t.Context(), d, askuser.ToolCall{Session: session, Name: "read_file", Arguments: json.RawMessage(`{}`)}); r.Outcome != askuser.Invalid || res != nil || err != nil {
		t.Fatalf("a name without the prefix: %+v, %+v, %v", r, res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(ran, []string{"read_file b.txt"}) {
		t.Fatalf("the server ran %q", ran)
	}
}
