package askmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The host side's gate: a host that is an MCP client calls other people's tools, and
// the person approves a call before it reaches the server. The MCP spec leaves approval
// to the client, and tells it to treat a server's tool annotations as untrusted unless
// the server is trusted: so only a server the host marks as trusted has its annotations
// decide anything, and only toward asking less for what says it only reads.

// The names of the defaults a Gate gives a call that no rule of the host's Policy
// matches, as [askuser.ApprovalResult.Rule] and observe.Audit.Rule carry them when a
// call runs without asking.
const (
	// RuleTrustedReadOnly allows a call of a tool that a trusted server marks
	// readOnlyHint.
	RuleTrustedReadOnly = "mcp: read-only tool of a trusted server"
)

// GateOptions configure [NewGate]. A nil *GateOptions means all defaults.
type GateOptions struct {
	// Server is the server's name as the person knows it, shown on every approval card
	// of its tools. Default: the title, else the name, that the server gave itself when
	// the session began; a host that knows the server better should name it, since a
	// server can call itself anything.
	Server string
	// Trusted marks the server as trusted: the annotations of its tools then give the
	// default of each call (see [Gate]). Default false: every call of its tools is asked
	// about, whatever the server says of them.
	Trusted bool
	// Prefix is what the host puts before the server's tool names in the names its
	// model sees and its rules match: with "github_", the model's call of
	// github_delete_repo is the server's delete_repo. A call whose name does not start
	// with Prefix is refused without asking. Default none.
	Prefix string
}

// A Gate puts the tools of one MCP server behind askuser's approvals: each call is
// decided by the dispatcher's rules, the server's trust, the session's grants and the
// person, before it reaches the server, and runs only when it may, with exactly the
// arguments approved or as the person edited them.
//
// A host wires it in one of two ways. With its tool calls going through the dispatcher
// ([askuser.Dispatcher.RunTools], [askuser.Dispatcher.RunTools] and the adapters built on
// them), [Gate.Describe] is the Policy's Describe (or part of it: [Describe] joins the
// gates of several servers) and [Gate.Run] the tool function that calls the server (or
// part of it: [Run]). A host with a loop of its own calls [Gate.Call].
//
// A call is decided, in this order:
//
//  1. by the rules of the dispatcher's [askuser.Policy], matched against the name the
//     model called (Prefix and the server's tool name), which come first;
//  2. when no rule matches, for a server marked [GateOptions.Trusted], by the tool's
//     annotations as the server lists them when the call is made: a tool with
//     readOnlyHint runs ([RuleTrustedReadOnly]); any other (destructiveHint, which is
//     true when absent; a tool that writes without destroying; a tool with no
//     annotations; a tool the server does not list) is asked about;
//  3. for any other server, every call is asked about, whatever its tool says of
//     itself;
//  4. a call asked about runs without asking when a grant of the session covers it
//     ("always"), and otherwise waits for the person's decision on any device.
//
// A Policy whose Default is [askuser.ActionDeny] denies what no rule matches, trusted
// or not. The approval card shows the server's name, whether the host trusts it, the
// tool's title, its description and its annotations, as the server's word
// ([wire.ToolSource]); an edit must satisfy the tool's input schema.
//
// A Gate may be used concurrently.
type Gate struct {
	cs     *mcp.ClientSession
	server string
	opts   GateOptions
}

// NewGate returns the gate of the tools of the server that cs is connected to. opts
// may be nil.
func NewGate(cs *mcp.ClientSession, opts *GateOptions) *Gate {
	g := &Gate{cs: cs}
	if opts != nil {
		g.opts = *opts
	}
	g.server = g.opts.Server
	if g.server == "" && cs != nil {
		if r := cs.InitializeResult(); r != nil && r.ServerInfo != nil {
			g.server = r.ServerInfo.Title
			if g.server == "" {
				g.server = r.ServerInfo.Name
			}
		}
	}
	return g
}

// Describe says what the gate knows of call, for [askuser.Policy.Describe]: whose tool
// it is, its description and input schema, its annotations, and its default (see
// [Gate]). It returns nil for a call that is not one of this server's tools: a name
// without the gate's Prefix, or, with no Prefix, a name the server does not list. It
// asks the server for its tools, so that what decides a call is what the server says
// at the time; a server that does not list them within 10 seconds has the call asked
// about with nothing said of the tool.
func (g *Gate) Describe(ctx context.Context, call askuser.ToolCall) *askuser.ApprovalOptions {
	name, ok := g.toolName(call.Name)
	if !ok {
		return nil
	}
	t := g.tool(ctx, name)
	if t == nil && g.opts.Prefix == "" {
		return nil
	}
	o := g.approvalOptions(t)
	return &o
}

// Run calls the server's tool that call names with call's arguments, as an
// [askuser.ToolFunc] behind the gate: it does not decide anything itself, so it belongs
// where the dispatcher has decided the call already ([askuser.Dispatcher.RunTools],
// [askuser.Dispatcher.RunTools]), whose gate gives it the arguments approved. It returns
// the text of the tool's result, and an error when the tool reported one (isError) or
// could not be called; and an error for a call whose name has not the gate's Prefix.
func (g *Gate) Run(ctx context.Context, call askuser.ToolCall) (string, error) {
	name, ok := g.toolName(call.Name)
	if !ok {
		return "", fmt.Errorf("askmcp: %q is not a tool of this server", call.Name)
	}
	res, err := g.invoke(ctx, name, call.Arguments)
	if err != nil {
		return errorJSON("The tool could not be called: " + err.Error()), err
	}
	text := resultText(res)
	if res.IsError {
		return text, errors.New(text)
	}
	return text, nil
}

// Call decides call through d, with what [Gate.Describe] says of it (a model's call of
// one of the server's tools: its session, id, name as the model knows it, arguments
// exactly as written) and, when it may run, calls the tool on the server with the
// arguments it may run with: for a host with a loop of its own. It returns how the call
// was decided and, when the tool ran, the server's result and the error of calling it (a
// transport's, or the server's JSON-RPC error); a call that did not run returns a nil
// result and no error, and the model reads [askuser.ApprovalResult.Content]. A name
// without the gate's Prefix is [askuser.Invalid]. Call never panics on bad input.
func (g *Gate) Call(ctx context.Context, d *askuser.Dispatcher, call askuser.ToolCall) (askuser.ApprovalResult, *mcp.CallToolResult, error) {
	name, ok := g.toolName(call.Name)
	if !ok {
		problem := fmt.Sprintf("name: %q is not a tool of this server", call.Name)
		return askuser.ApprovalResult{Outcome: askuser.Invalid, Problems: []string{problem}, Err: &askuser.ArgumentsError{Problems: []string{problem}}}, nil, nil
	}
	o := g.approvalOptions(g.tool(ctx, name))
	r := d.Approve(ctx, call, &o)
	if !r.Allowed() {
		return r, nil, nil
	}
	res, err := g.invoke(ctx, name, r.Arguments)
	return r, res, err
}

// Describe joins the gates of several servers for [askuser.Policy.Describe]: a call is
// described by the first gate that knows it, and by none when none does (a host's own
// tool).
func Describe(gates ...*Gate) func(context.Context, askuser.ToolCall) *askuser.ApprovalOptions {
	return func(ctx context.Context, call askuser.ToolCall) *askuser.ApprovalOptions {
		for _, g := range gates {
			if o := g.Describe(ctx, call); o != nil {
				return o
			}
		}
		return nil
	}
}

// Run joins the gates of several servers and the host's own tools into one
// [askuser.ToolFunc] behind the gate: a call goes to the first gate that knows it (as
// [Describe] finds it), and any other to next (an error when next is nil).
func Run(next askuser.ToolFunc, gates ...*Gate) askuser.ToolFunc {
	return func(ctx context.Context, call askuser.ToolCall) (string, error) {
		for _, g := range gates {
			if g.knows(ctx, call.Name) {
				return g.Run(ctx, call)
			}
		}
		if next == nil {
			return "", fmt.Errorf("askmcp: no tool %q", call.Name)
		}
		return next(ctx, call)
	}
}

// toolName is the server's name of the tool the model calls name, and whether name is
// one the gate can take (it has the Prefix, and something after it).
func (g *Gate) toolName(name string) (string, bool) {
	tool, ok := strings.CutPrefix(name, g.opts.Prefix)
	return tool, ok && tool != ""
}

// knows reports whether name is a tool of this gate's server: by the Prefix when the
// gate has one, else by the server's list.
func (g *Gate) knows(ctx context.Context, name string) bool {
	tool, ok := g.toolName(name)
	return ok && (g.opts.Prefix != "" || g.tool(ctx, tool) != nil)
}

// invoke calls the server's tool name with args ({} when empty).
func (g *Gate) invoke(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if g.cs == nil {
		return nil, errors.New("askmcp: the gate has no client session")
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	return g.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// approvalOptions says what the gate knows of the server's tool t (nil: not listed):
// the card's source, description and schema, and the default that trust and
// annotations give.
func (g *Gate) approvalOptions(t *mcp.Tool) askuser.ApprovalOptions {
	ask := askuser.ActionAsk
	o := askuser.ApprovalOptions{Source: &wire.ToolSource{Server: g.server, Trusted: g.opts.Trusted}, Default: &ask}
	if t == nil {
		return o
	}
	o.Tool = toolDescription(t)
	o.Source.Title = t.Title
	if a := t.Annotations; a != nil {
		if o.Source.Title == "" {
			o.Source.Title = a.Title
		}
		o.Source.Hints = map[string]bool{"readOnly": a.ReadOnlyHint, "idempotent": a.IdempotentHint}
		if a.DestructiveHint != nil {
			o.Source.Hints["destructive"] = *a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			o.Source.Hints["openWorld"] = *a.OpenWorldHint
		}
		if g.opts.Trusted && a.ReadOnlyHint {
			allow := askuser.ActionAllow
			o.Default, o.DefaultRule = &allow, RuleTrustedReadOnly
		}
	}
	return o
}

// Bounds of what a server's tool puts on an approval card: a longer description is
// cut, a larger input schema left out (edits are then not checked here; the server
// checks its arguments anyway).
const (
	maxToolDescription = 2000
	maxToolSchema      = 64 << 10
)

// toolDescription is what the card shows of a server's tool t, and the schema its edits
// must satisfy, within the bounds above.
func toolDescription(t *mcp.Tool) *askuser.Tool {
	out := &askuser.Tool{Description: clip(t.Description, maxToolDescription)}
	if t.InputSchema != nil {
		if schema, err := json.Marshal(t.InputSchema); err == nil && len(schema) <= maxToolSchema {
			out.Schema = schema
		}
	}
	return out
}

// listTimeout bounds the listing of a server's tools for one call: a server that does
// not answer has its call asked about with nothing said of the tool.
const listTimeout = 10 * time.Second

// tool returns the server's tool of that name as the server lists it now, or nil when
// it lists none (or cannot list its tools within listTimeout).
func (g *Gate) tool(ctx context.Context, name string) *mcp.Tool {
	if g.cs == nil {
		return nil
	}
	ctx, stop := context.WithTimeout(ctx, listTimeout)
	defer stop()
	for t, err := range g.cs.Tools(ctx, nil) {
		if err != nil {
			return nil
		}
		if t != nil && t.Name == name {
			return t
		}
	}
	return nil
}

// errorJSON is {"error": msg}.
func errorJSON(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}

// resultText is what a model reads of a tool's result: its text content, or, when it
// has none, its structured content, or else its content as JSON.
func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) > 0 {
		return strings.Join(texts, "\n")
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	b, _ := json.Marshal(res.Content)
	return string(b)
}
