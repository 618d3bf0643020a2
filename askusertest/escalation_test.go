package askusertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// counted is a Notifier and an Observer that two dispatchers share: it keeps every
// notice and every Escalated observation, whoever made it.
type counted struct {
	mu        sync.Mutex
	notices   []notify.Notice
	escalated []observe.Observation
	noticed   chan struct{}
}

func (c *counted) Notify(_ context.Context, n notify.Notice) error {
	c.mu.Lock()
	c.notices = append(c.notices, n)
	c.mu.Unlock()
	c.noticed <- struct{}{}
	return nil
}

func (c *counted) Begin(ctx context.Context, _ observe.CallInfo) (context.Context, func(observe.CallEnd)) {
	return ctx, nil
}

func (c *counted) Observe(_ context.Context, o observe.Observation) {
	if o.Event == observe.Escalated {
		c.mu.Lock()
		c.escalated = append(c.escalated, o)
		c.mu.Unlock()
	}
}

func (c *counted) Carrier(context.Context) map[string]string { return nil }

// TestEscalationOnceAcrossReplicas: two dispatchers share a store and both wait on one
// approval (the second joined it, as a resumed run does), so both arm its escalation
// step; the step fires once: one notice, one observation, and the lead may decide.
func TestEscalationOnceAcrossReplicas(t *testing.T) {
	st := newSharedStore()
	c := &counted{noticed: make(chan struct{}, 8)}
	policy := &askuser.Policy{Ask: []askuser.Rule{{Tool: "drop_database", Approvers: &askuser.Approvers{
		Users: []string{"alice"}, Escalate: []store.Escalation{{After: 200 * time.Millisecond, Users: []string{"lead"}}},
	}}}}
	la, lb := NewTransport(), NewTransport()
	opts := func() *askuser.Options {
		return &askuser.Options{Store: st, Policy: policy, Notifier: c, NotifyAfter: time.Hour, Observer: c}
	}
	a := askuser.New(spanning{[]*Transport{la, lb}}, opts())
	b := askuser.New(spanning{[]*Transport{lb, la}}, opts())
	t.Cleanup(func() {
		a.Close()
		b.Close()
		la.Close()
		lb.Close()
	})
	s := askuser.StringSession("ops")
	call := askuser.ToolCall{Session: s, ID: "drop1", Name: "drop_database", Arguments: json.RawMessage(`{"db":"prod"}`)}
	results := make(chan askuser.ApprovalResult, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { results <- a.Approve(ctx, call, nil) }()
	lead := lb.ConnectAs(s, "lead")
	ev, err := lead.Recv(ctx)
	if err != nil || ev.Type != wire.EventApproval {
		t.Fatalf("the lead's device got %v, %v; want the approval", ev, err)
	}
	go func() { results <- b.Approve(ctx, call, nil) }()
	var ap wire.ApprovalData
	if err := json.Unmarshal(ev.Data, &ap); err != nil {
		t.Fatal(err)
	}
	decision := func() error {
		data, _ := json.Marshal(wire.ApprovalResultData{RequestID: "drop1", Decision: wire.DecisionApprove, Digest: ap.Digest})
		return lead.Send(ctx, wire.Event{Type: wire.EventApprovalResult, Data: data})
	}
	if err := decision(); !errors.Is(err, wire.ErrNotApprover) {
		t.Fatalf("the lead's approval before the step: %v; want not_approver", err)
	}
	select {
	case <-c.noticed:
	case <-ctx.Done():
		t.Fatal("the step was not notified")
	}
	if err := decision(); err != nil {
		t.Fatalf("the lead's approval after the step: %v", err)
	}
	for range 2 {
		if r := <-results; r.Outcome != askuser.Approved || r.Decision.By != "lead" {
			t.Fatalf("result %+v; want approved by the lead", r)
		}
	}
	a.Close()
	b.Close() // both have stopped notifying
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.notices) != 1 || fmt.Sprint(c.notices[0].To) != "[lead]" {
		t.Fatalf("notices %+v; want one, to the lead", c.notices)
	}
	if len(c.escalated) != 1 || fmt.Sprint(c.escalated[0].To) != "[lead]" {
		t.Fatalf("escalations observed %+v; want one, to the lead", c.escalated)
	}
}
