package askmcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaToolCallID is the key of a tools/call request's _meta under which a client that
// knows the model's tool-call id may pass it; the default [ToolOptions.CallID] reads it.
const MetaToolCallID = "askuser.dev/toolCallId"

// DefaultProgressInterval is how often, by default, a waiting call tells the client it
// is alive.
const DefaultProgressInterval = 10 * time.Second

// inputKey is the key of the one input request of a 2026-07-28 round.
const inputKey = "ask_user_questions"

// ToolOptions configure [AddTool] and [NewTool]. A nil *ToolOptions means all defaults;
// the zero value of each field means its default.
type ToolOptions struct {
	// Session returns the askuser session whose devices a call asks. Default: the MCP
	// session id (the Mcp-Session-Id of streamable HTTP) as a string session, or the
	// string session "mcp" on a transport without session ids (stdio, in memory).
	// A host that serves several people maps each call to that person's session, from
	// req.Extra.TokenInfo say.
	Session func(req *mcp.CallToolRequest) askuser.SessionID
	// CallID returns the call's tool-call id, which becomes the askuser request id. MCP
	// gives a tool handler no call id of its own (go-sdk does not expose the JSON-RPC id
	// to handlers, and a client's retry would send a new one), so the default reads
	// _meta[MetaToolCallID] and returns "" when it is absent; askuser then makes a
	// random id ([askuser.Options.NewRequestID]).
	CallID func(req *mcp.CallToolRequest) string
	// NoElicitation, when true, never asks the calling client by elicitation: only the
	// dispatcher's devices are asked.
	NoElicitation bool
	// ProgressInterval is how often a call waiting for the person sends the client a
	// progress notification (when the call carries a progress token), so that a client
	// that resets its request timeout on progress does not give up. Default
	// [DefaultProgressInterval]; negative sends none.
	ProgressInterval time.Duration
	// StateKey signs the request state of 2026-07-28 rounds, so that a retry reaching
	// another replica is trusted there. Every replica must have the same key, of at
	// least 32 random bytes. Default: a random key made by NewTool, which holds only
	// within this process.
	StateKey []byte
	// MaxRounds is how many times, at most, the calling client is asked again when its
	// answers do not fit the questions (two choices for a single-select question, say);
	// then its answer counts as a decline. Default [DefaultMaxRounds].
	MaxRounds int
}

// tool serves ask_user_questions. Its fields are set by NewTool and never change.
type tool struct {
	d    *askuser.Dispatcher
	opts ToolOptions
	// local checks and renders the answers of 2026-07-28 rounds, which come in a
	// request of their own with nothing pending: its only "device" is checker.
	local   *askuser.Dispatcher
	checker *checker
}

// AddTool adds the ask_user_questions tool to server, asking through d: see [NewTool].
func AddTool(server *mcp.Server, d *askuser.Dispatcher, opts *ToolOptions) {
	server.AddTool(NewTool(d, opts))
}

// NewTool returns the ask_user_questions tool, with askuser's name, description and
// input and output schemas, and its handler, for [mcp.Server.AddTool]. opts may be nil.
//
// The handler parses the arguments with [askuser.ParseArguments]: invalid arguments get
// an error result listing every problem, and nobody is asked. Otherwise, by the
// protocol version of the call's session:
//
//   - Before 2026-07-28: the question is asked through d on the session's devices and,
//     when the client declared the elicitation capability, of the client too, by an
//     elicitation inside the call (the form of docs/MCP.md). The first
//     answer wins: a device's answer cancels the client's elicitation, the client's
//     answer ends the question on every device. The client's "decline" declines, its
//     "cancel" cancels the call. While the call waits, progress notifications keep it
//     alive (see [ToolOptions.ProgressInterval]).
//   - On 2026-07-28 and later, with a client that can elicit: the call returns at once
//     with an input request (the same form); the client asks its user and calls again
//     with the answer and the request state, which NewTool signs, so that any replica
//     with the same [ToolOptions.StateKey] finishes the call. Nothing waits on the
//     server between rounds, so the dispatcher's devices are not asked.
//   - On 2026-07-28 and later, with a client that cannot elicit: as before 2026-07-28,
//     through d's devices alone.
//
// The tool result is askuser's: the answers JSON, or one of the error results, with
// IsError set for every outcome but an answer; an answer also comes as structured
// content, matching the output schema.
func NewTool(d *askuser.Dispatcher, opts *ToolOptions) (*mcp.Tool, mcp.ToolHandler) {
	t := &tool{d: d}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.Session == nil {
		t.opts.Session = defaultSession
	}
	if t.opts.CallID == nil {
		t.opts.CallID = metaCallID
	}
	if t.opts.ProgressInterval == 0 {
		t.opts.ProgressInterval = DefaultProgressInterval
	}
	if t.opts.MaxRounds <= 0 {
		t.opts.MaxRounds = DefaultMaxRounds
	}
	if len(t.opts.StateKey) == 0 {
		t.opts.StateKey = make([]byte, 32)
		_, _ = rand.Read(t.opts.StateKey) // crypto/rand.Read never fails
	}
	t.checker = &checker{expected: map[askuser.SessionID]wire.ResultData{}, problems: map[askuser.SessionID][]string{}}
	t.local = askuser.New(t.checker, nil)
	t.checker.d = t.local
	def := askuser.Definition()
	return &mcp.Tool{
		Name:         def.Name,
		Description:  def.Description,
		InputSchema:  def.InputSchema,
		OutputSchema: def.OutputSchema,
	}, t.handle
}

func defaultSession(req *mcp.CallToolRequest) askuser.SessionID {
	if req.Session != nil && req.Session.ID() != "" {
		return askuser.StringSession(req.Session.ID())
	}
	return askuser.StringSession("mcp")
}

func metaCallID(req *mcp.CallToolRequest) string {
	if req.Params == nil {
		return ""
	}
	id, _ := req.Params.Meta[MetaToolCallID].(string)
	return id
}

func (t *tool) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	session := t.opts.Session(req)
	call := askuser.ToolCall{Session: session, ID: t.opts.CallID(req), Name: askuser.ToolName, Arguments: req.Params.Arguments}
	parsed, err := askuser.ParseArguments(req.Params.Arguments)
	if err != nil {
		return toolResult(t.d.Dispatch(ctx, call)), nil // Invalid, at once: nobody is asked
	}
	canElicit := !t.opts.NoElicitation && clientCanElicit(req.Session)
	if canElicit && newProtocol(req.Session) {
		return t.round(ctx, req, call.ID, parsed)
	}
	ctx, cancel := context.WithCancel(ctx) // cancel ends the call, for the client's "cancel"
	defer cancel()
	if tok := req.Params.GetProgressToken(); tok != nil && t.opts.ProgressInterval > 0 {
		go keepAlive(ctx, req.Session, tok, t.opts.ProgressInterval)
	}
	if call.ID == "" {
		call.ID = uuid.NewString() // the elicitation must know the id the question has
	}
	if !canElicit {
		return toolResult(dispatch(ctx, t.d, session, call.ID, parsed)), nil
	}
	formCtx, closeForm := context.WithCancel(ctx)
	closing := new(atomic.Bool)
	cut := make(chan *formContext, 1)
	go func() { cut <- t.elicitDevice(formCtx, closing, cancel, req.Session, session, call.ID, parsed) }()
	res := dispatch(ctx, t.d, session, call.ID, parsed)
	// The question has ended. A form still open on the client is cancelled, and its
	// cancellation sent, before the result is: over streamable HTTP go-sdk sends
	// notifications/cancelled on the call's own stream, and drops whatever comes for a
	// call it has answered.
	closing.Store(true) // before the cancellation it marks
	closeForm()
	if fc := <-cut; fc != nil && streamable(req) {
		fc.waitSent(cancelWait)
	}
	return toolResult(res), nil
}

// toolResult renders an askuser result as MCP's.
func toolResult(res askuser.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Content}}, IsError: res.IsError()}
	if !res.IsError() {
		out.StructuredContent = json.RawMessage(res.Content)
	}
	return out
}

// keepAlive sends a progress notification every interval until ctx ends.
func keepAlive(ctx context.Context, ss *mcp.ServerSession, token any, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(n),
			Message:       "Waiting for the user's answer",
		})
	}
}

// elicitDevice makes the calling client one more device of the question: it asks the
// form, and gives the dispatcher the client's answer, as a device would. It ends when
// ctx does (the question ended elsewhere), and gives up quietly when the client cannot
// elicit: the other devices are still asked. cancel ends the call, for the client's
// "cancel". closing is set just before ctx is cancelled. When ctx ended while a form was
// open on the client, it returns that form's context, whose cancellation go-sdk is
// sending; nil otherwise.
func (t *tool) elicitDevice(ctx context.Context, closing *atomic.Bool, cancel context.CancelFunc, ss *mcp.ServerSession, session askuser.SessionID, id string, req *askuser.Request) *formContext {
	var problems []string
	for range t.opts.MaxRounds {
		fc := newFormContext(ctx, closing)
		res, err := ss.Elicit(fc, elicitParams(req, problems))
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return fc
			case outsideSchema(err):
				// The client accepted the form with content its schema refuses: asked
				// again, saying so, as a refused answer is.
				problems = []string{"your answer did not match the form's schema (" + clip(err.Error(), 300) + ")"}
				continue
			}
			return nil // the client cannot elicit: the other devices are still asked
		}
		switch res.Action {
		case ActionAccept:
		case ActionDecline:
			_ = deliver(ctx, t.d, session, wire.ResultData{RequestID: id, Declined: true})
			return nil
		default:
			cancel()
			return nil
		}
		err = deliver(ctx, t.d, session, wire.ResultData{RequestID: id, Answers: answersOf(req, res.Content)})
		ae, refused := errors.AsType[*wire.AnswerError](err)
		if !refused {
			return nil // accepted, or the question has ended
		}
		problems = ae.Problems
	}
	_ = deliver(ctx, t.d, session, wire.ResultData{RequestID: id, Declined: true})
	return nil
}

// outsideSchema reports whether err is go-sdk's refusal of a form's content that does
// not match the form's schema: its server's, when the client sent such content, or its
// client's (a JSON-RPC invalid-params error), when that client's handler gave it.
func outsideSchema(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "elicitation result content does not match requested schema") ||
		strings.Contains(msg, "failed to apply schema defaults to elicitation result")
}

// A formContext is the context of one elicitation, which tells when go-sdk has put the
// form's cancellation on the call's stream.
//
// go-sdk v1.8.0 cancels an elicitation whose context ends by sending
// notifications/cancelled from a goroutine of its own, with a context made from the
// elicitation's (context.WithoutCancel keeps its values), and tells nobody when it has
// gone. Its streamable server's Write, which every message of the elicitation goes
// through with that context, looks up the call the message belongs to (idContextKey)
// as it starts, and the message's protocol version (protocolVersionContextKey) once it
// holds that call's stream, where a response to the call, written after, waits its
// turn. Only the form's request and its cancellation are written with this context. So
// the cancellation is the Write that starts after the form was closed, unless the
// request's own Write started after it too (the form closed just as it was sent), when
// it is the second; its protocol-version lookup says it is on the stream, ahead of the
// tool's result.
type formContext struct {
	context.Context
	closing *atomic.Bool // set once the question has ended, before the context is cancelled
	mu      sync.Mutex
	// Writes started before and after closing.
	before, after int
	once          sync.Once
	sent          chan struct{} // closed once the cancellation is on the stream
}

func newFormContext(ctx context.Context, closing *atomic.Bool) *formContext {
	return &formContext{Context: ctx, closing: closing, sent: make(chan struct{})}
}

// Value is the context's, and notes the lookups that tell a Write's progress.
func (c *formContext) Value(key any) any {
	if name := sdkKey(key); name != "" {
		c.saw(name)
	}
	return c.Context.Value(key)
}

// saw notes a lookup of go-sdk's context key of that name.
func (c *formContext) saw(name string) {
	closed := c.closing.Load()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch name {
	case "idContextKey":
		if closed {
			c.after++
		} else {
			c.before++
		}
	case "protocolVersionContextKey":
		if closed && c.after > 0 && (c.before > 0 || c.after > 1) {
			c.once.Do(func() { close(c.sent) })
		}
	}
}

// sdkKey returns the name of key's type when it is one of go-sdk's own context keys
// (unexported types, so known by their names), and "" otherwise.
func sdkKey(key any) string {
	t := reflect.TypeOf(key)
	if t == nil || t.PkgPath() != "github.com/modelcontextprotocol/go-sdk/mcp" {
		return ""
	}
	return t.Name()
}

// waitSent waits until the form's cancellation is on the call's stream, at most limit
// (should it never be sent: the session closing meanwhile, or another go-sdk).
func (c *formContext) waitSent(limit time.Duration) {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-c.sent:
	case <-t.C:
	}
}

// streamable reports whether the call came over streamable HTTP, the transport whose
// server drops a message for a call it has answered. Only it gives a request headers.
func streamable(req *mcp.CallToolRequest) bool {
	return req.Extra != nil && req.Extra.Header != nil
}

// cancelWait bounds the wait for a form's cancellation to be sent; it is go-sdk's own
// bound on sending one (notifyCancellationTimeout).
const cancelWait = 5 * time.Second

// deliver hands a device's event to d. The question is registered by the Ask that runs
// beside the elicitation, and an answer can come back before it is: ErrNotPending is
// then tried again until ctx ends, when the Ask has returned.
func deliver(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, data wire.ResultData) error {
	ev, err := wire.NewEvent(wire.EventResult, session, data)
	if err != nil {
		return err
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := d.Deliver(ctx, ev)
		if !errors.Is(err, wire.ErrNotPending) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

func clientCanElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // neither means forms, as the SDK reads it
}

// newProtocol reports whether the session speaks 2026-07-28 or later, where a server
// may not send a request while serving one, and asks with input requests instead.
func newProtocol(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

// dispatch asks req as the ask_user_questions call id of the session: req, parsed from
// a call, always encodes; should it not, the call is refused as invalid.
func dispatch(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, id string, req *askuser.Request) askuser.Result {
	args, _ := json.Marshal(req)
	return d.Dispatch(ctx, askuser.ToolCall{Session: session, ID: id, Name: askuser.ToolName, Arguments: args})
}
