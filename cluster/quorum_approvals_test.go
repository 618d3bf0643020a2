package cluster_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
)

// TestTwoApproversAcrossReplicas: a call that two of ann, bob and cy must approve, asked
// on one replica, approved by ann on a second, which is then closed; a device joining on
// the third is shown ann's approval, ann approving again there counts once, a stranger
// is refused as not_approver, and cy's approval there ends it on the asking replica, with
// both approvals in the one audit record.
func TestTwoApproversAcrossReplicas(t *testing.T) {
	checkLeaks(t)
	var mu sync.Mutex
	var audits []observe.Audit
	policy := branchPolicy()
	policy.Ask[0].Approvers = &askuser.Approvers{Users: []string{"ann", "bob", "cy"}, Quorum: 2}
	opts := &askuser.Options{Policy: policy, Observer: observe.Hooks{OnAudit: func(a observe.Audit) {
		mu.Lock()
		audits = append(audits, a)
		mu.Unlock()
	}}}
	rs := threeReplicas(t, nil, opts)
	s := askuser.StringSession("quorum")
	asker, ann := rs[0].devices.ConnectAs(s, "dev"), rs[1].devices.ConnectAs(s, "ann")
	ch := approve(rs[0], s, "toolu_q", `{"name":"feature/old"}`)
	var a wire.ApprovalData
	for _, d := range []*askusertest.Device{asker, ann} {
		if err := json.Unmarshal(recv(t, d, wire.EventApproval).Data, &a); err != nil || a.Approvers == nil || a.Approvers.Quorum != 2 {
			t.Fatalf("approval %+v, %v; want a quorum of 2", a, err)
		}
	}
	approveAs := func(d *askusertest.Device) error {
		return d.Send(t.Context(), decision(s, wire.ApprovalResultData{RequestID: "toolu_q", Decision: wire.DecisionApprove, Digest: a.Digest}))
	}
	if err := approveAs(ann); err != nil {
		t.Fatal(err)
	}
	var p wire.ApprovalProgressData
	if err := json.Unmarshal(recv(t, asker, wire.EventApprovalProgress).Data, &p); err != nil || fmt.Sprint(p.Approved) != "[ann]" {
		t.Fatalf("the asking replica's device was told %+v, %v; want ann's approval", p, err)
	}
	rs[1].close() // the replica that recorded ann's approval goes

	waitFor(t, "the third replica to show ann's approval", func() bool {
		got := rs[2].tr.PendingApprovals(s)
		return len(got) == 1 && got[0].Approvers != nil && fmt.Sprint(got[0].Approvers.Approved) == "[ann]"
	})
	late := rs[2].devices.ConnectAs(s, "cy")
	var shown wire.ApprovalData
	if err := json.Unmarshal(recv(t, late, wire.EventApproval).Data, &shown); err != nil || fmt.Sprint(shown.Approvers.Approved) != "[ann]" {
		t.Fatalf("a device joining the third replica is shown %+v, %v", shown.Approvers, err)
	}
	if err := approveAs(rs[2].devices.ConnectAs(s, "ann")); err != nil {
		t.Fatal(err)
	}
	if err := approveAs(rs[2].devices.ConnectAs(s, "eve")); !errors.Is(err, wire.ErrNotApprover) {
		t.Fatalf("a stranger's approval: %v, want ErrNotApprover", err)
	}
	select {
	case r := <-ch:
		t.Fatalf("ann approving twice ended the call: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	if err := approveAs(late); err != nil {
		t.Fatal(err)
	}
	r := approvalResult(t, ch)
	if r.Outcome != askuser.Approved || r.Decision.By != "cy" {
		t.Fatalf("the asking replica got %v by %q, want approved by cy", r.Outcome, r.Decision.By)
	}
	waitFor(t, "the audit record", func() bool { mu.Lock(); defer mu.Unlock(); return len(audits) > 0 })
	mu.Lock()
	defer mu.Unlock()
	if got := audits[0]; len(audits) != 1 || len(got.Approvals) != 2 || got.Approvals[0].By != "ann" || got.Approvals[1].By != "cy" {
		t.Fatalf("audit records %+v; want one, with ann's and cy's approvals", audits)
	}
}
