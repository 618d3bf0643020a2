package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
	"github.com/nats-io/nats.go/jetstream"
)

// peopleReplica is a replica whose devices connect to a real wshub.Hub over HTTP, as the
// person and groups of their URL: ?session=a,b&user=alice&groups=dba.
type peopleReplica struct {
	store *cluster.Store
	tr    *cluster.Transport
	d     *askuser.Dispatcher
	hub   *wshub.Hub
	srv   *httptest.Server
}

func newPeopleReplica(t *testing.T, servers string, dopts *askuser.Options) *peopleReplica {
	t.Helper()
	st := openStore(t, servers, &cluster.Options{Storage: jetstream.MemoryStorage})
	hub := wshub.New(&wshub.Options{Authenticate: func(r *http.Request) (wshub.Access, error) {
		q := r.URL.Query()
		a := wshub.Access{User: q.Get("user")}
		for _, s := range strings.Split(q.Get("session"), ",") {
			a.Sessions = append(a.Sessions, askuser.StringSession(s))
		}
		if g := q.Get("groups"); g != "" {
			a.Groups = strings.Split(g, ",")
		}
		return a, nil
	}})
	tr, err := cluster.NewTransport(st, hub)
	if err != nil {
		t.Fatal(err)
	}
	o := *dopts
	o.Store = st
	r := &peopleReplica{store: st, tr: tr, d: askuser.New(tr, &o), hub: hub, srv: httptest.NewServer(hub)}
	t.Cleanup(func() {
		r.d.Close()
		_ = r.hub.Close()
		r.srv.Close()
		_ = r.tr.Close()
		r.store.Close()
	})
	return r
}

// person is a device of a person, connected to one replica's hub.
type person struct {
	t      *testing.T
	ws     *websocket.Conn
	events chan wire.Event
}

// connect connects a device to r with query, and reads the inbox event the hub sends it first.
func (r *peopleReplica) connect(t *testing.T, query string) (*person, wire.InboxData) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(r.srv.URL, "http")+"/?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(-1)
	p := &person{t: t, ws: ws, events: make(chan wire.Event, 256)}
	go func() {
		defer close(p.events)
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			if ev, err := wire.ParseEvent(b); err == nil {
				p.events <- ev
			}
		}
	}()
	t.Cleanup(func() { _ = ws.CloseNow() })
	var in wire.InboxData
	if err := json.Unmarshal(p.next(wire.EventInbox).Data, &in); err != nil {
		t.Fatal(err)
	}
	return p, in
}

// next returns the device's next event, which must be of type typ.
func (p *person) next(typ string) wire.Event {
	p.t.Helper()
	select {
	case ev, ok := <-p.events:
		if !ok {
			p.t.Fatalf("connection ended while waiting for %s", typ)
		}
		if ev.Type != typ {
			p.t.Fatalf("got %s %s, want %s", ev.Type, ev.Data, typ)
		}
		return ev
	case <-time.After(failsafe):
		p.t.Fatalf("no %s event", typ)
	}
	return wire.Event{}
}

// decide sends the person's decision of the approval id of session.
func (p *person) decide(session, id, decision, digest string) {
	p.t.Helper()
	b, _ := json.Marshal(map[string]any{"type": wire.EventApprovalResult, "sessionId": session,
		"data": wire.ApprovalResultData{RequestID: id, Decision: decision, Digest: digest}})
	if err := p.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		p.t.Fatal(err)
	}
}

// TestPeopleAcrossReplicas: a call two of dba must approve, escalating to the lead, is
// asked on one replica while its approvers' devices are on the two others, connected for
// sessions of their own. Each is given the approval; alice's approval on one replica and
// the lead's, once the step has reached the lead's device, on another end it approved on
// the asking replica; every person's inbox, on whatever replica, follows it live.
func TestPeopleAcrossReplicas(t *testing.T) {
	checkLeaks(t)
	n := startNode(t)
	policy := branchPolicy()
	policy.Ask[0].Approvers = &askuser.Approvers{Groups: []string{"dba"}, Quorum: 2, SeparateDuties: true,
		Escalate: []store.Escalation{{After: 400 * time.Millisecond, Users: []string{"lead"}}}}
	opts := &askuser.Options{Policy: policy, SessionTitle: func(s askuser.SessionID) string { return "title of " + s.String() }}
	rs := []*peopleReplica{newPeopleReplica(t, n.url(), opts), newPeopleReplica(t, n.url(), opts), newPeopleReplica(t, n.url(), opts)}

	dev, _ := rs[0].connect(t, "session=ops&user=dev")
	alice, _ := rs[1].connect(t, "session=alice-home&user=alice&groups=dba")
	lead, _ := rs[2].connect(t, "session=lead-home&user=lead")
	home := askuser.StringSession("alice-home")
	aliceOf := wshub.Access{User: "alice", Groups: []string{"dba"}, Sessions: []askuser.SessionID{home}}
	question := make(chan askuser.Result, 1)
	go func() {
		question <- rs[2].d.Dispatch(context.Background(), askuser.ToolCall{Session: home, ID: "call_q", Name: askuser.ToolName, Arguments: json.RawMessage(deployArgs)})
	}()
	alice.next(wire.EventAsk)
	s := askuser.StringSession("ops")
	ch := make(chan askuser.ApprovalResult, 1)
	go func() {
		ch <- rs[0].d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: "toolu_p", Name: "delete_branch",
			Arguments: json.RawMessage(`{"name":"old"}`), Requester: "dev"}, nil)
	}()
	var a wire.ApprovalData
	for _, p := range []*person{dev, alice} {
		ev := p.next(wire.EventApproval)
		if err := json.Unmarshal(ev.Data, &a); err != nil || ev.SessionID != s || a.SessionTitle != "title of ops" {
			t.Fatalf("approval %s %+v, %v; want the session ops's, titled", ev.SessionID, a, err)
		}
	}
	// Alice's inbox, on a replica where she has no device: the approval routed to her,
	// then her own session's question, newest first.
	waitFor(t, "alice's inbox on the first replica to list both", func() bool {
		box := rs[0].hub.Inbox(aliceOf)
		return len(box.Pending) == 2 && box.Pending[0].RequestID == "toolu_p" && box.Pending[1].RequestID == "call_q"
	})
	waitFor(t, "bob's inbox on the third replica to list the approval, to decide", func() bool {
		box := rs[2].hub.Inbox(wshub.Access{User: "bob", Groups: []string{"dba"}, Sessions: []askuser.SessionID{askuser.StringSession("bob-home")}})
		return len(box.Pending) == 1 && !box.Pending[0].ReadOnly
	})
	if box := rs[1].hub.Inbox(wshub.Access{User: "lead", Sessions: []askuser.SessionID{askuser.StringSession("lead-home")}}); len(box.Pending) != 0 {
		t.Fatalf("the lead's inbox before the step %+v; want nothing", box)
	}

	alice.decide("ops", "toolu_p", wire.DecisionApprove, a.Digest)
	dev.next(wire.EventApprovalProgress)
	alice.next(wire.EventApprovalProgress)

	// The step: the lead's device, on the third replica, is given the approval.
	var shown wire.ApprovalData
	if err := json.Unmarshal(lead.next(wire.EventApproval).Data, &shown); err != nil || shown.RequestID != "toolu_p" {
		t.Fatalf("the lead was shown %+v, %v", shown, err)
	}
	var step wire.ApprovalProgressData
	if err := json.Unmarshal(lead.next(wire.EventApprovalProgress).Data, &step); err != nil || fmt.Sprint(step.Users) != "[lead]" || fmt.Sprint(step.Approved) != "[alice]" {
		t.Fatalf("the step's progress %+v, %v; want the lead among the approvers, alice's approval kept", step, err)
	}
	dev.next(wire.EventApprovalProgress) // the step, told to the session's device
	alice.next(wire.EventApprovalProgress)
	lead.decide("ops", "toolu_p", wire.DecisionApprove, step.Digest)
	if r := approvalResult(t, ch); r.Outcome != askuser.Approved || r.Decision.By != "lead" {
		t.Fatalf("the asking replica got %v by %q; want approved by the lead", r.Outcome, r.Decision.By)
	}
	for _, p := range []*person{dev, alice, lead} {
		var r wire.ApprovalResolvedData
		if err := json.Unmarshal(p.next(wire.EventApprovalResolved).Data, &r); err != nil || r.By != "lead" {
			t.Fatalf("resolution %+v, %v; want the lead's", r, err)
		}
	}
	for i, r := range rs {
		waitFor(t, fmt.Sprintf("alice's inbox on replica %d to show the approval decided", i), func() bool {
			box := r.hub.Inbox(aliceOf)
			return len(box.Pending) == 1 && box.Pending[0].RequestID == "call_q" && len(box.Decided) == 1 && box.Decided[0].By == "lead" && box.Decided[0].Outcome == "approved"
		})
	}
	rs[1].d.CancelSession(home) // the question ends on another replica than the one that asked
	if r := <-question; r.Outcome != askuser.Cancelled {
		t.Fatalf("the question %v; want cancelled", r.Outcome)
	}
	alice.next(wire.EventResolved)
	for i, r := range rs {
		waitFor(t, fmt.Sprintf("alice's inbox on replica %d to empty", i), func() bool { return len(r.hub.Inbox(aliceOf).Pending) == 0 })
	}
}

// TestReplicaStartedWhileApprovalWaits: a replica that starts while an approval waits
// knows whom it is for: a device of its approver connecting there is given it, and
// decides it.
func TestReplicaStartedWhileApprovalWaits(t *testing.T) {
	checkLeaks(t)
	n := startNode(t)
	policy := branchPolicy()
	policy.Ask[0].Approvers = &askuser.Approvers{Users: []string{"lead"}}
	opts := &askuser.Options{Policy: policy}
	first := newPeopleReplica(t, n.url(), opts)
	s := askuser.StringSession("ops")
	ch := make(chan askuser.ApprovalResult, 1)
	go func() {
		ch <- first.d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: "toolu_l", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"old"}`)}, nil)
	}()
	waitFor(t, "the approval to wait", func() bool { return len(first.d.Pending(s)) == 1 })

	later := newPeopleReplica(t, n.url(), opts)
	lead, _ := later.connect(t, "session=lead-home&user=lead")
	var a wire.ApprovalData
	if err := json.Unmarshal(lead.next(wire.EventApproval).Data, &a); err != nil || a.RequestID != "toolu_l" {
		t.Fatalf("the lead was shown %+v, %v", a, err)
	}
	lead.decide("ops", "toolu_l", wire.DecisionDeny, a.Digest)
	if r := approvalResult(t, ch); r.Outcome != askuser.Denied || r.Decision.By != "lead" {
		t.Fatalf("got %v by %q; want denied by the lead", r.Outcome, r.Decision.By)
	}
	lead.next(wire.EventApprovalResolved)
}

// TestQuorumEditAndDenialAcrossReplicas: of a call two of ann, bob and cy must approve,
// asked on one replica: ann's approval on a second, then bob's edit on the third, which
// starts the count again with bob's approval of the edited arguments (ann's no longer
// counts), then cy's denial on the second, which ends it at once, denied, on the asking
// replica.
func TestQuorumEditAndDenialAcrossReplicas(t *testing.T) {
	checkLeaks(t)
	policy := branchPolicy()
	policy.Ask[0].Approvers = &askuser.Approvers{Users: []string{"ann", "bob", "cy"}, Quorum: 2}
	rs := threeReplicas(t, nil, &askuser.Options{Policy: policy})
	s := askuser.StringSession("edit-deny")
	asker, ann, bob, cy := rs[0].devices.ConnectAs(s, "dev"), rs[1].devices.ConnectAs(s, "ann"), rs[2].devices.ConnectAs(s, "bob"), rs[1].devices.ConnectAs(s, "cy")
	ch := approve(rs[0], s, "toolu_e", `{"name":"feature/old"}`)
	var a wire.ApprovalData
	if err := json.Unmarshal(recv(t, asker, wire.EventApproval).Data, &a); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*askusertest.Device{ann, bob, cy} {
		recv(t, d, wire.EventApproval)
	}
	if err := ann.Send(t.Context(), decision(s, wire.ApprovalResultData{RequestID: "toolu_e", Decision: wire.DecisionApprove, Digest: a.Digest})); err != nil {
		t.Fatal(err)
	}
	recv(t, asker, wire.EventApprovalProgress)
	recv(t, bob, wire.EventApprovalProgress)
	if err := bob.Send(t.Context(), decision(s, wire.ApprovalResultData{RequestID: "toolu_e", Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"name":"feature/older"}`), Digest: a.Digest})); err != nil {
		t.Fatal(err)
	}
	var p wire.ApprovalProgressData
	if err := json.Unmarshal(recv(t, asker, wire.EventApprovalProgress).Data, &p); err != nil || fmt.Sprint(p.Approved) != "[bob]" || p.Digest == a.Digest || string(p.Arguments) != `{"name":"feature/older"}` {
		t.Fatalf("progress after the edit %+v, %v; want the count started again with bob's, a new digest, the edited arguments", p, err)
	}
	select {
	case r := <-ch:
		t.Fatalf("ann's approval and bob's edit ended the call: %+v", r)
	default:
	}
	waitFor(t, "the second replica to read the edit", func() bool {
		got := rs[1].tr.PendingApprovals(s)
		return len(got) == 1 && got[0].Digest == p.Digest
	})
	if err := cy.Send(t.Context(), decision(s, wire.ApprovalResultData{RequestID: "toolu_e", Decision: wire.DecisionDeny, Reason: "not today", Digest: p.Digest})); err != nil {
		t.Fatal(err)
	}
	if r := approvalResult(t, ch); r.Outcome != askuser.Denied || r.Decision.By != "cy" {
		t.Fatalf("the asking replica got %v by %q; want denied by cy", r.Outcome, r.Decision.By)
	}
}
