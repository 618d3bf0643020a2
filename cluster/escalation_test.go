package cluster_test

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

// escalations is a Notifier and an observer that every replica shares: the notices and
// the Escalated observations, whichever replica made them.
type escalations struct {
	mu      sync.Mutex
	notices []notify.Notice
	seen    []observe.Observation
}

func (e *escalations) Notify(_ context.Context, n notify.Notice) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.notices = append(e.notices, n)
	return nil
}

func (e *escalations) Begin(ctx context.Context, _ observe.CallInfo) (context.Context, func(observe.CallEnd)) {
	return ctx, nil
}

func (e *escalations) Observe(_ context.Context, o observe.Observation) {
	if o.Event == observe.Escalated {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.seen = append(e.seen, o)
	}
}

func (e *escalations) Carrier(context.Context) map[string]string { return nil }

// TestEscalationAcrossReplicas: an approval that ann may decide, and the lead too after a
// while, asked on one replica and joined on a second (as a resumed run does), so that
// both arm its step; the step fires once across the three replicas on NATS: one notice
// to the lead, one observation; the lead's approval on the third replica is refused
// before the step and ends the call after it.
func TestEscalationAcrossReplicas(t *testing.T) {
	checkLeaks(t)
	e := &escalations{}
	policy := branchPolicy()
	policy.Ask[0].Approvers = &askuser.Approvers{Users: []string{"ann"}, Escalate: []store.Escalation{{After: time.Second, Users: []string{"lead"}}}}
	rs := threeReplicas(t, nil, &askuser.Options{Policy: policy, Notifier: e, NotifyAfter: time.Hour, Observer: e})
	s := askuser.StringSession("escalation")
	lead := rs[2].devices.ConnectAs(s, "lead")
	asked := approve(rs[0], s, "toolu_e", `{"name":"feature/old"}`)
	var a wire.ApprovalData
	if err := json.Unmarshal(recv(t, lead, wire.EventApproval).Data, &a); err != nil || fmt.Sprint(a.Approvers.Names) != "[ann]" {
		t.Fatalf("approval %+v, %v; want ann its approver", a, err)
	}
	joined := approve(rs[1], s, "toolu_e", `{"name":"feature/old"}`)
	approveAs := func() error {
		return lead.Send(t.Context(), decision(s, wire.ApprovalResultData{RequestID: "toolu_e", Decision: wire.DecisionApprove, Digest: a.Digest}))
	}
	if err := approveAs(); !errors.Is(err, wire.ErrNotApprover) {
		t.Fatalf("the lead's approval before the step: %v; want ErrNotApprover", err)
	}
	var p wire.ApprovalProgressData
	if err := json.Unmarshal(recv(t, lead, wire.EventApprovalProgress).Data, &p); err != nil || fmt.Sprint(p.Names) != "[ann lead]" {
		t.Fatalf("progress %+v, %v; want the lead among the approvers", p, err)
	}
	waitFor(t, "the lead's notice", func() bool { e.mu.Lock(); defer e.mu.Unlock(); return len(e.notices) > 0 })
	if err := approveAs(); err != nil {
		t.Fatalf("the lead's approval after the step: %v", err)
	}
	for _, ch := range []chan askuser.ApprovalResult{asked, joined} {
		if r := approvalResult(t, ch); r.Outcome != askuser.Approved || r.Decision.By != "lead" {
			t.Fatalf("result %v by %q; want approved by the lead", r.Outcome, r.Decision.By)
		}
	}
	for _, r := range rs {
		r.close() // every step that was firing has returned
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.notices) != 1 || fmt.Sprint(e.notices[0].To) != "[lead]" {
		t.Fatalf("notices %+v; want one, to the lead", e.notices)
	}
	if len(e.seen) != 1 || fmt.Sprint(e.seen[0].To) != "[lead]" {
		t.Fatalf("escalations observed %+v; want one, to the lead", e.seen)
	}
}
