package wshub_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
)

// titled is a dispatcher's SessionTitle: "ops" is the "Ops console".
func titled(s askuser.SessionID) string {
	if s.String() == "ops" {
		return "Ops console"
	}
	return ""
}

// inboxOf returns the hub's inbox of user, of groups, with sessions.
func (e *approversEnv) inboxOf(user string, groups []string, sessions ...string) wshub.Inbox {
	a := wshub.Access{User: user, Groups: groups}
	for _, s := range sessions {
		a.Sessions = append(a.Sessions, askuser.StringSession(s))
	}
	return e.hub.Inbox(a)
}

// TestApprovalRoutedToPeople: the approvers of a call, connected for sessions of their
// own, are given the approval and decide it; someone else's device is given nothing and
// its decision is refused; the session's own device sees it all, and its person's inbox
// shows it read-only. A person connecting later is told who decided, and when.
func TestApprovalRoutedToPeople(t *testing.T) {
	e := newApproversEnvWith(t, &askuser.Options{Policy: dbaRule(2, true), SessionTitle: titled})
	dev := e.dial("ops&user=dev")
	alice := e.dial("alice-home&user=alice&groups=dba")
	bob := e.dial("bob-home&user=bob&groups=dba")
	carol := e.dial("carol-home&user=carol&groups=web")
	s := askuser.StringSession("ops")
	res := e.approve(dropCall(s, "dev"), nil)

	var digest string
	for _, dv := range []*device{dev, alice, bob} {
		ev := dv.next(wire.EventApproval)
		a := decode[wire.ApprovalData](t, ev)
		if ev.SessionID != s || a.RequestID != "drop1" || a.SessionTitle != "Ops console" || a.AskedAt.IsZero() {
			t.Fatalf("approval %s %+v; want drop1 of the session ops, titled, with when it was asked", ev.SessionID, a)
		}
		digest = a.Digest
	}
	if in := e.inboxOf("dev", nil, "ops"); len(in.Pending) != 1 || !in.Pending[0].ReadOnly || in.Pending[0].SessionTitle != "Ops console" {
		t.Fatalf("the developer's inbox %+v; want drop1, read-only", in)
	}
	if in := e.inboxOf("alice", []string{"dba"}, "alice-home"); len(in.Pending) != 1 || in.Pending[0].ReadOnly || in.Pending[0].What != "drop_database" {
		t.Fatalf("alice's inbox %+v; want drop1 to decide", in)
	}
	if in := e.inboxOf("carol", []string{"web"}, "carol-home"); len(in.Pending) != 0 {
		t.Fatalf("carol's inbox %+v; want nothing", in)
	}

	decide(carol, "drop1", wire.DecisionApprove, digest, nil) // sessionId absent: carol's own
	expectError(t, carol.next(wire.EventError), "not_pending", "drop1")
	carol.send(map[string]any{"type": wire.EventApprovalResult, "sessionId": "ops", "data": wire.ApprovalResultData{RequestID: "drop1", Decision: wire.DecisionApprove, Digest: digest}})
	expectError(t, carol.next(wire.EventError), "forbidden", "drop1")

	alice.send(map[string]any{"type": wire.EventApprovalResult, "sessionId": "ops", "data": wire.ApprovalResultData{RequestID: "drop1", Decision: wire.DecisionApprove, Digest: digest}})
	for _, dv := range []*device{dev, alice, bob} {
		if p := decode[wire.ApprovalProgressData](t, dv.next(wire.EventApprovalProgress)); fmt.Sprint(p.Approved) != "[alice]" {
			t.Fatalf("progress %+v; want alice's approval", p)
		}
	}
	if in := e.inboxOf("bob", []string{"dba"}, "bob-home"); len(in.Pending) != 1 || fmt.Sprint(in.Pending[0].Approvers.Approved) != "[alice]" {
		t.Fatalf("bob's inbox %+v; want drop1 with alice's approval", in)
	}
	bob.send(map[string]any{"type": wire.EventApprovalResult, "sessionId": "ops", "data": wire.ApprovalResultData{RequestID: "drop1", Decision: wire.DecisionApprove, Digest: digest}})
	if r := <-res; r.Outcome != askuser.Approved || r.Decision.By != "bob" {
		t.Fatalf("result %+v; want approved by bob", r)
	}
	for _, dv := range []*device{dev, alice, bob} {
		if r := decode[wire.ApprovalResolvedData](t, dv.next(wire.EventApprovalResolved)); r.Outcome != wire.Approved || r.By != "bob" || r.At.IsZero() {
			t.Fatalf("resolution %+v; want approved by bob, with when", r)
		}
	}
	settle(t, carol) // carol was given nothing of drop1: her next event is this refusal

	late := e.env.dial("lead-home&user=alice&groups=dba")
	in := decode[wire.InboxData](t, late.next(wire.EventInbox))
	if len(in.Decided) != 1 || in.Decided[0].RequestID != "drop1" || in.Decided[0].Outcome != "approved" || in.Decided[0].By != "bob" || in.Decided[0].SessionTitle != "Ops console" {
		t.Fatalf("inbox event %+v; want drop1, approved by bob", in)
	}
	if box := e.inboxOf("carol", []string{"web"}, "carol-home"); len(box.Decided) != 0 {
		t.Fatalf("carol's inbox %+v; want nothing decided that she may see", box)
	}
	if box := e.inboxOf("dev", nil, "ops"); len(box.Pending) != 0 || len(box.Decided) != 1 {
		t.Fatalf("the developer's inbox %+v; want drop1 decided", box)
	}
}

// TestInboxAcrossSessions: a person's inbox lists the questions of each of their
// sessions and an approval routed to them, newest first, and drops each as it ends
// elsewhere; their device is given every one of them.
func TestInboxAcrossSessions(t *testing.T) {
	e := newApproversEnv(t, &askuser.Policy{Ask: []askuser.Rule{{Tool: "restart", Approvers: &askuser.Approvers{Users: []string{"lead"}}}}})
	lead := e.dial("web,api&user=lead")
	q1 := e.ask(askuser.StringSession("web"), "q1")
	lead.next(wire.EventAsk)
	q2 := e.ask(askuser.StringSession("api"), "q2")
	lead.next(wire.EventAsk)
	ops := askuser.StringSession("ops")
	res := e.approve(askuser.ToolCall{Session: ops, ID: "r1", Name: "restart"}, nil)
	if ev := lead.next(wire.EventApproval); ev.SessionID != ops {
		t.Fatalf("approval of session %s; want ops", ev.SessionID)
	}
	box := e.inboxOf("lead", nil, "web", "api")
	var got []string
	for _, x := range box.Pending {
		got = append(got, x.Kind+":"+x.RequestID)
	}
	if fmt.Sprint(got) != "[approval:r1 question:q2 question:q1]" {
		t.Fatalf("inbox %v; want the approval, then q2, then q1: newest first", got)
	}

	other := e.env.dial("api")
	other.next(wire.EventAsk)
	other.answer("api", "q2")
	if r := e.result(q2); r.Outcome != askuser.Answered {
		t.Fatalf("q2 %+v", r)
	}
	lead.next(wire.EventResolved)
	if box := e.inboxOf("lead", nil, "web", "api"); len(box.Pending) != 2 {
		t.Fatalf("inbox %+v; want q2 gone", box.Pending)
	}
	opsDevice := e.dial("ops&user=lead")
	opsDevice.next(wire.EventApproval)
	decide(opsDevice, "r1", wire.DecisionDeny, "", nil)
	if r := <-res; r.Outcome != askuser.Denied {
		t.Fatalf("r1 %+v", r)
	}
	lead.next(wire.EventApprovalResolved)
	box = e.inboxOf("lead", nil, "web", "api")
	if len(box.Pending) != 1 || box.Pending[0].RequestID != "q1" || len(box.Decided) != 1 || box.Decided[0].Outcome != "denied" || box.Decided[0].By != "lead" {
		t.Fatalf("inbox %+v; want q1 pending, r1 denied by the lead", box)
	}
	e.d.CancelSession(askuser.StringSession("web"))
	e.result(q1)
	lead.next(wire.EventResolved)
}

// TestEscalationRoutedToLead: an escalation step gives the approval to the lead's device,
// which was connected for another session and shown nothing of it before; the lead then
// decides it, alice's approval counting.
func TestEscalationRoutedToLead(t *testing.T) {
	e, ns := newEscalationEnv(t, &askuser.Policy{Ask: []askuser.Rule{{Tool: "drop_database", Approvers: &askuser.Approvers{
		Groups: []string{"dba"}, Quorum: 2, Escalate: []store.Escalation{{After: 300 * time.Millisecond, Users: []string{"lead"}}},
	}}}}, time.Hour)
	lead := e.dial("lead-home&user=lead")
	alice := e.dial("alice-home&user=alice&groups=dba")
	s := askuser.StringSession("ops")
	res := e.approve(dropCall(s, "dev"), nil)
	ap := decode[wire.ApprovalData](t, alice.next(wire.EventApproval))
	alice.send(map[string]any{"type": wire.EventApprovalResult, "sessionId": "ops", "data": wire.ApprovalResultData{RequestID: "drop1", Decision: wire.DecisionApprove, Digest: ap.Digest}})
	alice.next(wire.EventApprovalProgress)

	// The lead's first event about drop1 is the approval itself, at the step.
	got := decode[wire.ApprovalData](t, lead.next(wire.EventApproval))
	if got.RequestID != "drop1" || got.Approvers == nil || fmt.Sprint(got.Approvers.Users) != "[lead]" || fmt.Sprint(got.Approvers.Approved) != "[alice]" {
		t.Fatalf("the lead is shown %+v; want drop1 with the lead among its approvers and alice's approval", got.Approvers)
	}
	if p := decode[wire.ApprovalProgressData](t, lead.next(wire.EventApprovalProgress)); fmt.Sprint(p.Users) != "[lead]" || fmt.Sprint(p.Groups) != "[dba]" {
		t.Fatalf("progress %+v; want the approvers now", p)
	}
	if n := nextNotice(t, ns); fmt.Sprint(n.To) != "[lead]" {
		t.Fatalf("notice %+v; want one for the lead", n)
	}
	lead.send(map[string]any{"type": wire.EventApprovalResult, "sessionId": "ops", "data": wire.ApprovalResultData{RequestID: "drop1", Decision: wire.DecisionApprove, Digest: got.Digest}})
	if r := <-res; r.Outcome != askuser.Approved || r.Decision.By != "lead" {
		t.Fatalf("result %+v; want approved by the lead", r)
	}
	lead.next(wire.EventApprovalResolved)
}
