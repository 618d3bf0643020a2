package cluster_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// Approvals across replicas: the same guarantees as questions, on real NATS.

// branchPolicy asks about delete_branch, whose edits its schema checks; "always" grants
// every later call of it in the session.
func branchPolicy() *askuser.Policy {
	return &askuser.Policy{
		Ask:   []askuser.Rule{{Tool: "delete_branch"}},
		Tools: []askuser.Tool{{Name: "delete_branch", Description: "Deletes a git branch", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`)}},
	}
}

// approve runs Approve on r in a goroutine.
func approve(r *replica, session askuser.SessionID, id, args string) chan askuser.ApprovalResult {
	ch := make(chan askuser.ApprovalResult, 1)
	go func() {
		ch <- r.d.Approve(context.Background(), askuser.ToolCall{Session: session, ID: id, Name: "delete_branch", Arguments: json.RawMessage(args)}, nil)
	}()
	return ch
}

func approvalResult(t testing.TB, ch chan askuser.ApprovalResult) askuser.ApprovalResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(failsafe):
		t.Fatal("the approval never returned")
	}
	return askuser.ApprovalResult{}
}

func decision(session askuser.SessionID, data wire.ApprovalResultData) wire.Event {
	ev, err := wire.NewEvent(wire.EventApprovalResult, session, data)
	if err != nil {
		panic(err)
	}
	return ev
}

// TestApprovalAcrossReplicas: an approval asked on one replica is shown to the devices
// of every replica, decided on another, with the first decision winning across them; the
// decision is audited once, with who decided, by the replica that recorded it; every
// device is told.
func TestApprovalAcrossReplicas(t *testing.T) {
	checkLeaks(t)
	var mu sync.Mutex
	var audits []observe.Audit
	opts := &askuser.Options{Policy: branchPolicy(), Observer: observe.Hooks{OnAudit: func(a observe.Audit) {
		mu.Lock()
		audits = append(audits, a)
		mu.Unlock()
	}}}
	rs := threeReplicas(t, nil, opts)
	s := askuser.StringSession("approvals")
	devs := []*askusertest.Device{rs[0].devices.ConnectAs(s, "ann"), rs[1].devices.ConnectAs(s, "bob"), rs[2].devices.ConnectAs(s, "cy")}
	ch := approve(rs[0], s, "toolu_1", `{"name":"feature/old"}`)
	var digest string
	for _, d := range devs {
		var a wire.ApprovalData
		if err := json.Unmarshal(recv(t, d, wire.EventApproval).Data, &a); err != nil || a.RequestID != "toolu_1" {
			t.Fatalf("approval %+v, %v", a, err)
		}
		digest = a.Digest
	}
	// Two devices on two other replicas decide at once: one wins.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, dec := range []wire.ApprovalResultData{
		{RequestID: "toolu_1", Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"name":"feature/older"}`), Digest: digest},
		{RequestID: "toolu_1", Decision: wire.DecisionDeny, Reason: "keep it", Digest: digest},
	} {
		wg.Go(func() { errs[i] = devs[i+1].Send(context.Background(), decision(s, dec)) })
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("both or neither decision taken: %v, %v", errs[0], errs[1])
	}
	r := approvalResult(t, ch)
	want, by := askuser.Edited, "bob"
	if errs[0] != nil {
		want, by = askuser.Denied, "cy"
	}
	if r.Outcome != want || r.Decision.By != by {
		t.Fatalf("the asking replica got %v by %q, want %v by %q", r.Outcome, r.Decision.By, want, by)
	}
	if want == askuser.Edited && string(r.Arguments) != `{"name":"feature/older"}` {
		t.Fatalf("it would run with %s", r.Arguments)
	}
	for _, d := range devs {
		var res wire.ApprovalResolvedData
		if err := json.Unmarshal(recv(t, d, wire.EventApprovalResolved).Data, &res); err != nil || res.Outcome != want {
			t.Fatalf("a device was told %+v, %v", res, err)
		}
	}
	waitFor(t, "the audit record", func() bool { mu.Lock(); defer mu.Unlock(); return len(audits) > 0 })
	time.Sleep(100 * time.Millisecond) // a second record, if there were one, would come now
	mu.Lock()
	if len(audits) != 1 || audits[0].By != by || audits[0].Outcome != want {
		t.Fatalf("audit records %+v", audits)
	}
	mu.Unlock()
}

// TestGrantOnAnotherReplica: an "always" decision made on one replica lets the next call
// of the session on another replica run without asking; revoked on a third, it asks
// again everywhere.
func TestGrantOnAnotherReplica(t *testing.T) {
	checkLeaks(t)
	rs := threeReplicas(t, nil, &askuser.Options{Policy: branchPolicy()})
	s := askuser.StringSession("grants")
	dev := rs[1].devices.Connect(s)
	ch := approve(rs[0], s, "toolu_g1", `{"name":"a"}`)
	recv(t, dev, wire.EventApproval)
	if err := dev.Send(context.Background(), decision(s, wire.ApprovalResultData{RequestID: "toolu_g1", Decision: wire.DecisionAlways})); err != nil {
		t.Fatal(err)
	}
	r := approvalResult(t, ch)
	if r.Outcome != askuser.Approved || r.Grant == nil {
		t.Fatalf("always: %+v", r)
	}
	next := rs[2].d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: "toolu_g2", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"b"}`)}, nil)
	if next.Outcome != askuser.Approved || next.Grant == nil || next.Grant.ID != "toolu_g1" || next.RequestID != "" {
		t.Fatalf("on another replica the next call got %+v, want approved by the grant", next)
	}
	grants, err := rs[1].d.Grants().Grants(context.Background(), s)
	if err != nil || len(grants) != 1 {
		t.Fatalf("Grants = %+v, %v", grants, err)
	}
	if ok, err := rs[1].d.Grants().RevokeGrant(context.Background(), s, "toolu_g1"); !ok || err != nil {
		t.Fatalf("RevokeGrant = %v, %v", ok, err)
	}
	again := approve(rs[2], s, "toolu_g3", `{"name":"c"}`)
	recv(t, dev, wire.EventApproval) // asked again
	rs[0].d.CancelSession(s)
	if r := approvalResult(t, again); r.Outcome != askuser.Cancelled {
		t.Fatalf("after the revoke: %+v", r)
	}
}

// TestApprovalResumedOnAnotherReplica: the replica that asked closes (as a restarted
// one leaves its questions); the approval stays pending in the bucket, decided on a
// device of another replica; a run resumed on a third with the same call gets the
// decision given meanwhile, and nobody is asked twice.
func TestApprovalResumedOnAnotherReplica(t *testing.T) {
	checkLeaks(t)
	n := startNode(t)
	sopts := &cluster.Options{Storage: jetstream.MemoryStorage}
	dopts := &askuser.Options{Policy: branchPolicy()}
	a := newReplica(t, "a", n.url(), sopts, dopts)
	b := newReplica(t, "b", n.url(), sopts, dopts)
	s := askuser.StringSession("resumed")
	dev := b.devices.Connect(s)
	ch := approve(a, s, "toolu_r", `{"name":"x"}`)
	recv(t, dev, wire.EventApproval)
	a.d.Close() // its call returns Shutdown; the approval stays for the others
	if r := approvalResult(t, ch); r.Outcome != askuser.Shutdown {
		t.Fatalf("the closed replica's call: %+v", r)
	}
	if p := askusertest.Approvals(b.d, s); len(p) != 1 {
		t.Fatalf("pending after the close: %+v", p)
	}
	if err := dev.Send(context.Background(), decision(s, wire.ApprovalResultData{RequestID: "toolu_r", Decision: wire.DecisionApprove})); err != nil {
		t.Fatal(err)
	}
	recv(t, dev, wire.EventApprovalResolved)
	c := newReplica(t, "c", n.url(), sopts, dopts)
	r := c.d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: "toolu_r", Name: "delete_branch", Arguments: json.RawMessage(`{ "name": "x" }`)}, nil)
	if r.Outcome != askuser.Approved || string(r.Arguments) != `{ "name": "x" }` {
		t.Fatalf("the resumed run got %+v", r)
	}
	other := c.d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: "toolu_r", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"y"}`)}, nil)
	if other.Outcome != askuser.Invalid {
		t.Fatalf("the same id with other arguments got %+v", other)
	}
	for _, ev := range drain(dev) {
		if ev.Type == wire.EventApproval {
			t.Fatalf("asked twice: %v", ev)
		}
	}
}
