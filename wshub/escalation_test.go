package wshub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// notices is a Notifier that passes on every notice.
type notices chan notify.Notice

func (n notices) Notify(_ context.Context, x notify.Notice) error {
	n <- x
	return nil
}

// newEscalationEnv is newApproversEnv's hub with a dispatcher that times out after
// timeout and gives its notices to the channel it returns (the notice of a request
// gone unseen comes after an hour: only escalations' come).
func newEscalationEnv(t *testing.T, policy *askuser.Policy, timeout time.Duration) (*approversEnv, notices) {
	ns := make(notices, 8)
	return newApproversEnvWith(t, &askuser.Options{Policy: policy, Timeout: timeout, Notifier: ns, NotifyAfter: time.Hour}), ns
}

// escalatedTo lists the people of each Escalated observation so far.
func (e *approversEnv) escalatedTo() []string {
	e.obs.mu.Lock()
	defer e.obs.mu.Unlock()
	var out []string
	for _, x := range e.obs.seen {
		if x.Event == observe.Escalated {
			out = append(out, fmt.Sprint(x.To))
		}
	}
	return out
}

// nextNotice waits for the Notifier's next notice.
func nextNotice(t *testing.T, ns notices) notify.Notice {
	t.Helper()
	select {
	case n := <-ns:
		return n
	case <-time.After(failsafe):
		t.Fatal("the Notifier was not called")
	}
	return notify.Notice{}
}

// TestEscalation: two of dba must approve drop_database; after a while the lead may
// decide too. The lead's decision is refused before the step and taken after it; alice's
// approval, given before, still counts; every device is told the approvers now, and a
// device that joins is shown them; the Notifier is told once, for the lead.
func TestEscalation(t *testing.T) {
	const after = 1500 * time.Millisecond // the lead's refusal comes well before it
	e, ns := newEscalationEnv(t, &askuser.Policy{Ask: []askuser.Rule{{Tool: "drop_database", Approvers: &askuser.Approvers{
		Groups: []string{"dba"}, Quorum: 2, Escalate: []store.Escalation{{After: after, Users: []string{"lead"}}},
	}}}}, time.Hour)
	s := askuser.StringSession("ops")
	res := e.approve(dropCall(s, "dev"), nil)
	ap := e.pending(s, "drop1")
	alice := e.dial("ops&user=alice&groups=dba")
	lead := e.dial("ops&user=lead")
	for _, dv := range []*device{alice, lead} {
		dv.next(wire.EventApproval)
	}
	decide(alice, "drop1", wire.DecisionApprove, ap.Digest, nil)
	for _, dv := range []*device{alice, lead} {
		if p := decode[wire.ApprovalProgressData](t, dv.next(wire.EventApprovalProgress)); fmt.Sprint(p.Approved) != "[alice]" || p.Names != nil {
			t.Fatalf("progress %+v; want alice's approval, the approvers unchanged", p)
		}
	}
	decide(lead, "drop1", wire.DecisionApprove, ap.Digest, nil)
	expectError(t, lead.next(wire.EventError), "not_approver", "drop1")

	for _, dv := range []*device{alice, lead} {
		p := decode[wire.ApprovalProgressData](t, dv.next(wire.EventApprovalProgress))
		if fmt.Sprint(p.Names) != "[dba lead]" || fmt.Sprint(p.Approved) != "[alice]" || p.Digest != ap.Digest {
			t.Fatalf("progress at the step %+v; want the lead among the approvers, alice's approval kept", p)
		}
	}
	if n := nextNotice(t, ns); fmt.Sprint(n.To) != "[lead]" || n.RequestID != "drop1" || n.Title != "drop_database" {
		t.Fatalf("notice %+v; want one for the lead", n)
	}
	late := e.dial("ops&user=bob&groups=dba")
	if a := decode[wire.ApprovalData](t, late.next(wire.EventApproval)); a.Approvers == nil || fmt.Sprint(*a.Approvers) != "{[dba lead] 2 [alice] [lead] [dba]}" {
		t.Fatalf("a device joining is shown %+v; want the lead among the approvers", a.Approvers)
	}
	decide(lead, "drop1", wire.DecisionApprove, ap.Digest, nil)
	r := <-res
	if r.Outcome != askuser.Approved || r.Decision.By != "lead" {
		t.Fatalf("result %+v; want approved, by the lead last", r)
	}
	if a := <-e.audits; len(a.Approvals) != 2 || a.Approvals[0].By != "alice" || a.Approvals[1].By != "lead" {
		t.Fatalf("audit %+v; want alice's and the lead's approvals", a)
	}
	if got := fmt.Sprint(e.escalatedTo()); got != "[[lead]]" {
		t.Fatalf("escalations observed %s; want one, to the lead", got)
	}
	select {
	case n := <-ns:
		t.Fatalf("a second notice %+v", n)
	default:
	}
}

// TestEscalationTimesOut: two steps fire in turn, each notifying its own people once,
// while nobody decides; the request's timeout still ends it.
func TestEscalationTimesOut(t *testing.T) {
	e, ns := newEscalationEnv(t, &askuser.Policy{Ask: []askuser.Rule{{Tool: "drop_database", Approvers: &askuser.Approvers{
		Groups: []string{"dba"}, Escalate: []store.Escalation{
			{After: 200 * time.Millisecond, Users: []string{"lead"}},
			{After: 400 * time.Millisecond, Users: []string{"cto"}, Groups: []string{"oncall"}},
		},
	}}}}, 3*time.Second)
	s := askuser.StringSession("ops")
	dev := e.dial("ops&user=dev")
	res := e.approve(dropCall(s, "dev"), nil)
	dev.next(wire.EventApproval)
	for _, want := range []string{"[dba lead]", "[dba lead cto oncall]"} {
		if p := decode[wire.ApprovalProgressData](t, dev.next(wire.EventApprovalProgress)); fmt.Sprint(p.Names) != want {
			t.Fatalf("progress %+v; want the approvers %s", p, want)
		}
	}
	for _, want := range []string{"[lead]", "[cto oncall]"} {
		if n := nextNotice(t, ns); fmt.Sprint(n.To) != want {
			t.Fatalf("notice to %v; want %s", n.To, want)
		}
	}
	select {
	case r := <-res:
		if r.Outcome != askuser.TimedOut {
			t.Fatalf("result %+v; want timed out", r)
		}
	case <-time.After(failsafe):
		t.Fatal("the call did not time out")
	}
	if got := fmt.Sprint(e.escalatedTo()); got != "[[lead] [cto oncall]]" {
		t.Fatalf("escalations observed %s", got)
	}
	select {
	case n := <-ns:
		t.Fatalf("a third notice %+v", n)
	default:
	}
}
