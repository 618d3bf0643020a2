// Package paneltest is the person's side of the adapters' tests: a dispatcher asking
// through a wshub hub on a loopback server, and one device of the session on a real
// WebSocket that replies as told, to questions (New) or approvals (NewApprover).
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
	"github.com/askuser-go/askuser/wshub"
)

// Reply decides what the person's device sends for a question set: answers, a decline,
// or nothing (nil).
type Reply func(askuser.AskData) *askuser.ResultData

// Pick answers every question with the option of that label, or with the first option
// when none of the labels is one of its options.
func Pick(labels ...string) Reply {
	return func(ask askuser.AskData) *askuser.ResultData {
		r := &askuser.ResultData{RequestID: ask.RequestID}
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
func Decline(ask askuser.AskData) *askuser.ResultData {
	return &askuser.ResultData{RequestID: ask.RequestID, Declined: true}
}

// Silent never replies.
func Silent(askuser.AskData) *askuser.ResultData { return nil }

// New is the person's side: a wshub hub served on a loopback server, a dispatcher
// that asks through it, and one device of the session on a real WebSocket that replies
// to every question as told. Every question the device is shown is sent on asked.
// Everything is closed when the test ends.
func New(t testing.TB, session askuser.SessionID, opts *askuser.Options, answer Reply) (*askuser.Dispatcher, <-chan askuser.AskData) {
	t.Helper()
	asked := make(chan askuser.AskData, 16)
	d := serve(t, session, opts, func(ev askuser.Event) (string, any) {
		if ev.Type != askuser.EventAsk {
			return "", nil
		}
		var ask askuser.AskData
		if err := json.Unmarshal(ev.Data, &ask); err != nil {
			t.Errorf("the device got an ask it cannot read: %v", err)
			return "", nil
		}
		asked <- ask
		if data := answer(ask); data != nil {
			return askuser.EventResult, data
		}
		return "", nil
	})
	return d, asked
}

// Decide decides what the person's device sends for an approval: a decision, whose
// request id and digest are the approval's, or nothing (nil).
type Decide func(askuser.ApprovalData) *askuser.ApprovalResultData

// NewApprover is [New] for approvals: the device decides every approval it is shown as
// told, and every approval it is shown is sent on shown.
func NewApprover(t testing.TB, session askuser.SessionID, opts *askuser.Options, decide Decide) (*askuser.Dispatcher, <-chan askuser.ApprovalData) {
	t.Helper()
	shown := make(chan askuser.ApprovalData, 16)
	d := serve(t, session, opts, func(ev askuser.Event) (string, any) {
		if ev.Type != askuser.EventApproval {
			return "", nil
		}
		var a askuser.ApprovalData
		if err := json.Unmarshal(ev.Data, &a); err != nil {
			t.Errorf("the device got an approval it cannot read: %v", err)
			return "", nil
		}
		shown <- a
		dec := decide(a)
		if dec == nil {
			return "", nil
		}
		dec.RequestID, dec.Digest = a.RequestID, a.Digest
		return askuser.EventApprovalResult, dec
	})
	return d, shown
}

// serve is the hub, the dispatcher and the device of New and NewApprover: handle gets
// every event the device is shown, and returns the type and data of the event to send
// back ("" for none).
func serve(t testing.TB, session askuser.SessionID, opts *askuser.Options, handle func(askuser.Event) (string, any)) *askuser.Dispatcher {
	t.Helper()
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return []askuser.SessionID{session}, nil
	}})
	d := askuser.New(hub, opts)
	hub.Bind(d)
	srv := httptest.NewServer(hub)

	ctx, cancel := context.WithCancel(context.Background())
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				return
			}
			ev, err := askuser.ParseEvent(msg)
			if err != nil {
				continue
			}
			typ, data := handle(ev)
			if typ == "" {
				continue
			}
			out, err := askuser.NewEvent(typ, session, data)
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
	return d
}
