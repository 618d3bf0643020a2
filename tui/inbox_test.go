package tui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/tui"
	"github.com/askuser-go/askuser/wire"
)

// The inbox: a terminal connected as a person holds the requests of its sessions and
// the approvals routed to that person, lists them across sessions, and shows the
// approvals others must decide read-only.

const keyCtrlO = "\x0f"

// decideAs decides an approval of session from a device of user's (who may be
// "bob&groups=dba"), as a browser panel of theirs would, with the approval's digest.
func (s *server) decideAs(session, user string, data wire.ApprovalResultData) {
	s.t.Helper()
	for _, a := range askusertest.Approvals(s.d, wire.ParseSessionID(session)) {
		if a.RequestID == data.RequestID {
			data.Digest = a.Digest
		}
	}
	s.sendDecision(session+"&user="+user, session, data)
}

// inOrder fails the test unless texts appear in s in this order.
func inOrder(t *testing.T, s string, texts ...string) {
	t.Helper()
	at := 0
	for _, x := range texts {
		i := strings.Index(s[at:], x)
		if i < 0 {
			t.Fatalf("%q is not after %q in:\n%s", x, texts, s)
		}
		at += i + len(x)
	}
}

// TestInboxAcrossSessions: a terminal of two sessions, connected as alice, holds a
// question of each, an approval of one, and an approval of a third session routed to
// alice (with the same request id as the other approval). ctrl+o lists them newest
// first, by session title or id; the list follows an approval that ends elsewhere; the
// routed approval opened from it is decided with its own session; the list is printed
// when several still wait, and lists what ended.
func TestInboxAcrossSessions(t *testing.T) {
	policy := branchPolicy()
	policy.Ask = append(policy.Ask, askuser.Rule{Tool: "drop_database", Approvers: &askuser.Approvers{Users: []string{"alice"}}})
	a, b, c := newSession(), newSession(), newSession()
	titles := map[string]string{a: "Billing", c: "Payroll"}
	s := newServer(t, &askuser.Options{Policy: policy, SessionTitle: func(id askuser.SessionID) string { return titles[id.String()] }})

	// Pending before the terminal connects: it is given them all.
	chA := s.ask(a, "call_q", singleArgs)
	s.waitPending(a, 1)
	chB := s.approve(b, "call_1", "delete_branch", branchArgs)
	s.waitApprovals(b, 1)
	chC := s.approve(c, "call_1", "drop_database", `{"name":"payroll"}`)
	s.waitApprovals(c, 1)
	tm := newTerm(t, s, a+","+b+"&user=alice", nil)
	tm.waitScreen("Which framework should we use?", "2 more approvals waiting", "ctrl+o: inbox")
	chD := s.ask(b, "call_q2", multiArgs)
	tm.waitScreen("3 more waiting: 1 question set and 2 approvals")

	tm.send(keyCtrlO)
	dLine, bLine := "session "+b+" · question · Features · asked ", "session "+b+" · approval · delete_branch · asked "
	scr := tm.waitScreen("Your inbox · alice", "Pending, newest first:", "> "+dLine)
	inOrder(t, scr, dLine, "Payroll · approval · drop_database · asked ", bLine, "Billing · question · Framework · asked ")
	if strings.Contains(scr, "Ended lately:") {
		t.Fatalf("the list shows ended requests before any ended:\n%s", scr)
	}

	s.decideAs(b, "bob", wire.ApprovalResultData{RequestID: "call_1", Decision: wire.DecisionDeny, Reason: "Not now"})
	if r := s.decision(chB); r.Outcome != askuser.Denied {
		t.Fatalf("session %s's approval: %v, want denied", b, r.Outcome)
	}
	tm.waitGone(bLine)
	scr = tm.waitScreen("Ended lately:", "session "+b+" · approval · delete_branch · denied by bob · ")
	inOrder(t, scr, "> "+dLine, "Payroll · approval", "Billing · question", "Ended lately:", "delete_branch · denied by bob")

	tm.send(keyDown)
	tm.waitScreen("> Payroll · approval")
	tm.send(keyEnter) // opens the routed approval
	tm.waitScreen("The agent asks you to approve a tool call · from Payroll", "Tool: drop_database", `"name": "payroll"`, "> Approve")
	tm.press(keyEnter)
	if r := s.decision(chC); r.Outcome != askuser.Approved || r.Decision.By != "alice" {
		t.Fatalf("the routed approval: %v by %q, want approved by alice", r.Outcome, r.Decision.By)
	}
	tm.waitHistory("Approved.")

	tm.waitScreen("Which framework should we use?", "from Billing", "1 more question set waiting")
	inOrder(t, tm.history(), "Approved.", "Pending here, newest first (ctrl+o in a form for the inbox):\n  "+dLine,
		"\n  Billing · question · Framework · asked ", "The agent asks you a question")
	tm.press(keyEnter)
	if got := answers(t, s.result(chA)); got[0].SelectedLabels[0] != "Vue 3 (Recommended)" {
		t.Fatalf("answers %+v", got)
	}

	tm.waitScreen("Which features should we include?", "from session "+b)
	tm.send(keyCtrlO)
	scr = tm.waitScreen("> "+dLine, "Ended lately:")
	inOrder(t, scr, "Ended lately:", "Billing · question · Framework · answered · ",
		"Payroll · approval · drop_database · approved by alice · ", "delete_branch · denied by bob · ")
	tm.press(keyEsc) // back to the question, its choices kept
	tm.waitScreen("Which features should we include?")
	tm.send(keySpace)
	tm.press(keyEnter)
	if got := answers(t, s.result(chD)); got[0].SelectedLabels[0] != "Dark mode" {
		t.Fatalf("answers %+v", got)
	}
}

// dbaPolicy asks about drop_database, which two of dba must approve; dev may decide
// too once it has waited escalateAfter.
func dbaPolicy(escalateAfter time.Duration) *askuser.Policy {
	return &askuser.Policy{Ask: []askuser.Rule{{Tool: "drop_database", Approvers: &askuser.Approvers{
		Groups: []string{"dba"}, Quorum: 2, Escalate: []store.Escalation{{After: escalateAfter, Users: []string{"dev"}}},
	}}}}
}

// TestApprovalReadOnly: a terminal whose person is not among an approval's approvers
// shows it with whom it waits for and its progress, says it cannot be decided there and
// takes no decision key; the terminal of a person an escalation step names turns it
// into a deciding one, and decides it.
func TestApprovalReadOnly(t *testing.T) {
	s := newServer(t, &askuser.Options{Policy: dbaPolicy(8 * time.Second)}) // the step comes well after dev's terminal shows the approval
	session := newSession()
	eve := newTerm(t, s, session+"&user=eve", nil)
	dev := newTerm(t, s, session+"&user=dev", nil)
	ch := s.approve(session, "drop1", "drop_database", `{"name":"payroll"}`)

	const cannot = "You cannot decide this approval here: you are not among its approvers."
	scr := eve.waitScreen("The agent asks dba to approve a tool call", "Tool: drop_database", "Waiting for 2 more approvals from dba.", cannot, "ctrl+o: inbox")
	if strings.Contains(scr, "Approve") || strings.Contains(scr, "esc or ctrl+c") {
		t.Fatalf("a read-only approval offers decisions:\n%s", scr)
	}
	eve.press(keyEnter, keyDown, keyEnter, keyEsc, keyCtrlC) // decide nothing
	s.decideAs(session, "alice&groups=dba", wire.ApprovalResultData{RequestID: "drop1", Decision: wire.DecisionApprove})
	eve.waitScreen("alice approved.", cannot)
	if ap := askusertest.Approvals(s.d, wire.ParseSessionID(session)); len(ap) != 1 || ap[0].Approvers == nil || strings.Join(ap[0].Approvers.Approved, ",") != "alice" {
		t.Fatalf("after eve's keys and alice's approval, pending %+v; want alice's approval alone", ap)
	}

	dev.waitHistory("An escalation step names you: you may decide it now.")
	dev.waitScreen("The agent asks you to approve a tool call", "Waiting for 1 more approval from dba, dev: alice approved.", "> Approve")
	if raw := dev.rawOutput(); !strings.Contains(raw, cannot) {
		t.Fatal("dev's terminal never showed the approval read-only before the step")
	}
	dev.press(keyEnter)
	if r := s.decision(ch); r.Outcome != askuser.Approved || r.Decision.By != "dev" {
		t.Fatalf("outcome %v by %q; want approved by dev", r.Outcome, r.Decision.By)
	}
	dev.waitHistory("Approved.")
	eve.waitScreen("Approved on another device.")
}

// TestApprovalReadOnlyAccessible: the accessible mode says a read-only approval in
// lines, refuses a decision typed for it, lists the inbox on i, and goes back to it; a
// question that comes in sets it aside until answered.
func TestApprovalReadOnlyAccessible(t *testing.T) {
	s := newServer(t, &askuser.Options{Policy: dbaPolicy(time.Hour)})
	session := newSession()
	eve := newTerm(t, s, session+"&user=eve", &tui.Options{Accessible: true})
	ch := s.approve(session, "drop1", "drop_database", `{"name":"payroll"}`)
	eve.waitScreen("The agent asks dba to approve a tool call.", "Waiting for 2 more approvals from dba.",
		"You cannot decide this approval here: you are not among its approvers. It stays here until it ends.", "Type i for your inbox.")
	eve.typeText("1\r")
	eve.waitScreen("This approval cannot be decided here. Type i for your inbox.")
	eve.typeText("i\r")
	eve.waitScreen("Your inbox, eve.", "1. session "+session+" · approval · drop_database · asked ", " · only dba can decide it", "Open:")
	eve.typeText("\r")
	eve.waitScreen("Tool: drop_database")
	s.decideAs(session, "alice&groups=dba", wire.ApprovalResultData{RequestID: "drop1", Decision: wire.DecisionApprove})
	eve.waitScreen("(Waiting for 1 more approval from dba: alice approved.)")

	// A question eve can answer sets the approval aside; it comes back after.
	chQ := s.ask(session, "call_q", singleArgs)
	eve.waitScreen("Set aside: something you can answer came in. It comes back once nothing else waits.", "Answer 1:")
	eve.typeText("2\r")
	if got := answers(t, s.result(chQ)); got[0].SelectedLabels[0] != "React" {
		t.Fatalf("answers %+v", got)
	}
	eventually(t, "the approval shown again", func() bool {
		h := eve.history()
		i := strings.Index(h, "Answered.")
		return i >= 0 && strings.Contains(h[i:], "The agent asks dba to approve a tool call.") && strings.Contains(h[i:], "\nWaiting for 1 more approval from dba: alice approved.")
	})

	s.decideAs(session, "bob&groups=dba", wire.ApprovalResultData{RequestID: "drop1", Decision: wire.DecisionDeny, Reason: "No"})
	if r := s.decision(ch); r.Outcome != askuser.Denied || r.Decision.By != "bob" {
		t.Fatalf("outcome %v by %q; want denied by bob", r.Outcome, r.Decision.By)
	}
	eve.waitScreen("Denied on another device: No.")
	eve.noEscapes()
}
