package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The approval stack: host tool calls that the demo's policy asks about, decided in the
// page. The demo's tools: list_files runs without asking, delete_branch waits for the
// person, drop_database of production never runs (examples/internal/demo/people_test.go
// has the others: two DBAs approve them).

// The tool results the model reads, exactly.
const (
	deniedResult    = `{"error": "The user denied this tool call; the tool did not run. Do not call it again unless the user asks you to."}`
	notAllowed      = `{"error": "This tool call is not allowed here; the tool did not run. Do not call it again."}`
	editedNotice    = `{"notice": "The user edited the arguments of this tool call before it ran: it ran with the arguments given here, not with yours.", "arguments": `
	approvalTimeout = `{"error": "The user did not decide on this tool call before the timeout, so the tool did not run. This is not a refusal: do not call it again unless the user asks you to."}`
)

// asel selects inside the approval card of requestID.
func asel(requestID, inner string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`[data-testid="approval"][data-request-id=%s] %s`, js(requestID), inner))
}

// cardJS is a JavaScript expression for the card of requestID.
func cardJS(requestID string) string {
	return `document.querySelector(` + js(`[data-testid="approval"][data-request-id=`+js(requestID)+`]`) + `)`
}

// newestApproval waits for an approval card other than after's and returns its request id.
func (tb *tab) newestApproval(after string) string {
	tb.t.Helper()
	return waitFor[string](tb, "an approval card", `(() => {
		const cs = [...document.querySelectorAll('[data-testid="approval"]')].filter(c => c.dataset.requestId !== `+js(after)+`);
		return cs.length ? cs[cs.length - 1].dataset.requestId : false;
	})()`)
}

// approvalGone waits until the card of requestID is no longer in the page.
func (tb *tab) approvalGone(requestID string) {
	tb.t.Helper()
	waitFor[bool](tb, "the approval card to go", `!`+cardJS(requestID))
	// What the page lays out again once a request has gone (the demo's cue of what is
	// below, the focus moving on) is done at the next frames: wait for them, so that
	// the next click is not aimed at where a control was before.
	tb.settle()
}

// approvalNote waits for the note the card of requestID left whose text has want.
func (tb *tab) approvalNote(requestID, want string) note {
	tb.t.Helper()
	return waitFor[note](tb, "the approval's note "+want, `(() => {
		const n = document.querySelector('[data-testid="approval-ended"][data-request-id=`+js(requestID)+`]');
		const t = (s) => { const e = n && n.querySelector(s); return e ? e.textContent : ""; };
		return n && t('[data-testid="ended-text"]').includes(`+js(want)+`) && {outcome: n.dataset.outcome,
			text: t('[data-testid="ended-text"]'), typed: t('[data-testid="ended-typed"]'), mine: t('[data-testid="approval-ended-mine"]')};
	})()`)
}

// typeInto replaces the text of a field as typing would, with the input event.
func (tb *tab) typeInto(sel chromedp.CSS, text string) {
	tb.t.Helper()
	tb.do("typing into "+string(sel), chromedp.Evaluate[chromedp.Void](`(() => {
		const e = document.querySelector(`+js(string(sel))+`);
		e.focus(); e.value = `+js(text)+`; e.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))
}

// editProblems returns what the editor of a card shows: the browser's problems, whether
// the text is marked invalid, and whether its Run button can send.
type editView struct {
	Problems []string `json:"problems"`
	Invalid  string   `json:"invalid"`
	Blocked  string   `json:"blocked"`
	OK       bool     `json:"ok"`
	Server   []string `json:"server"`
}

func (tb *tab) editView(requestID string) editView {
	tb.t.Helper()
	return eval[editView](tb, `(() => {
		const c = `+cardJS(requestID)+`;
		const items = (s) => [...c.querySelectorAll(s + " li")].map(li => li.textContent);
		const server = c.querySelector('[data-testid="edit-server-problems"]');
		return {problems: items('[data-testid="edit-problems"]'), invalid: c.querySelector('[data-testid="edit-input"]').getAttribute("aria-invalid"),
			blocked: c.querySelector('[data-testid="edit-confirm"]').getAttribute("aria-disabled"),
			ok: !c.querySelector('[data-testid="edit-ok"]').hidden, server: server.hidden ? [] : items('[data-testid="edit-server-problems"]')};
	})()`)
}

// approvalEvents counts the tool_approval events the page got for requestID.
func (tb *tab) approvalEvents(requestID string) int {
	tb.t.Helper()
	return eval[int](tb, `window.demo.events.filter(e => e.type === "tool_approval" && e.data.requestId === `+js(requestID)+`).length`)
}

// toolCallOf waits for the tool_call of the newest call of name and returns its id.
func (tb *tab) toolCallOf(name string, nth int) string {
	tb.t.Helper()
	return waitFor[string](tb, "the tool call of "+name, `(() => {
		const cs = window.demo.events.filter(e => e.type === "tool_call" && e.data.name === `+js(name)+`);
		return cs.length > `+fmt.Sprint(nth)+` && cs[`+fmt.Sprint(nth)+`].data.requestId;
	})()`)
}

// toolSummary waits for the transcript's tool card of requestID to have a result, and
// returns what its summary says.
func (tb *tab) toolSummary(requestID string) string {
	tb.t.Helper()
	return waitFor[string](tb, "the tool card's summary", `(() => {
		const li = document.querySelector('#transcript [data-tool-call-id=`+js(requestID)+`]');
		return li && li.dataset.outcome && li.querySelector('[data-testid="tool-summary"]').textContent;
	})()`)
}

// TestApprovalBelowAPendingQuestion: a question and an approval pending at once (a
// model's parallel tool calls) are both shown, the approval below the question; the card
// says what will run, and Approve runs it with exactly the model's arguments.
func TestApprovalBelowAPendingQuestion(t *testing.T) {
	tb := newTab(t)
	tb.viewport(1280, 800, false)
	frames := tb.recordFrames()
	tb.open(env.main, newSession())
	tb.say("/parallel")
	q := tb.newestPanel()
	id := tb.newestApproval("")
	got := eval[map[string]any](tb, `(() => {
		const p = document.querySelector('[data-testid="panel"]'), c = `+cardJS(id)+`;
		const t = (s) => c.querySelector(s).textContent;
		const spans = (k) => [...c.querySelectorAll(".askuser-json-" + k)].map(e => e.textContent);
		return {below: !!(p.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING) && c.getBoundingClientRect().top >= p.getBoundingClientRect().bottom,
			sameBox: document.querySelector("#questions").contains(c),
			tool: t('[data-testid="approval-tool"]'), description: t('[data-testid="approval-description"]'),
			args: t('[data-testid="approval-arguments"]'), keys: spans("key"), strings: spans("str"),
			buttons: [...c.querySelectorAll(".askuser-approval-actions button:not([hidden])")].map(b => b.dataset.testid + ":" + b.textContent),
			covers: t('[data-testid="always-covers"]'), countdown: t('[data-testid="approval-countdown"]')};
	})()`)
	want := map[string]any{
		"below": true, "sameBox": true, "tool": "delete_branch", "description": "Deletes a git branch, locally and on the remote",
		"args": "{\n  \"name\": \"feature/old-login\"\n}", "keys": []any{`"name"`}, "strings": []any{`"feature/old-login"`},
		"buttons": []any{"approve:Approve", "deny:Deny", "edit:Edit", "always:Always allow for this session"},
		"covers":  "“Always allow” covers every call of delete_branch in this session.",
	}
	for k, v := range want {
		if mustJSON(got[k]) != mustJSON(v) {
			t.Errorf("%s = %s, want %s", k, mustJSON(got[k]), mustJSON(v))
		}
	}
	if !regexp.MustCompile(`^[23]:\d\d left$`).MatchString(got["countdown"].(string)) {
		t.Errorf("countdown = %q", got["countdown"])
	}
	tb.screenshot("approval")

	digest := eval[string](tb, `window.demo.events.find(e => e.type === "tool_approval").data.digest`)
	tb.do("approving", chromedp.Click(asel(id, `[data-testid="approve"]`)))
	frames.find(t, true, `"type":"tool_approval_result"`, `"decision":"approve"`, `"digest":"`+digest+`"`)
	if got := tb.toolResult(id); got != `{"deleted":"feature/old-login"}` {
		t.Fatalf("tool result = %s", got)
	}
	tb.approvalGone(id)
	if n := eval[int](tb, `document.querySelectorAll('[data-testid="approval-ended"]').length`); n != 0 {
		t.Errorf("the device that approved shows %d notes", n)
	}
	// The question is still there, and answered as ever.
	tb.do("answering the question", chromedp.Click(option(q, 0, 1)), chromedp.Click(sel(q, `[data-testid="submit"]`)))
	tb.toolResult(q)
	if s := tb.toolSummary(id); s != "Approved; ran" {
		t.Errorf("the tool card says %q", s)
	}
}

// TestUnknownToolRunsNothing: a call of a tool the demo does not have is asked about;
// approved, nothing runs, and the model's result, the agent and the tool card all say so
// (none says that the tool ran, or failed).
func TestUnknownToolRunsNothing(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say(`/tool send_email {"to":"a@example.com"}`)
	id := tb.newestApproval("")
	tb.do("approving", chromedp.Click(asel(id, `[data-testid="approve"]`)))
	if got := tb.toolResult(id); got != `{"error":"the demo has no tool named send_email; nothing ran"}` {
		t.Fatalf("tool result = %s", got)
	}
	if s := tb.toolSummary(id); s != "Allowed, but there is no such tool: nothing ran" {
		t.Errorf("the tool card says %q", s)
	}
	said := waitFor[string](tb, "the agent's reading", `(() => {
		const m = window.demo.events.filter(e => e.type === "agent_message" && e.data.text.includes("send_email"));
		return m.length ? m[m.length - 1].data.text : false;
	})()`)
	if said != "You allowed send_email, but the demo has no tool of that name, so nothing ran; I will not try it again." {
		t.Errorf("the agent says %q", said)
	}
}

// TestDenyWithATypedReason: Deny opens a reason box with the focus in it; Enter sends
// the denial with the reason, and the model reads it.
func TestDenyWithATypedReason(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say(`/tool delete_branch {"name":"main"}`)
	id := tb.newestApproval("")
	tb.do("denying", chromedp.Click(asel(id, `[data-testid="deny"]`)))
	if f := tb.focused(); f.TestID != "deny-reason" {
		t.Fatalf("Deny focused %+v, want the reason box", f)
	}
	if n := eval[int](tb, `window.demo.events.filter(e => e.type === "tool_result").length`); n != 0 {
		t.Fatal("opening the reason box sent the denial")
	}
	tb.do("typing a reason", chromedp.SendKeys(asel(id, `[data-testid="deny-reason"]`), "main is protected"), chromedp.KeyEvent(kb.Enter))
	want := deniedResult[:len(deniedResult)-1] + `, "reason": "main is protected"}`
	if got := tb.toolResult(id); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
	tb.approvalGone(id)
	if s := tb.toolSummary(id); s != "Denied; did not run. Reason: main is protected" {
		t.Errorf("the tool card says %q", s)
	}
}

// TestDenyWithAPreset: the host's preset reasons fill the reason box, pressed; the one
// picked is the reason sent.
func TestDenyWithAPreset(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say(`/tool delete_branch {"name":"feature/x"}`)
	id := tb.newestApproval("")
	tb.do("opening the denial", chromedp.Click(asel(id, `[data-testid="deny"]`)))
	presets := eval[[]string](tb, `[...`+cardJS(id)+`.querySelectorAll('[data-testid="deny-preset"]')].map(b => b.textContent)`)
	if mustJSON(presets) != `["Not now","Wrong branch","Keep it for the release"]` {
		t.Fatalf("presets = %v", presets)
	}
	tb.do("picking a preset", chromedp.Click(asel(id, `[data-testid="deny-preset"][data-reason="Wrong branch"]`)))
	st := eval[map[string]string](tb, `(() => { const c = `+cardJS(id)+`;
		return {value: c.querySelector('[data-testid="deny-reason"]').value,
			pressed: [...c.querySelectorAll('[data-testid="deny-preset"]')].map(b => b.getAttribute("aria-pressed")).join(",")}; })()`)
	if st["value"] != "Wrong branch" || st["pressed"] != "false,true,false" {
		t.Fatalf("after the preset: %v", st)
	}
	tb.do("denying", chromedp.Click(asel(id, `[data-testid="deny-confirm"]`)))
	if got, want := tb.toolResult(id), deniedResult[:len(deniedResult)-1]+`, "reason": "Wrong branch"}`; got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
}

// TestEditShowsProblemsInline: the editor shows what is wrong as the person types (JSON
// syntax, then the tool's schema), will not send it, shows the server's refusal of an
// edit where the edit is, and runs the tool with a valid edit, which the model is told.
func TestEditShowsProblemsInline(t *testing.T) {
	tb := newTab(t)
	frames := tb.recordFrames()
	tb.open(env.main, newSession())
	tb.say(`/tool delete_branch {"name":"feature/old"}`)
	id := tb.newestApproval("")
	tb.do("editing", chromedp.Click(asel(id, `[data-testid="edit"]`)))
	if f := tb.focused(); f.TestID != "edit-input" {
		t.Fatalf("Edit focused %+v, want the editor", f)
	}
	if v := eval[string](tb, cardJS(id)+`.querySelector('[data-testid="edit-input"]').value`); v != "{\n  \"name\": \"feature/old\"\n}" {
		t.Fatalf("the editor starts with %q", v)
	}
	if v := tb.editView(id); len(v.Problems) != 0 || !v.OK || v.Blocked != "false" {
		t.Fatalf("the model's arguments in the editor: %+v", v)
	}
	input := asel(id, `[data-testid="edit-input"]`)
	for _, c := range []struct{ text, problem string }{
		{`{"name": ""`, "Not valid JSON, line 1, column 12: the JSON ends too soon"},
		{`{"name": "x",}`, "Not valid JSON, line 1, column 14: expected a property name in double quotes, not }"},
		{`{"name": ""}`, "name: must not be empty"},
		{`{"name": "x", "force": true}`, "force: is not a field of this tool (it takes name)"},
		{`{}`, "name: is required"},
		{`{"name": 7}`, "name: must be a string, not a number"},
		{`["feature/x"]`, "arguments: must be an object, not an array"},
	} {
		tb.typeInto(input, c.text)
		v := tb.editView(id)
		if mustJSON(v.Problems) != mustJSON([]string{c.problem}) || v.Invalid != "true" || v.Blocked != "true" || v.OK {
			t.Errorf("%s: the editor shows %+v, want %q", c.text, v, c.problem)
		}
	}
	// Run with problems goes to the editor and sends nothing.
	tb.do("pressing Run", chromedp.Click(asel(id, `[data-testid="edit-confirm"]`)))
	if f := tb.focused(); f.TestID != "edit-input" {
		t.Errorf("Run with problems focused %+v", f)
	}
	// The server's refusal of an edit (sent here past the browser's checks) is shown in
	// the editor, and the approval stays open.
	tb.do("sending an edit the server refuses", chromedp.Evaluate[chromedp.Void](`demo.client.send({type: "tool_approval_result",
		data: {requestId: `+js(id)+`, decision: "edit", arguments: {name: "", extra: 1}}})`))
	server := waitFor[[]string](tb, "the server's problems", `(() => { const s = `+cardJS(id)+`.querySelector('[data-testid="edit-server-problems"]');
		return !s.hidden && [...s.querySelectorAll("li")].map(li => li.textContent); })()`)
	if want := []string{"extra: is not a field of this tool (it takes name)", "name: must not be empty"}; mustJSON(server) != mustJSON(want) {
		t.Errorf("the server's problems: %q, want %q (in the panel's words)", server, want)
	}
	if n := eval[int](tb, `window.demo.events.filter(e => e.type === "tool_result").length`); n != 0 {
		t.Fatal("a refused edit ended the approval")
	}
	frames.mu.Lock()
	for _, f := range frames.sent {
		if strings.Contains(f, `"decision":"edit"`) && !strings.Contains(f, `"extra"`) {
			t.Errorf("an edit with problems was sent: %s", f)
		}
	}
	frames.mu.Unlock()
	// A valid edit, sent with Ctrl+Enter.
	tb.typeInto(input, `{"name": "feature/older", "n": 12345678901234567890}`)
	if v := tb.editView(id); v.Problems[0] != "n: is not a field of this tool (it takes name)" {
		t.Fatalf("%+v", v)
	}
	tb.typeInto(input, `{"name": "feature/older"}`)
	tb.do("Ctrl+Enter", chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	want := editedNotice + `{"name":"feature/older"}, "result": {"deleted":"feature/older"}}`
	if got := tb.toolResult(id); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
	if s := tb.toolSummary(id); s != `Edited; ran with {"name":"feature/older"}` {
		t.Errorf("the tool card says %q", s)
	}
}

// TestAlwaysAllow: "Always allow for this session" runs this call and lets the next call
// of the tool run without a card.
func TestAlwaysAllow(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say(`/tool delete_branch {"name":"feature/a"}`)
	id := tb.newestApproval("")
	tb.do("always allowing", chromedp.Click(asel(id, `[data-testid="always"]`)))
	if got := tb.toolResult(id); got != `{"deleted":"feature/a"}` {
		t.Fatalf("tool result = %s", got)
	}
	tb.approvalGone(id)
	tb.say(`/tool delete_branch {"name":"feature/b"}`)
	next := tb.toolCallOf("delete_branch", 1)
	if got := tb.toolResult(next); got != `{"deleted":"feature/b"}` {
		t.Fatalf("the next call's result = %s", got)
	}
	if n := tb.approvalEvents(next); n != 0 || eval[int](tb, `document.querySelectorAll('[data-testid="approval"]').length`) != 0 {
		t.Errorf("the call the grant covers was asked about (%d approvals)", n)
	}
	if s := tb.toolSummary(next); s != "Ran without asking: always allowed in this session" {
		t.Errorf("the tool card says %q", s)
	}
}

// TestTwoTabsDecideOnce: deciding in one tab clears the card in the other, which leaves
// a note saying how it was decided; the deciding tab leaves none.
func TestTwoTabsDecideOnce(t *testing.T) {
	session := newSession()
	a := newTab(t)
	b := newTab(t)
	a.open(env.main, session)
	b.open(env.main, session)
	a.say(`/tool delete_branch {"name":"feature/one"}`)
	id := a.newestApproval("")
	b.newestApproval("")
	b.do("starting a reason in B", chromedp.Click(asel(id, `[data-testid="deny"]`)), chromedp.SendKeys(asel(id, `[data-testid="deny-reason"]`), "hold on"))
	a.do("denying in A", chromedp.Click(asel(id, `[data-testid="deny"]`)), chromedp.Click(asel(id, `[data-testid="deny-preset"][data-reason="Not now"]`)),
		chromedp.Click(asel(id, `[data-testid="deny-confirm"]`)))
	b.approvalGone(id)
	if n := b.approvalNote(id, "Denied on another device: Not now"); n.Outcome != "denied" || n.Typed != "What you had written: hold on" {
		t.Errorf("B's note = %+v", n)
	}
	a.approvalGone(id)
	if n := eval[int](a, `document.querySelectorAll('[data-testid="approval-ended"]').length`); n != 0 {
		t.Errorf("the deciding tab shows %d notes", n)
	}

	b.say(`/tool delete_branch {"name":"feature/two"}`)
	id2 := b.newestApproval(id)
	a.newestApproval(id)
	b.do("approving in B", chromedp.Click(asel(id2, `[data-testid="approve"]`)))
	a.approvalGone(id2)
	if n := a.approvalNote(id2, "Approved on another device."); n.Outcome != "approved" {
		t.Errorf("A's note = %+v", n)
	}
	b.say(`/tool delete_branch {"name":"feature/three"}`)
	id3 := b.newestApproval(id2)
	a.newestApproval(id2)
	b.do("always allowing in B", chromedp.Click(asel(id3, `[data-testid="always"]`)))
	a.approvalNote(id3, "Always allowed on another device: every call of delete_branch in this session.")
	a.do("dismissing a note", chromedp.Click(chromedp.CSS(`[data-testid="approval-ended"][data-request-id=`+js(id3)+`] [data-testid="dismiss"]`)))
	waitFor[bool](a, "the note to go", `!document.querySelector('[data-testid="approval-ended"][data-request-id=`+js(id3)+`]')`)
}

// TestApprovalCountdown: a card counts down from its expiry and, when time is up,
// leaves a note; the model reads that nobody decided.
func TestApprovalCountdown(t *testing.T) {
	srv := demoWithTimeout(t, "6s")
	tb := newTab(t)
	tb.open(srv, newSession())
	tb.say(`/tool delete_branch {"name":"feature/slow"}`)
	id := tb.newestApproval("")
	countdown := asel(id, `[data-testid="approval-countdown"]`)
	first := eval[string](tb, `document.querySelector(`+js(string(countdown))+`).textContent`)
	if !regexp.MustCompile(`^0:0[1-6] left$`).MatchString(first) {
		t.Fatalf("countdown = %q", first)
	}
	if role := eval[string](tb, `document.querySelector(`+js(string(countdown))+`).getAttribute("role")`); role != "timer" {
		t.Errorf("countdown role = %q", role)
	}
	waitFor[bool](tb, "the countdown to tick", `(() => { const e = document.querySelector(`+js(string(countdown))+`); return !e || e.textContent !== `+js(first)+`; })()`)
	tb.approvalGone(id)
	if got := tb.toolResult(id); got != approvalTimeout {
		t.Fatalf("tool result = %s", got)
	}
	if n := tb.approvalNote(id, "Timed out: delete_branch did not run."); n.Outcome != "timed_out" {
		t.Errorf("note = %+v", n)
	}
	waitFor[bool](tb, "the agent's reaction", `[...document.querySelectorAll("#transcript .agent .text")].some(e => e.textContent.includes("No decision in time"))`)
}

// TestDropDatabaseIsNeverAsked: a call a rule denies (dropping the production
// database) never shows a card, and the model reads that it is not allowed.
func TestDropDatabaseIsNeverAsked(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say(`/tool drop_database {"name":"production"}`)
	id := tb.toolCallOf("drop_database", 0)
	if got := tb.toolResult(id); got != notAllowed {
		t.Fatalf("tool result = %s", got)
	}
	if n := tb.approvalEvents(id); n != 0 || eval[int](tb, `document.querySelectorAll('[data-testid="approval"]').length`) != 0 {
		t.Errorf("drop_database was asked about (%d approvals)", n)
	}
	if s := tb.toolSummary(id); s != "Not allowed here: a rule denies it; did not run" {
		t.Errorf("the tool card says %q", s)
	}
	tb.say(`/tool list_files {}`)
	files := tb.toolCallOf("list_files", 0)
	if got := tb.toolResult(files); !strings.HasPrefix(got, `{"path":".","files":[`) || tb.approvalEvents(files) != 0 {
		t.Errorf("list_files: %s", got)
	}
	if s := tb.toolSummary(files); s != "Ran without asking: a rule allows it" {
		t.Errorf("the list_files card says %q", s)
	}
}

// TestInvalidArgumentsCard: arguments that are not JSON are shown as the text they are,
// said to be invalid, with only Deny and Edit; an edit into valid arguments runs.
func TestInvalidArgumentsCard(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say(`/tool delete_branch {bad json`)
	id := tb.newestApproval("")
	got := eval[map[string]string](tb, `(() => { const c = `+cardJS(id)+`;
		return {warn: c.querySelector('[data-testid="approval-arguments-invalid"]').textContent,
			raw: c.querySelector('[data-testid="approval-raw"]').textContent,
			buttons: [...c.querySelectorAll(".askuser-approval-actions button:not([hidden])")].map(b => b.dataset.testid).join(",")}; })()`)
	if got["raw"] != "{bad json" || got["buttons"] != "deny,edit" || !strings.Contains(got["warn"], "not valid JSON") {
		t.Fatalf("card = %v", got)
	}
	tb.do("editing", chromedp.Click(asel(id, `[data-testid="edit"]`)))
	if v := tb.editView(id); len(v.Problems) != 1 || !strings.HasPrefix(v.Problems[0], "Not valid JSON, line 1, column 2:") {
		t.Fatalf("the editor shows %+v", v)
	}
	tb.typeInto(asel(id, `[data-testid="edit-input"]`), `{"name": "fixed"}`)
	tb.do("running", chromedp.Click(asel(id, `[data-testid="edit-confirm"]`)))
	if got, want := tb.toolResult(id), editedNotice+`{"name":"fixed"}, "result": {"deleted":"fixed"}}`; got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
}

// TestApprovalKeyboardOnly: Tab reaches the card's arguments and its buttons, Enter
// decides, Esc closes the reason box and gives the focus back to Deny; after the
// decision the focus goes to the question still pending.
func TestApprovalKeyboardOnly(t *testing.T) {
	tb := newTab(t)
	tb.viewport(1280, 800, false)
	tb.open(env.main, newSession())
	tb.say("/parallel")
	q := tb.newestPanel()
	id := tb.newestApproval("")
	tb.do("focusing the question's Submit", chromedp.Focus(sel(q, `[data-testid="submit"]`)))
	seen := []string{}
	for i := 0; i < 3; i++ {
		tb.key(kb.Tab)
		seen = append(seen, tb.focused().TestID)
	}
	if got := strings.Join(seen, " "); got != "approval-arguments approve deny" {
		t.Fatalf("Tab from the question's Submit went %s", got)
	}
	tb.key(kb.Enter)
	if f := tb.focused(); f.TestID != "deny-reason" {
		t.Fatalf("Enter on Deny focused %+v", f)
	}
	tb.key("n", "o")
	tb.key(kb.Escape)
	if f := tb.focused(); f.TestID != "deny" || !eval[bool](tb, cardJS(id)+`.querySelector('[data-testid="deny-form"]').hidden`) {
		t.Fatalf("Esc left the focus on %+v", f)
	}
	if n := eval[int](tb, `window.demo.events.filter(e => e.type === "tool_result").length`); n != 0 {
		t.Fatal("Esc in the reason box decided something")
	}
	tb.key(kb.Enter)
	if v := eval[string](tb, `document.activeElement.value`); v != "no" {
		t.Errorf("the reason box lost what was typed: %q", v)
	}
	// Back out, and approve from the keyboard instead.
	tb.key(kb.Escape)
	tb.do("shift-tab to Approve", chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
	if f := tb.focused(); f.TestID != "approve" {
		t.Fatalf("Shift+Tab from Deny focused %+v", f)
	}
	tb.key(kb.Enter)
	if got := tb.toolResult(id); got != `{"deleted":"feature/old-login"}` {
		t.Fatalf("tool result = %s", got)
	}
	tb.approvalGone(id)
	f := waitFor[focusInfo](tb, "the focus to move to the question", `(() => {
		const a = document.activeElement, p = a.closest('[data-testid="panel"]');
		return p && {testid: a.dataset.testid, question: +a.closest('[data-testid="question"]').dataset.index, option: -1, panel: p.dataset.requestId};
	})()`)
	if f.Panel != q || f.TestID != "option-input" {
		t.Fatalf("after the decision the focus is on %+v", f)
	}
	tb.key("2", kb.Enter)
	if got := tb.toolResult(q); !strings.Contains(got, `"selectedLabels":["React"]`) {
		t.Fatalf("question result = %s", got)
	}
}
