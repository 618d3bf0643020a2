package askmcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The actions of an MCP elicitation result.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// DefaultMaxRounds is how many times, by default, a form is asked before an unusable
// answer cancels it: an answer typed for a number that is not one, say.
const DefaultMaxRounds = 3

// HandlerOptions configure [ElicitationHandler]. A nil *HandlerOptions means all
// defaults; the zero value of each field means its default.
type HandlerOptions struct {
	// RequestID returns the askuser request id of an elicitation. The default derives it
	// from the elicitation itself (the MCP session, the message and the requested
	// schema), keyed with a secret made when the handler is: the same elicitation sent
	// again while it is pending joins the question already asked instead of asking twice,
	// and the id is unguessable. See [ElicitationHandler] for why it is not the JSON-RPC id.
	RequestID func(*mcp.ElicitRequest) string
	// MaxRounds is how many times a form is asked, at most, when answers cannot be used
	// (text typed for a number that is not one, a date in another format): each new
	// round asks only the fields to fix, saying why. After the last the elicitation is
	// cancelled. Default [DefaultMaxRounds].
	MaxRounds int
	// Now gives the dates that date and date-time fields offer as options ("Today").
	// Default time.Now.
	Now func() time.Time
}

// ElicitationHandler returns a function for [mcp.ClientOptions.ElicitationHandler]
// that asks every form elicitation of the servers this client connects to as askuser
// questions, through d, on every device of session; the first answer wins, and becomes
// the elicitation's result. opts may be nil.
//
// The form's fields become questions by the mapping of docs/MCP.md:
// enums single-select, arrays of enums multi-select, booleans yes or no, text, numbers
// and integers typed through "Other", and a form without fields a confirmation. The
// answers become the content with the JSON types of the schema.
//
// The person's decline is the action "decline"; a timeout, a cancelled session, a
// dispatcher shutting down, an undelivered question, and a choice of the "Not now"
// option are "cancel". When the server cancels the elicitation (or the client's
// session ends), the question ends at once as cancelled on every device.
//
// A form of more than four fields (up to [MaxFormFields]) is asked as consecutive
// question sets of at most four fields each, in the form's order, and answered with one
// content; a decline or a cancel of any part declines or cancels the whole form.
//
// An elicitation that cannot be asked (more than [MaxFormFields] fields, an enum of more choices
// than fit in a question, a nested object, a constraint the mapping cannot check, the
// URL mode) gets a JSON-RPC error, code -32602, whose message lists every reason
// ([UnsupportedError]); nobody is asked and nothing waits.
//
// The request id: go-sdk does not give a client's handler the JSON-RPC id of the
// request, and a server that retries sends a new id anyway, so the id is derived from
// the elicitation (see [HandlerOptions.RequestID]). It is stable for as long as the
// handler lives: a retry of the same elicitation while it is pending joins it.
//
// The returned function may be called concurrently.
func ElicitationHandler(d *askuser.Dispatcher, session askuser.SessionID, opts *HandlerOptions) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	var o HandlerOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = DefaultMaxRounds
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RequestID == nil {
		key := make([]byte, 32)
		_, _ = rand.Read(key) // crypto/rand.Read never fails
		o.RequestID = func(req *mcp.ElicitRequest) string { return derivedID(key, req) }
	}
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if req == nil || req.Params == nil {
			return nil, invalidParams(&UnsupportedError{Problems: []string{"no params"}})
		}
		p := req.Params
		if p.Mode == "url" || p.URL != "" {
			return nil, invalidParams(&UnsupportedError{Problems: []string{"the URL mode is not supported; only forms are asked on the user's devices"}})
		}
		f, err := newForm(p.Message, p.RequestedSchema, o.Now())
		if err != nil {
			return nil, invalidParams(err)
		}
		return ask(ctx, d, session, o.RequestID(req), f, o.MaxRounds)
	}
}

// ask asks the form, again for the fields whose answers could not be used, and returns
// the elicitation's result. A form of more fields than a question set holds is asked in
// parts, one after the other in the form's order, the first with the request id id and
// part k (from 2) with id "/part" k; a decline or a cancel, however it comes, in any
// part ends the whole form.
func ask(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, id string, f *form, maxRounds int) (*mcp.ElicitResult, error) {
	o := &outcome{values: map[*field]fieldValue{}}
	for k, part := range f.parts() {
		partID := id
		if k > 0 {
			partID = id + "/part" + strconv.Itoa(k+1)
		}
		if res, err := askPart(ctx, d, session, partID, f, part, o, maxRounds); res != nil || err != nil {
			return res, err
		}
	}
	if f.fields[0].kind == kindConfirm {
		return &mcp.ElicitResult{Action: ActionAccept}, nil
	}
	return &mcp.ElicitResult{Action: ActionAccept, Content: o.content()}, nil
}

// askPart asks one part of the form, in rounds, into o. It returns the elicitation's
// result when the part ends the form (a decline, a cancel, an error), and nil when the
// part is answered and the form goes on.
func askPart(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, id string, f *form, part []*field, o *outcome, maxRounds int) (*mcp.ElicitResult, error) {
	var notes map[*field]string
	for round := 1; ; round++ {
		req, byText := f.request(part, notes)
		roundID := id
		if round > 1 {
			roundID = id + "/" + strconv.Itoa(round)
		}
		res := dispatch(ctx, d, session, roundID, req)
		switch res.Outcome {
		case askuser.Answered:
		case askuser.Declined:
			return &mcp.ElicitResult{Action: ActionDecline}, nil
		case askuser.Invalid:
			// The form was checked by askuser's rules when it was mapped; only an id that
			// is taken by other questions gets here.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "askmcp: " + res.Content}
		default:
			return &mcp.ElicitResult{Action: ActionCancel}, nil
		}
		o.apply(res.Answers, byText)
		switch o.action {
		case ActionDecline, ActionCancel:
			return &mcp.ElicitResult{Action: o.action}, nil
		}
		if len(o.again) == 0 {
			return nil, nil
		}
		if round >= maxRounds {
			return &mcp.ElicitResult{Action: ActionCancel}, nil
		}
		notes = o.again
	}
}

// derivedID is the default request id of an elicitation: a keyed hash of what it asks.
func derivedID(key []byte, req *mcp.ElicitRequest) string {
	mac := hmac.New(sha256.New, key)
	if req.Session != nil {
		mac.Write([]byte(req.Session.ID()))
	}
	mac.Write([]byte{0})
	mac.Write([]byte(req.Params.Message))
	mac.Write([]byte{0})
	schema, _ := json.Marshal(req.Params.RequestedSchema) // maps marshal with sorted keys
	mac.Write(schema)
	return "mcp-elicit-" + hex.EncodeToString(mac.Sum(nil)[:16])
}

func invalidParams(err error) error {
	msg := err.Error()
	var ue *UnsupportedError
	if errors.As(err, &ue) {
		msg = ue.Error()
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}
