package askmcp

import (
	"context"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server side's gate: an MCP server whose own tools act (delete, send, pay) has
// each call approved by the person on their devices before the tool runs. Never by
// eliciting the calling client: the client is the agent's own process, which can answer
// its own elicitation, so an approval asked that way would be the agent approving
// itself. The approval goes to the person's devices through the dispatcher, and to
// nothing else.

// ApproveOptions configure [Approved]. A nil *ApproveOptions means all defaults; the
// zero value of each field means its default.
type ApproveOptions struct {
	// Session returns the askuser session whose devices approve a call. Default, as for
	// [ToolOptions.Session]: the MCP session id as a string session, or "mcp" on a
	// transport without one. A server serving several people maps each call to its
	// person's session (from req.Extra.TokenInfo, say): the calling client must not be
	// able to pick a session whose devices it controls.
	Session func(req *mcp.CallToolRequest) askuser.SessionID
	// CallID returns the call's tool-call id, the approval's request id, so that a call
	// made again with the same id and arguments joins the approval asked already.
	// Default: _meta[MetaToolCallID], else a random id.
	CallID func(req *mcp.CallToolRequest) string
	// ProgressInterval is how often a call waiting for the person's decision sends the
	// client a progress notification, when the call carries a progress token. Default
	// [DefaultProgressInterval]; negative sends none.
	ProgressInterval time.Duration
}

// Approved wraps handler, the go-sdk handler of the server's own tool t, so that each
// call runs only once the person has approved it on a device of the call's session,
// through d: [askuser.Dispatcher.Approve] with the tool's description and input
// schema for the card, under the dispatcher's Policy (whose rules may allow or deny a
// call without asking; with no rule, every call is asked about). Use it as
// server.AddTool(t, askmcp.Approved(d, t, handler, nil)).
//
// A call that may run reaches handler with exactly the arguments approved, or as the
// person edited them; the result of an edited call tells the model so
// ([askuser.ApprovalResult.Content]). A call that may not run gets, without reaching
// handler, a tool result with isError and the words of [askuser.ApprovalResult.Content]:
// denied (with the person's reason), timed out, cancelled, and so on.
//
// The approval is never asked of the calling client, by elicitation or an input
// request, whatever it declares: a client can answer its own elicitation, and the
// approval would be the agent's own. It waits only for the person's devices. opts may
// be nil.
func Approved(d *askuser.Dispatcher, t *mcp.Tool, handler mcp.ToolHandler, opts *ApproveOptions) mcp.ToolHandler {
	var o ApproveOptions
	if opts != nil {
		o = *opts
	}
	if o.Session == nil {
		o.Session = defaultSession
	}
	if o.CallID == nil {
		o.CallID = metaCallID
	}
	if o.ProgressInterval == 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	desc := askuser.ApprovalOptions{}
	name := ""
	if t != nil {
		desc.Tool, name = toolDescription(t), t.Name
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req == nil || req.Params == nil {
			return errorResult(askuser.ApprovalResult{Outcome: askuser.Invalid, Problems: []string{"the call has no params"}}), nil
		}
		call := askuser.ToolCall{Session: o.Session(req), ID: o.CallID(req), Name: orDefault(req.Params.Name, name), Arguments: req.Params.Arguments}
		waitCtx, stop := context.WithCancel(ctx)
		if tok := req.Params.GetProgressToken(); tok != nil && o.ProgressInterval > 0 && req.Session != nil {
			go keepAlive(waitCtx, req.Session, tok, o.ProgressInterval)
		}
		r := d.Approve(waitCtx, call, &desc)
		stop()
		if !r.Allowed() {
			return errorResult(r), nil
		}
		run := *req
		params := *req.Params
		params.Arguments = r.Arguments
		run.Params = &params
		res, err := handler(ctx, &run)
		if err != nil || res == nil || r.Outcome != askuser.Edited {
			return res, err
		}
		// Edited: the model is told what its call ran with.
		out := *res
		out.Content = []mcp.Content{&mcp.TextContent{Text: r.Content(resultText(res))}}
		return &out, nil
	}
}

// errorResult is the tool result of a call the gate did not let run.
func errorResult(r askuser.ApprovalResult) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Content("")}}, IsError: true}
}
