package wshub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

// TestApprovalsOverTheHub: a device that joins while approvals are pending is shown
// them after the pending questions, once each; its decision is taken with the principal
// Authenticate named as who decided; every device is told the end; a second decision
// gets not_pending.
func TestApprovalsOverTheHub(t *testing.T) {
	audits := make(chan observe.Audit, 4)
	e := newEnv(t, &wshub.Options{Authenticate: func(r *http.Request) (wshub.Access, error) {
		sessions, err := authorizeQuery(r)
		return wshub.Access{User: "user-" + r.URL.Query().Get("user"), Sessions: sessions}, err
	}}, &askuser.Options{Observer: observe.Hooks{OnAudit: func(a observe.Audit) { audits <- a }}})
	s := askuser.StringSession("ops")
	q := e.ask(s, "q1")
	approved := make(chan askuser.ApprovalResult, 1)
	go func() {
		approved <- e.d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: "a1", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"old"}`)}, nil)
	}()
	deadline := time.Now().Add(failsafe)
	for len(askusertest.Approvals(e.d, s)) == 0 || len(askusertest.Questions(e.d, s)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the question set and the approval never both pending")
		}
		time.Sleep(time.Millisecond)
	}

	dv := e.dial("ops&user=bob")
	if in := decode[wire.InboxData](t, dv.next(wire.EventInbox)); in.User != "user-bob" || len(in.Decided) != 0 {
		t.Fatalf("first the inbox event, naming the person, got %+v", in)
	}
	if a := decode[wire.AskData](t, dv.next(wire.EventAsk)); a.RequestID != "q1" {
		t.Fatalf("first the question set, got %+v", a)
	}
	ap := decode[wire.ApprovalData](t, dv.next(wire.EventApproval))
	if ap.RequestID != "a1" || ap.Tool != "delete_branch" || string(ap.Arguments) != `{"name":"old"}` {
		t.Fatalf("then the approval, got %+v", ap)
	}
	other := e.dial("ops&user=carol")
	other.next(wire.EventInbox)
	other.next(wire.EventAsk)
	other.next(wire.EventApproval)

	dv.send(map[string]any{"type": wire.EventApprovalResult, "data": wire.ApprovalResultData{RequestID: "a1", Decision: wire.DecisionDeny, Reason: "keep it", Digest: ap.Digest}})
	r := <-approved
	if r.Outcome != askuser.Denied || r.Decision.By != "user-bob" || r.Decision.Reason != "keep it" {
		t.Fatalf("approval %+v", r)
	}
	if a := <-audits; a.By != "user-bob" || a.Decision != wire.DecisionDeny || a.RequestID != "a1" {
		t.Fatalf("audit %+v", a)
	}
	for _, d := range []*device{dv, other} {
		res := decode[wire.ApprovalResolvedData](t, d.next(wire.EventApprovalResolved))
		if res.RequestID != "a1" || res.Outcome != askuser.Denied || res.Reason != "keep it" {
			t.Fatalf("resolution %+v", res)
		}
	}
	other.send(map[string]any{"type": wire.EventApprovalResult, "data": wire.ApprovalResultData{RequestID: "a1", Decision: wire.DecisionApprove}})
	expectError(t, other.next(wire.EventError), "not_pending", "a1")
	e.d.CancelSession(s)
	e.result(q)
}

// TestNewNeedsOneAuthorization: a hub takes exactly one of Authorize and Authenticate.
func TestNewNeedsOneAuthorization(t *testing.T) {
	for _, o := range []*wshub.Options{nil, {}, {Authorize: authorizeQuery, Authenticate: func(*http.Request) (wshub.Access, error) { return wshub.Access{}, nil }}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%+v) did not panic", o)
				}
			}()
			wshub.New(o)
		}()
	}
}

// observations records what the hub's observer is told.
type observations struct {
	mu   sync.Mutex
	seen []observe.Observation
}

func (o *observations) Begin(ctx context.Context, _ observe.CallInfo) (context.Context, func(observe.CallEnd)) {
	return ctx, nil
}
func (o *observations) Observe(_ context.Context, x observe.Observation) {
	o.mu.Lock()
	o.seen = append(o.seen, x)
	o.mu.Unlock()
}
func (o *observations) Carrier(context.Context) map[string]string { return nil }

// TestHubObserver: the hub tells the observer of each connection that joins and leaves,
// and of each event it refuses, with its code.
func TestHubObserver(t *testing.T) {
	obs := &observations{}
	e := newEnv(t, &wshub.Options{Observer: obs}, nil)
	dv := e.dial("obs")
	dv.sendRaw(`{"type":"ask_user_questions_result","data":{"requestId":"nope","answers":[]}}`)
	expectError(t, dv.next(wire.EventError), "not_pending", "nope")
	dv.sendRaw(`not json`)
	expectError(t, dv.next(wire.EventError), "malformed_event", "")
	dv.ws.Close(websocket.StatusNormalClosure, "")
	e.waitDisconnect()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	var got []string
	for _, x := range obs.seen {
		got = append(got, fmt.Sprint(x.Event, " ", x.Code))
	}
	want := []string{fmt.Sprint(observe.Connected, " "), fmt.Sprint(observe.Refused, " not_pending"), fmt.Sprint(observe.Refused, " malformed_event"), fmt.Sprint(observe.Disconnected, " ")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("observed %v, want %v", got, want)
	}
}
