package askmcp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the 2026-07-28 way of asking the calling client: multi round-trip
// requests (SEP-2322). A round returns an input request; the client asks its user and
// calls the tool again with the response and the request state, which may reach
// another replica. Nothing is kept between rounds: the state carries the request id,
// the round, and a hash of the arguments, signed.

// roundState is what a round's request state says, once its signature is checked.
type roundState struct {
	ID    string `json:"id"`
	Round int    `json:"round"`
	Args  []byte `json:"args"` // SHA-256 of the parsed arguments, re-encoded
}

// ErrBadState is the error of a 2026-07-28 retry whose request state was not made by
// this tool (another key, changed), or was made for other arguments.
var ErrBadState = errors.New("askmcp: the request state is not valid for this call")

// round runs one round: the first asks, a retry reads the client's response.
func (t *tool) round(ctx context.Context, req *mcp.CallToolRequest, callID string, parsed *askuser.Request) (*mcp.CallToolResult, error) {
	argsHash := hashRequest(parsed)
	resp, responded := req.Params.InputResponses[inputKey]
	if !responded {
		id := callID
		if id == "" {
			id = uuid.NewString()
		}
		return t.inputRequired(roundState{ID: id, Round: 1, Args: argsHash}, parsed, nil), nil
	}
	st, err := t.openState(req.Params.RequestState)
	if err != nil || !bytes.Equal(st.Args, argsHash) {
		return nil, ErrBadState
	}
	er, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return nil, ErrBadState
	}
	var res askuser.Result
	switch er.Action {
	case ActionAccept:
		var problems []string
		res, problems = t.check(ctx, st.ID, parsed, wire.ResultData{Answers: answersOf(parsed, er.Content)})
		if problems != nil {
			if st.Round < t.opts.MaxRounds {
				st.Round++
				return t.inputRequired(st, parsed, problems), nil
			}
			res, _ = t.check(ctx, st.ID, parsed, wire.ResultData{Declined: true})
		}
	case ActionDecline:
		res, _ = t.check(ctx, st.ID, parsed, wire.ResultData{Declined: true})
	default:
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		res, _ = t.check(cancelled, st.ID, parsed, wire.ResultData{})
	}
	return toolResult(res), nil
}

func (t *tool) inputRequired(st roundState, req *askuser.Request, problems []string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{inputKey: elicitParams(req, problems)},
		RequestState:  t.sealState(st),
	}
}

// hashRequest hashes the arguments as parsed, so that the same call, however its JSON
// is spelled, has the same hash.
func hashRequest(req *askuser.Request) []byte {
	b, _ := json.Marshal(req)
	h := sha256.Sum256(b)
	return h[:]
}

// sealState encodes and signs a state: base64url(JSON) "." base64url(HMAC-SHA256).
func (t *tool) sealState(st roundState) string {
	b, _ := json.Marshal(st)
	mac := hmac.New(sha256.New, t.opts.StateKey)
	mac.Write(b)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(b) + "." + enc.EncodeToString(mac.Sum(nil))
}

func (t *tool) openState(s string) (roundState, error) {
	var st roundState
	body, sig, ok := bytes.Cut([]byte(s), []byte("."))
	if !ok {
		return st, ErrBadState
	}
	enc := base64.RawURLEncoding
	b, err1 := enc.DecodeString(string(body))
	got, err2 := enc.DecodeString(string(sig))
	if err1 != nil || err2 != nil {
		return st, ErrBadState
	}
	mac := hmac.New(sha256.New, t.opts.StateKey)
	mac.Write(b)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return st, ErrBadState
	}
	if json.Unmarshal(b, &st) != nil || st.ID == "" || st.Round < 1 {
		return st, ErrBadState
	}
	return st, nil
}

// check checks answers to req as askuser checks any device's, and renders the tool
// result, through the tool's own dispatcher whose only device, checker, answers at once
// with them. It returns the problems of answers that askuser refuses.
func (t *tool) check(ctx context.Context, id string, req *askuser.Request, reply wire.ResultData) (askuser.Result, []string) {
	session := askuser.StringSession(uuid.NewString()) // one session per check: no two meet
	t.checker.expect(session, reply)
	res := dispatch(ctx, t.local, session, id, req)
	problems := t.checker.done(session)
	if problems != nil {
		return askuser.Result{}, problems
	}
	return res, nil
}

// checker is the device of a tool's own dispatcher: when a question is asked, it
// answers with the answers expected for its session, at once; when they are refused,
// it keeps the problems and cancels the question, so that Ask returns.
type checker struct {
	d *askuser.Dispatcher // set once, before any Send

	mu       sync.Mutex
	expected map[askuser.SessionID]wire.ResultData // by session, until asked
	problems map[askuser.SessionID][]string        // by session, until read by done
}

func (c *checker) expect(session askuser.SessionID, reply wire.ResultData) {
	c.mu.Lock()
	c.expected[session] = reply
	c.mu.Unlock()
}

func (c *checker) done(session askuser.SessionID) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.problems[session]
	delete(c.problems, session)
	delete(c.expected, session)
	return p
}

// Send answers an ask event; it is called by the dispatcher after the question is
// registered, so the answer always finds it.
func (c *checker) Send(ctx context.Context, ev wire.Event) error {
	if ev.Type != wire.EventAsk {
		return nil
	}
	c.mu.Lock()
	reply, ok := c.expected[ev.SessionID]
	delete(c.expected, ev.SessionID)
	c.mu.Unlock()
	if !ok {
		return nil
	}
	reply.RequestID = ev.RequestID()
	replyEv, err := wire.NewEvent(wire.EventResult, ev.SessionID, reply)
	if err == nil {
		err = c.d.Deliver(ctx, replyEv)
	}
	if err != nil {
		problems := []string{err.Error()}
		if ae, ok := errors.AsType[*wire.AnswerError](err); ok && len(ae.Problems) > 0 {
			problems = ae.Problems
		}
		c.mu.Lock()
		c.problems[ev.SessionID] = problems
		c.mu.Unlock()
		c.d.CancelSession(ev.SessionID)
	}
	return nil
}
