// Package paneltest is the person's side of the adapters' tests: a dispatcher asking
// through a wshub hub on a loopback server, and one device of the session on a real
// WebSocket that replies as told, to questions and to approvals (New, NewGated,
// NewApprover).
package paneltest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
)

// Reply decides what the person's device sends for a question set: answers, a decline,
// or nothing (nil).
type Reply func(wire.AskData) *wire.ResultData

// Pick answers every question with the option of that label, or with the first option
// when none of the labels is one of its options.
func Pick(labels ...string) Reply {
	return func(ask wire.AskData) *wire.ResultData {
		r := &wire.ResultData{RequestID: ask.RequestID}
		for _, q := range ask.Questions {
			label := q.Options[0].Label
			for _, o := range q.Options {
				for _, l := range labels {
					if o.Label == l {
						label = l
					}
				}
			}
			r.Answers = append(r.Answers, askuser.Answer{Question: q.Question, SelectedLabels: []string{label}})
		}
		return r
	}
}

// Decline declines every question set.
func Decline(ask wire.AskData) *wire.ResultData {
	return &wire.ResultData{RequestID: ask.RequestID, Declined: true}
}

// Silent never replies.
func Silent(wire.AskData) *wire.ResultData { return nil }

// Decide decides what the person's device sends for an approval: a decision, or nothing
// (nil).
type Decide func(wire.ApprovalData) *wire.ApprovalResultData

// Edit decides every approval with an edit to arguments, sending back the approval's
// digest as the panel does.
func Edit(arguments string) Decide {
	return func(a wire.ApprovalData) *wire.ApprovalResultData {
		return &wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionEdit, Arguments: json.RawMessage(arguments), Digest: a.Digest}
	}
}

// New is the person's side: a wshub hub served on a loopback server, a dispatcher
// that asks through it, and one device of the session on a real WebSocket that replies
// to every question as told. Every question the device is shown is sent on asked.
// Everything is closed when the test ends.
func New(t testing.TB, session askuser.SessionID, opts *askuser.Options, answer Reply) (*askuser.Dispatcher, <-chan wire.AskData) {
	t.Helper()
	d, asked, _ := NewGated(t, session, opts, answer, nil)
	return d, asked
}

// NewGated is [New] with a device that also decides every approval it is shown, as
// decide says (nil: it decides none); every approval it is shown is sent on approvals,
// before it decides. opts should hold the Policy that gates the host's tools.
func NewGated(t testing.TB, session askuser.SessionID, opts *askuser.Options, answer Reply, decide Decide) (*askuser.Dispatcher, <-chan wire.AskData, <-chan wire.ApprovalData) {
	t.Helper()
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return []askuser.SessionID{session}, nil
	}})
	d := askuser.New(hub, opts)
	srv := httptest.NewServer(hub)

	ctx, cancel := context.WithCancel(context.Background())
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan wire.AskData, 16)
	approvals := make(chan wire.ApprovalData, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				return
			}
			ev, err := wire.ParseEvent(msg)
			if err != nil {
				continue
			}
			var out wire.Event
			switch ev.Type {
			case wire.EventAsk:
				var ask wire.AskData
				if err := json.Unmarshal(ev.Data, &ask); err != nil {
					t.Errorf("the device got an ask it cannot read: %v", err)
					continue
				}
				asked <- ask
				data := answer(ask)
				if data == nil {
					continue
				}
				out, err = wire.NewEvent(wire.EventResult, session, data)
			case wire.EventApproval:
				var a wire.ApprovalData
				if err := json.Unmarshal(ev.Data, &a); err != nil {
					t.Errorf("the device got an approval it cannot read: %v", err)
					continue
				}
				approvals <- a
				if decide == nil {
					continue
				}
				data := decide(a)
				if data == nil {
					continue
				}
				out, err = wire.NewEvent(wire.EventApprovalResult, session, data)
			default:
				continue
			}
			if err == nil {
				var b []byte
				if b, err = out.Encode(); err == nil {
					err = ws.Write(ctx, websocket.MessageText, b)
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		d.Close()
		_ = ws.Close(websocket.StatusNormalClosure, "")
		cancel()
		<-done
		_ = hub.Close()
		srv.Close()
	})
	return d, asked, approvals
}

// NewApprover is [New] for approvals alone: the device decides every approval it is
// shown as decide says, with the approval's request id and digest filled in when the
// decision leaves them empty, and every approval it is shown is sent on shown. It
// answers no question.
func NewApprover(t testing.TB, session askuser.SessionID, opts *askuser.Options, decide Decide) (*askuser.Dispatcher, <-chan wire.ApprovalData) {
	t.Helper()
	d, _, shown := NewGated(t, session, opts, Silent, func(a wire.ApprovalData) *wire.ApprovalResultData {
		dec := decide(a)
		if dec != nil {
			if dec.RequestID == "" {
				dec.RequestID = a.RequestID
			}
			if dec.Digest == "" {
				dec.Digest = a.Digest
			}
		}
		return dec
	})
	return d, shown
}
