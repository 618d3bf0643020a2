package tui_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/tui"
	"github.com/askuser-go/askuser/wire"
)

// The approval half: the host's own tool calls that its policy asks about, decided in
// the terminal.

// branchSchema is delete_branch's arguments: a non-empty name and nothing else.
const branchSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`

const branchArgs = `{"name":"feature/login"}`

// branchPolicy asks about delete_branch, with its description, schema and preset reasons.
func branchPolicy() *askuser.Policy {
	return &askuser.Policy{
		Ask:     []askuser.Rule{{Tool: "delete_branch"}},
		Tools:   []askuser.Tool{{Name: "delete_branch", Description: "Deletes a git branch", Schema: json.RawMessage(branchSchema)}},
		Reasons: []string{"Not now", "Wrong branch"},
	}
}

func branchServer(t *testing.T, timeout time.Duration) *server {
	return newServer(t, &askuser.Options{Policy: branchPolicy(), Timeout: timeout})
}

// keyBackTab is shift+tab; keyCtrlU clears the line before the cursor; keyEnd goes to
// the end of the line.
const (
	keyBackTab = "\x1b[Z"
	keyCtrlU   = "\x15"
	keyEnd     = "\x1b[F"
)

func TestApprovalApprove(t *testing.T) {
	s := branchServer(t, 0)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.approve(session, "call_approve", "delete_branch", branchArgs)

	scr := tm.waitScreen("The agent asks you to approve a tool call · ", " left",
		"Tool: delete_branch", "Deletes a git branch", "Arguments:", `    "name": "feature/login"`,
		"> Approve", "Deny", "Edit the arguments", "Always allow: every call of delete_branch in this session",
		"esc or ctrl+c: deny without a reason")
	if !strings.Contains(scr, "  {\n") {
		t.Errorf("the arguments are not pretty-printed:\n%s", scr)
	}
	tm.press(keyEnter)
	r := s.decision(ch)
	if r.Outcome != askuser.Approved || r.Grant != nil || string(r.Arguments) != branchArgs {
		t.Fatalf("outcome %v, grant %v, arguments %s; want approved as the model wrote it", r.Outcome, r.Grant, r.Arguments)
	}
	tm.waitHistory("Approved.")
	tm.waitScreen("→ approve")
}

func TestApprovalDeny(t *testing.T) {
	for _, tc := range []struct {
		name   string
		keys   []string // after choosing Deny
		text   string
		reason string
	}{
		{"picked reason", []string{keyDown, keyEnter}, "", "Wrong branch"},
		{"typed reason", []string{keyDown, keyDown, keyEnter}, "  Not this one  ", "Not this one"},
		{"no reason", []string{keyDown, keyDown, keyDown, keyEnter}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := branchServer(t, 0)
			session := newSession()
			tm := newTerm(t, s, session, nil)
			ch := s.approve(session, "call_deny", "delete_branch", branchArgs)
			tm.waitScreen("> Approve")
			tm.press(keyDown, keyEnter)
			tm.waitScreen("Why deny? The agent is told.", "> Not now", "Wrong branch", "Type a reason", "No reason")
			tm.press(tc.keys...)
			if tc.text != "" {
				tm.waitScreen("Your reason for denying")
				tm.typeText(tc.text)
				tm.press(keyEnter)
			}
			r := s.decision(ch)
			if r.Outcome != askuser.Denied || r.Decision.Reason != tc.reason {
				t.Fatalf("outcome %v, reason %q; want denied with %q", r.Outcome, r.Decision.Reason, tc.reason)
			}
			tm.waitHistory("Denied.")
			want := "→ deny"
			if tc.reason != "" {
				want += ": " + tc.reason
			}
			tm.waitHistory(want)
		})
	}
}

// TestApprovalDenyKeys: Esc and Ctrl-C deny without a reason, as they decline a
// question, from any step of the form.
func TestApprovalDenyKeys(t *testing.T) {
	for _, tc := range []struct{ name, key string }{{"esc", keyEsc}, {"ctrl-c", keyCtrlC}} {
		t.Run(tc.name, func(t *testing.T) {
			s := branchServer(t, 0)
			session := newSession()
			tm := newTerm(t, s, session, nil)
			ch := s.approve(session, "call_keys", "delete_branch", branchArgs)
			tm.waitScreen("> Approve")
			tm.press(keyDown, keyEnter) // to the reasons: the key still denies without one
			tm.waitScreen("Why deny?")
			tm.press(tc.key)
			r := s.decision(ch)
			if r.Outcome != askuser.Denied || r.Decision.Reason != "" {
				t.Fatalf("outcome %v, reason %q; want denied without a reason", r.Outcome, r.Decision.Reason)
			}
			tm.waitHistory("Denied.")
		})
	}
}

// TestApprovalEdit: the edit box starts with the arguments pretty-printed; JSON that
// does not parse is not sent; an edit the tool's schema refuses comes back with the
// host's problems and the edit kept; the corrected edit runs the tool with it.
func TestApprovalEdit(t *testing.T) {
	s := branchServer(t, 0)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	var mu sync.Mutex
	var ran []string
	tool := wrapTool(s.d, func(_ context.Context, call askuser.ToolCall) (string, error) {
		mu.Lock()
		ran = append(ran, string(call.Arguments))
		mu.Unlock()
		return `{"deleted": true}`, nil
	})
	done := make(chan string, 1)
	go func() {
		out, _ := tool(context.Background(), askuser.ToolCall{Session: wire.ParseSessionID(session), ID: "call_edit", Name: "delete_branch", Arguments: json.RawMessage(branchArgs)})
		done <- out
	}()

	tm.waitScreen("> Approve")
	tm.press(keyDown, keyDown, keyEnter)
	tm.waitScreen("Editing the arguments: the tool runs with yours", "The arguments to run the tool with, as JSON",
		`"name": "feature/login"`, "new line")
	tm.press(keyUp, keyEnd)
	tm.typeText(",")
	tm.press(keyEnter)
	tm.waitScreen("not valid JSON")
	s.waitApprovals(session, 1) // nothing was sent

	tm.typeText(` "force": true`)
	tm.press(keyEnter)
	tm.waitScreen("The host refused the decision; fix this and send again:", "force: is not a field of this tool (it takes name)")
	tm.waitScreen("> Edit the arguments") // the choice made is kept
	tm.press(keyEnter)
	tm.waitScreen("Editing the arguments", `┃   "name": "feature/login", "force": true`) // and the edit
	tm.press(keyUp, keyEnd, keyCtrlU)
	tm.typeText(`  "name": "feature/old"`)
	tm.press(keyEnter)

	var out string
	select {
	case out = <-done:
	case <-time.After(waitTimeout):
		t.Fatal("the gated tool call did not return")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 1 || ran[0] != `{"name":"feature/old"}` {
		t.Fatalf("the tool ran with %q, want once with the edit; result %s\n%s", ran, out, tm.history())
	}
	if !strings.Contains(out, `"arguments": {"name":"feature/old"}`) || !strings.Contains(out, `"result": {"deleted":true}`) {
		t.Errorf("tool result %s", out)
	}
	tm.waitHistory(`Edited: ran with {"name": "feature/old"}.`)
}

func TestApprovalAlways(t *testing.T) {
	s := branchServer(t, 0)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.approve(session, "call_always", "delete_branch", branchArgs)
	tm.waitScreen("Always allow: every call of delete_branch in this session")
	tm.press(keyDown, keyDown, keyDown)
	tm.waitScreen("> Always allow")
	tm.press(keyEnter)
	r := s.decision(ch)
	if r.Outcome != askuser.Approved || r.Grant == nil || r.Grant.Tool != "delete_branch" {
		t.Fatalf("outcome %v, grant %+v; want approved with a grant", r.Outcome, r.Grant)
	}
	tm.waitHistory("Always allowed: every call of delete_branch in this session.")
	// The grant lets the next call run without asking anybody.
	if r := s.decision(s.approve(session, "call_after", "delete_branch", `{"name":"feature/other"}`)); r.Outcome != askuser.Approved || r.Grant == nil {
		t.Fatalf("the next call: outcome %v, grant %v; want approved by the grant", r.Outcome, r.Grant)
	}
}

// TestApprovalEndedElsewhere: the form closes with a note when another device decides,
// whatever it decides, and when the session is cancelled.
func TestApprovalEndedElsewhere(t *testing.T) {
	s := branchServer(t, time.Hour)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	other := newTerm(t, s, session, nil)

	ch := s.approve(session, "call_other_approves", "delete_branch", branchArgs)
	tm.waitScreen("> Approve")
	other.waitScreen("> Approve")
	other.press(keyEnter)
	if r := s.decision(ch); r.Outcome != askuser.Approved {
		t.Fatalf("outcome %v, want approved", r.Outcome)
	}
	tm.waitScreen("Approved on another device.")
	tm.waitGone("esc or ctrl+c: deny")
	other.waitHistory("Approved.")

	// A device that is not a terminal denies, with a reason.
	ch = s.approve(session, "call_other_denies", "delete_branch", branchArgs)
	tm.waitScreen("esc or ctrl+c: deny")
	s.waitApprovals(session, 1)
	s.decideElsewhere(session, wire.ApprovalResultData{RequestID: "call_other_denies", Decision: wire.DecisionDeny, Reason: "Not now"})
	if r := s.decision(ch); r.Outcome != askuser.Denied {
		t.Fatalf("outcome %v, want denied", r.Outcome)
	}
	tm.waitScreen("Denied on another device: Not now.")
	other.waitScreen("Denied on another device: Not now.")

	ch = s.approve(session, "call_cancelled", "delete_branch", branchArgs)
	tm.waitScreen("esc or ctrl+c: deny")
	s.waitApprovals(session, 1)
	s.d.CancelSession(wire.ParseSessionID(session))
	if r := s.decision(ch); r.Outcome != askuser.Cancelled {
		t.Fatalf("outcome %v, want cancelled", r.Outcome)
	}
	tm.waitScreen("Cancelled.")
	tm.waitGone("esc or ctrl+c: deny")
}

func TestApprovalTimedOut(t *testing.T) {
	s := branchServer(t, 2*time.Second)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.approve(session, "call_approval_timeout", "delete_branch", branchArgs)
	tm.waitScreen("> Approve")
	if r := s.decision(ch); r.Outcome != askuser.TimedOut {
		t.Fatalf("outcome %v, want timed out", r.Outcome)
	}
	tm.waitScreen("Timed out.")
	tm.waitGone("> Approve")
}

// TestApprovalQueue: approvals and question sets wait in one queue, in the order they
// came, counted by kind; an approval decided elsewhere while it waits leaves the queue
// unseen; Options.OnEnd hears of each request the terminal is done with.
func TestApprovalQueue(t *testing.T) {
	s := branchServer(t, time.Hour)
	session := newSession()
	ended := newEndings()
	tm := newTerm(t, s, session, ended.options())

	q1 := s.ask(session, "call_q1", singleArgs)
	tm.waitScreen("Which framework should we use?")
	a1 := s.approve(session, "call_a1", "delete_branch", branchArgs)
	tm.waitScreen("1 more approval waiting")
	a2 := s.approve(session, "call_a2", "delete_branch", `{"name":"feature/two"}`)
	tm.waitScreen("2 more approvals waiting")
	q2 := s.ask(session, "call_q2", multiArgs)
	tm.waitScreen("3 more waiting: 1 question set and 2 approvals")

	// The second approval is denied on another device while it waits here.
	s.waitApprovals(session, 2)
	s.waitPending(session, 2)
	s.decideElsewhere(session, wire.ApprovalResultData{RequestID: "call_a2", Decision: wire.DecisionDeny})
	if r := s.decision(a2); r.Outcome != askuser.Denied {
		t.Fatalf("a2: outcome %v, want denied", r.Outcome)
	}
	ended.next(t, "call_a2")
	tm.waitScreen("2 more waiting: 1 question set and 1 approval")

	tm.press(keyEnter)
	answers(t, s.result(q1))
	ended.next(t, "call_q1")
	tm.waitScreen("Tool: delete_branch", "1 more question set waiting")
	tm.press(keyEnter)
	if r := s.decision(a1); r.Outcome != askuser.Approved {
		t.Fatalf("a1: outcome %v, want approved", r.Outcome)
	}
	ended.next(t, "call_a1")
	tm.waitScreen("Which features should we include?")
	tm.press(keySpace, keyEnter)
	answers(t, s.result(q2))
	ended.next(t, "call_q2")
	if h := tm.history(); strings.Contains(h, "feature/two") {
		t.Errorf("the approval decided elsewhere was shown:\n%s", h)
	}
}

// TestApprovalArgumentsNotJSON: arguments that do not parse are shown as the model
// wrote them, said to be no JSON; only Deny and Edit are offered, and an edit that
// fixes them runs.
func TestApprovalArgumentsNotJSON(t *testing.T) {
	s := branchServer(t, 0)
	session := newSession()
	tm := newTerm(t, s, session, nil)
	ch := s.approve(session, "call_not_json", "delete_branch", `{"name": "feature/login"`)
	scr := tm.waitScreen("Arguments: not valid JSON; the model wrote:", `  {"name": "feature/login"`, "> Deny", "Edit the arguments")
	if strings.Contains(scr, "Approve") || strings.Contains(scr, "Always allow") {
		t.Errorf("a call whose arguments are not JSON can only be denied or edited:\n%s", scr)
	}
	tm.press(keyDown, keyEnter)
	tm.waitScreen("The arguments to run the tool with, as JSON", `{"name": "feature/login"`)
	tm.press(keyEnter)
	tm.waitScreen("not valid JSON: unexpected end of JSON input") // as the model wrote them, they still do not parse
	tm.typeText("}")
	tm.press(keyEnter)
	r := s.decision(ch)
	if r.Outcome != askuser.Edited || string(r.Arguments) != branchArgs {
		t.Fatalf("outcome %v, arguments %s; want edited into %s", r.Outcome, r.Arguments, branchArgs)
	}
	tm.waitHistory(`Edited: ran with {"name": "feature/login"}.`)
}

// TestAccessibleApproval: the approval as plain lines, decided a line at a time: a
// decision's number, then a reason's number or words, or the arguments on one line or
// on several ending with an empty line; a refused edit asks again.
func TestAccessibleApproval(t *testing.T) {
	s := branchServer(t, 0)
	session := newSession()
	tm := newTerm(t, s, session, accessible)
	decisions := func(n int) {
		t.Helper()
		eventually(t, "the decisions asked", func() bool { return strings.Count(tm.history(), "Decision:") == n })
	}

	ch := s.approve(session, "call_a_deny", "delete_branch", branchArgs)
	tm.waitScreen("The agent asks you to approve a tool call. Time left: 5 minutes. Type d to deny.",
		"Tool: delete_branch", "Deletes a git branch", "Arguments:", `    "name": "feature/login"`,
		"Decide: type a number.", "1. Approve", "2. Deny", "3. Edit the arguments, then run it",
		"4. Always allow: every call of delete_branch in this session", "Decision:")
	tm.typeText("9\r")
	tm.waitScreen("Type a number from 1 to 4.")
	tm.typeText("2\r")
	tm.waitScreen("Why deny? Type a reason's number, or your own reason, or nothing for no reason.", "1. Not now", "2. Wrong branch", "Reason:")
	tm.typeText("2\r")
	if r := s.decision(ch); r.Outcome != askuser.Denied || r.Decision.Reason != "Wrong branch" {
		t.Fatalf("outcome %v, reason %q; want denied for Wrong branch", r.Outcome, r.Decision.Reason)
	}
	tm.waitHistory("Denied.")

	ch = s.approve(session, "call_a_typed", "delete_branch", branchArgs)
	decisions(3)
	tm.typeText("2\r")
	tm.waitScreen("Reason:")
	tm.typeText("Not this one\r")
	if r := s.decision(ch); r.Outcome != askuser.Denied || r.Decision.Reason != "Not this one" {
		t.Fatalf("outcome %v, reason %q; want denied for the typed reason", r.Outcome, r.Decision.Reason)
	}

	ch = s.approve(session, "call_a_edit", "delete_branch", branchArgs)
	decisions(4)
	tm.typeText("3\r")
	tm.waitScreen("Type the arguments as JSON: on one line, or on several lines and then an empty line.")
	tm.typeText(`{"name": ""}` + "\r") // one line, that the schema refuses
	tm.waitScreen("The host refused the decision: name:")
	decisions(5)
	tm.typeText("3\r{\r")
	tm.waitScreen("More:")
	tm.typeText(`  "name": "feature/old"` + "\r}\r\r")
	if r := s.decision(ch); r.Outcome != askuser.Edited || string(r.Arguments) != `{"name":"feature/old"}` {
		t.Fatalf("outcome %v, arguments %s; want the edit", r.Outcome, r.Arguments)
	}
	tm.waitHistory(`Edited: ran with {"name": "feature/old"}.`)

	ch = s.approve(session, "call_a_always", "delete_branch", branchArgs)
	decisions(6)
	tm.typeText("4\r")
	if r := s.decision(ch); r.Outcome != askuser.Approved || r.Grant == nil {
		t.Fatalf("outcome %v, grant %v; want always", r.Outcome, r.Grant)
	}
	tm.waitHistory("Always allowed: every call of delete_branch in this session.")

	tm.noEscapes()
}

// TestAccessibleApprovalEndOfInput: end of input denies the approval shown, without a
// reason, and Run ends.
func TestAccessibleApprovalEndOfInput(t *testing.T) {
	s := branchServer(t, 0)
	session := newSession()
	tm := newTerm(t, s, session, accessible)
	ch := s.approve(session, "call_a_eof", "delete_branch", branchArgs)
	tm.waitScreen("Decision:")
	tm.press("\x04")
	if r := s.decision(ch); r.Outcome != askuser.Denied || r.Decision.Reason != "" {
		t.Fatalf("outcome %v, reason %q; want denied without a reason", r.Outcome, r.Decision.Reason)
	}
	if err := tm.runEnded(); !errors.Is(err, tui.ErrInputEnded) {
		t.Fatalf("Run returned %v, want ErrInputEnded", err)
	}
	tm.waitHistory("End of input: denying.")
}

// wrapTool runs each call on its own as RunTools runs the calls of a turn: the tool
// result, and the error.
func wrapTool(d *askuser.Dispatcher, next askuser.ToolFunc) askuser.ToolFunc {
	return func(ctx context.Context, call askuser.ToolCall) (string, error) {
		o := d.RunTools(ctx, []askuser.ToolCall{call}, next)[0]
		return o.Content, o.Err
	}
}

// TestApprovalQuorum: an approval that two of the dba group must approve says whom it
// waits for; this terminal's approval is recorded and said, and the approval leaves the
// screen; a second person's approval elsewhere runs the call. A terminal whose person is
// not an approver shows it read-only, its progress too, until it ends.
func TestApprovalQuorum(t *testing.T) {
	policy := branchPolicy()
	policy.Ask[0].Approvers = &askuser.Approvers{Groups: []string{"dba"}, Quorum: 2}
	s := newServer(t, &askuser.Options{Policy: policy})
	session := newSession()
	tm := newTerm(t, s, session+"&user=alice&groups=dba", newEndings().options())
	ch := s.approve(session, "call_quorum", "delete_branch", branchArgs)
	tm.waitScreen("Tool: delete_branch", "Waiting for 2 more approvals from dba.", "> Approve")
	tm.press(keyEnter)
	tm.waitHistory("Your decision is recorded. Waiting for 1 more approval from dba: alice approved.")
	s.waitApprovals(session, 1)

	dev := newTerm(t, s, session+"&user=dev", nil)
	scr := dev.waitScreen("The agent asks dba to approve a tool call", "Waiting for 1 more approval from dba: alice approved.",
		"You cannot decide this approval here: you are not among its approvers.")
	if strings.Contains(scr, "Approve") {
		t.Fatalf("a non-approver's terminal offers the decisions:\n%s", scr)
	}

	ap := askusertest.Approvals(s.d, wire.ParseSessionID(session))[0]
	bob, err := tui.Dial(t.Context(), s.wsURL(session+"&user=bob&groups=dba"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	ev, _ := wire.NewEvent(wire.EventApprovalResult, wire.ParseSessionID(session), wire.ApprovalResultData{RequestID: "call_quorum", Decision: wire.DecisionApprove, Digest: ap.Digest})
	if err := bob.Send(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	if r := s.decision(ch); r.Outcome != askuser.Approved || r.Decision.By != "bob" {
		t.Fatalf("outcome %v by %q; want approved, by bob last", r.Outcome, r.Decision.By)
	}
	dev.waitScreen("Approved on another device.")
}
