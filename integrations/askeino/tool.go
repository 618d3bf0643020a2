// Package askeino makes askuser's ask_user_questions an Eino tool
// (github.com/cloudwego/eino), in two forms: [Tool] blocks until the person answers on
// one of their devices; [InterruptTool], for hosts that checkpoint, asks and interrupts
// the run at once, and a resumed run gets the answer, never asking twice.
//
// It also puts a host's own Eino tools behind askuser's gate, in the same two forms:
// [Gate] asks for the person's approval, blocking, before the wrapped tool runs, as the
// dispatcher's [askuser.Options.Policy] says; [InterruptGate] interrupts the run while
// the approval waits, and the resumed run gets the decision given meanwhile.
//
//	ctx = askeino.WithSession(ctx, askuser.IntSession(123)) // whose devices to ask
//	tools := compose.ToolsNodeConfig{Tools: []tool.BaseTool{
//		askeino.NewTool(d, nil),
//		askeino.NewGate(d, deleteBranch, nil), // deleteBranch: the host's tool.InvokableTool
//	}}
//
// The request id is the model's tool-call id, as Eino's ToolsNode gives it
// ([compose.GetToolCallID]); docs/EINO.md says more.
package askeino

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/askuser-go/askuser"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"
)

// ErrNoSession is returned by a tool run whose context names no askuser session: see
// [WithSession] and [Options.Session].
var ErrNoSession = errors.New("askeino: no askuser session in the context; set one with askeino.WithSession")

type sessionKey struct{}

// WithSession returns a copy of ctx that names the askuser session whose devices the
// tool asks. A host sets it on the context it runs its graph or agent with.
func WithSession(ctx context.Context, session askuser.SessionID) context.Context {
	return context.WithValue(ctx, sessionKey{}, session)
}

// SessionFrom returns the session set by [WithSession], or the zero SessionID.
func SessionFrom(ctx context.Context) askuser.SessionID {
	s, _ := ctx.Value(sessionKey{}).(askuser.SessionID)
	return s
}

// Options configure [NewTool] and [NewInterruptTool]. A nil *Options means all
// defaults; the zero value of each field means its default.
type Options struct {
	// Session returns the askuser session of a run. Default [SessionFrom]. A zero
	// session fails the run with [ErrNoSession].
	Session func(ctx context.Context) askuser.SessionID
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Session == nil {
		c.Session = SessionFrom
	}
	return c
}

// ToolInfo returns the ask_user_questions tool as Eino describes tools: askuser's name,
// description and input JSON Schema ([askuser.Definition]), converted to Eino's schema
// type.
func ToolInfo() (*schema.ToolInfo, error) {
	def := askuser.Definition()
	var js jsonschema.Schema
	if err := json.Unmarshal(def.InputSchema, &js); err != nil {
		return nil, fmt.Errorf("askeino: converting the input schema: %w", err)
	}
	return &schema.ToolInfo{Name: def.Name, Desc: def.Description, ParamsOneOf: schema.NewParamsOneOfByJSONSchema(&js)}, nil
}

// Tool is ask_user_questions as an Eino [tool.InvokableTool] that blocks until the
// call ends. Its methods may be called concurrently.
type Tool struct {
	d    *askuser.Dispatcher
	opts Options
}

var _ tool.InvokableTool = (*Tool)(nil)

// NewTool returns the blocking tool, asking through d. opts may be nil.
func NewTool(d *askuser.Dispatcher, opts *Options) *Tool {
	return &Tool{d: d, opts: opts.withDefaults()}
}

// Info returns [ToolInfo].
func (t *Tool) Info(context.Context) (*schema.ToolInfo, error) { return ToolInfo() }

// InvokableRun asks the model's arguments through the dispatcher
// ([askuser.Dispatcher.Dispatch]) on the devices of the run's session, and returns the
// tool result for the model: the answers JSON, or one of askuser's error results (a
// timeout, a decline, invalid arguments listing every problem, ...), with a nil error
// either way, since those are for the model to read. The error is non-nil only when the
// context names no session ([ErrNoSession]).
//
// The request id is the tool-call id Eino's ToolsNode puts in the context
// ([compose.GetToolCallID]). Run outside a ToolsNode there is none, and askuser makes a
// random one: a retry of that run then asks again.
func (t *Tool) InvokableRun(ctx context.Context, argumentsInJSON string, _ ...tool.Option) (string, error) {
	session := t.opts.Session(ctx)
	if session.IsZero() {
		return "", ErrNoSession
	}
	res := t.d.Dispatch(ctx, askuser.ToolCall{
		Session:   session,
		ID:        compose.GetToolCallID(ctx),
		Name:      askuser.ToolName,
		Arguments: json.RawMessage(argumentsInJSON),
	})
	return res.Content, nil
}
