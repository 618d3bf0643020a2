package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/coder/websocket"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
)

// inboxServer is a host of several people in this process: a hub whose devices connect
// as the person, groups and sessions their URL names (?user=alice&groups=dba&sessions=s1,s2),
// a dispatcher that titles its sessions, and a page that shows the panel, under the
// demo's Content-Security-Policy.
type inboxServer struct {
	d   *askuser.Dispatcher
	srv *httptest.Server
	ctx context.Context // the requests', cancelled when the test ends
	wg  sync.WaitGroup
}

// inboxTitles are the hosts' titles of the sessions of the inbox tests.
var inboxTitles = map[string]string{"s1": "Onboarding", "s2": "Deploys", "s3": "Billing db"}

const inboxPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Inbox</title><link rel="stylesheet" href="/askuser/panel.css"><link rel="stylesheet" href="/page.css"></head>
<body><main id="box"></main><script src="/askuser/panel.js"></script><script src="/app.js"></script></body></html>`

const inboxApp = `window.demo = {cspViolations: []};
document.addEventListener("securitypolicyviolation", (e) => window.demo.cspViolations.push(e.violatedDirective + " " + e.blockedURI));
window.ask = AskUser.connect({url: "/ws" + location.search, container: document.getElementById("box"), lang: "en", notify: false});`

const inboxCSS = `body { margin: 0; background: #f6f8fa; } main { max-width: 1100px; margin: 0 auto; padding: 12px; }`

func newInboxServer(t *testing.T, csp bool) *inboxServer {
	t.Helper()
	setup(t)
	s := &inboxServer{}
	hub := wshub.New(&wshub.Options{Authenticate: func(r *http.Request) (wshub.Access, error) {
		q := r.URL.Query()
		a := wshub.Access{User: q.Get("user")}
		if g := q.Get("groups"); g != "" {
			a.Groups = strings.Split(g, ",")
		}
		for _, id := range strings.Split(q.Get("sessions"), ",") {
			a.Sessions = append(a.Sessions, askuser.StringSession(id))
		}
		return a, nil
	}})
	s.d = askuser.New(hub, &askuser.Options{Timeout: 3 * time.Minute, Policy: &askuser.Policy{},
		SessionTitle: func(id askuser.SessionID) string { return inboxTitles[id.String()] }})
	serve := func(body, ctype string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if csp {
				w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
			}
			w.Header().Set("Content-Type", ctype)
			_, _ = w.Write([]byte(body))
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/ws", hub)
	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	mux.Handle("/{$}", serve(inboxPage, "text/html; charset=utf-8"))
	mux.Handle("/app.js", serve(inboxApp, "text/javascript; charset=utf-8"))
	mux.Handle("/page.css", serve(inboxCSS, "text/css; charset=utf-8"))
	s.srv = httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel() // every request still pending ends
		s.wg.Wait()
		s.d.Close()
		_ = hub.Close()
		s.srv.Close()
	})
	s.ctx = ctx
	return s
}

// open loads the page as the person q names (a query without "?") and waits until the
// panel knows them.
func (s *inboxServer) open(tb *tab, q string) {
	tb.t.Helper()
	tb.do("loading the page", chromedp.Navigate(s.srv.URL+"/?"+q))
	waitFor[bool](tb, "the inbox bar", `!!document.querySelector('[data-testid="inbox-bar"]:not([hidden])')`)
}

// ask asks q1 in session with the header header; its result goes to the channel.
func (s *inboxServer) ask(session, id, header string) <-chan askuser.Result {
	out := make(chan askuser.Result, 1)
	args := fmt.Sprintf(`{"questions":[{"question":"Which database?","header":%q,"multiSelect":false,
		"options":[{"label":"PostgreSQL","description":"Relational"},{"label":"SQLite","description":"One file"}]}]}`, header)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		out <- s.d.Dispatch(s.ctx, askuser.ToolCall{Session: askuser.StringSession(session), ID: id, Arguments: json.RawMessage(args)})
	}()
	return out
}

// approve asks for the approval of tool in session, by approvers (nil: anyone of the
// session); its result goes to the channel once it ends.
func (s *inboxServer) approve(t *testing.T, session, id, tool string, approvers *askuser.Approvers) <-chan askuser.ApprovalResult {
	t.Helper()
	out := make(chan askuser.ApprovalResult, 1)
	sid := askuser.StringSession(session)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		out <- s.d.Approve(s.ctx, askuser.ToolCall{Session: sid, ID: id, Name: tool, Arguments: json.RawMessage(`{"name":"prod"}`)},
			&askuser.ApprovalOptions{Approvers: approvers})
	}()
	deadline := time.Now().Add(actionTimeout)
	for !slices.ContainsFunc(askusertest.Approvals(s.d, sid), func(a wire.ApprovalData) bool { return a.RequestID == id }) {
		if time.Now().After(deadline) {
			t.Fatalf("the approval %s is not pending", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return out
}

// digest returns the digest of the pending approval id of session, which a decision
// toward a quorum must carry.
func (s *inboxServer) digest(t *testing.T, session, id string) string {
	t.Helper()
	for _, a := range askusertest.Approvals(s.d, askuser.StringSession(session)) {
		if a.RequestID == id {
			return a.Digest
		}
	}
	t.Fatalf("the approval %s is not pending", id)
	return ""
}

// device connects a device of the person q names, with no page: another device of
// theirs, or another person's. What it is sent it reads and drops.
func (s *inboxServer) device(t *testing.T, q string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.srv.URL, "http")+"/ws?"+q, nil)
	if err != nil {
		t.Fatalf("connecting %s: %v", q, err)
	}
	go func() {
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			t.Logf("%s got %.300s", q, b)
		}
	}()
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// sendEvent sends one event from a device.
func sendEvent(t *testing.T, c *websocket.Conn, event string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(event)); err != nil {
		t.Fatalf("sending %s: %v", event, err)
	}
}

// inboxView is what the inbox view lists.
type inboxView struct {
	Toggle  string   `json:"toggle"`
	Pending []string `json:"pending"` // title | kind: what | read-only
	Decided []string `json:"decided"` // title | what | outcome line, without the time
}

func (tb *tab) inbox() inboxView {
	tb.t.Helper()
	return eval[inboxView](tb, `(() => {
		const t = (e, s) => e.querySelector(s).textContent;
		return {
			toggle: document.querySelector('[data-testid="inbox-toggle"]').textContent,
			pending: [...document.querySelectorAll('[data-testid="inbox-item"]')].map((b) =>
				t(b, ".askuser-inbox-title") + " | " + t(b, ".askuser-inbox-line") + " | " + b.dataset.readonly),
			decided: [...document.querySelectorAll('[data-testid="inbox-decided-item"]')].map((d) =>
				t(d, ".askuser-inbox-title") + " | " + t(d, ".askuser-inbox-line") + " | " + t(d, ".askuser-inbox-meta").split(" \u00b7 ")[0]),
		};
	})()`)
}

// waitInbox waits until the inbox lists what want says.
func (tb *tab) waitInbox(what string, want inboxView) {
	tb.t.Helper()
	deadline := time.Now().Add(actionTimeout)
	for {
		got := tb.inbox()
		if got.Toggle == want.Toggle && slices.Equal(got.Pending, want.Pending) && slices.Equal(got.Decided, want.Decided) {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("%s: the inbox shows\n%+v\nwant\n%+v", what, got, want)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// elementScreenshot writes the element sel selects to docs/screenshots/NAME.png when
// E2E_SCREENSHOTS=1, with a margin of the page around it.
func (tb *tab) elementScreenshot(name, sel string) {
	tb.t.Helper()
	if os.Getenv("E2E_SCREENSHOTS") != "1" {
		return
	}
	tb.settle()
	eval[chromedp.Void](tb, `document.activeElement && document.activeElement.blur && document.activeElement.blur()`)
	png, err := run(tb, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	writeScreenshot(tb.t, name, png)
}

// shown lists the request ids of the questions and cards the panel shows now (display
// not none).
func (tb *tab) shown() []string {
	tb.t.Helper()
	return eval[[]string](tb, `[...document.querySelectorAll('[data-testid="panel"], [data-testid="approval"]')]
		.filter((n) => n.getClientRects().length > 0).map((n) => n.dataset.requestId)`)
}

// TestInboxAcrossSessions: alice's page, connected for sessions s1 and s2 as a member of
// dba, lists in its inbox a question of s1, an approval of s2, an approval of s3 (bob's
// session, routed to alice because its approvers name dba) and one of s1 whose approvers
// are carol alone (read-only for alice), newest first, by the sessions' titles. Picking
// one shows its card alone. When bob decides s3's approval, it leaves the pending list
// and enters the decided one ("Approved by bob"); when alice's other device answers the
// question, it leaves too; a page loaded later is given the decided one by the hub.
func TestInboxAcrossSessions(t *testing.T) {
	s := newInboxServer(t, true)
	tb := newTab(t)
	tb.viewport(1280, 900, false)
	s.open(tb, "user=alice&groups=dba&sessions=s1,s2")
	if got := eval[string](tb, `document.querySelector('[data-testid="inbox-who"]').textContent`); got != "Signed in as alice (dba)" {
		t.Errorf("the bar says %q", got)
	}
	holds := func(id string) {
		t.Helper()
		waitFor[bool](tb, id+" in the panel", `window.ask.requestIds().concat(window.ask.approvalIds()).includes(`+js(id)+`)`)
	}
	question := s.ask("s1", "q1", "Database")
	holds("q1")
	deploy := s.approve(t, "s2", "a2", "deploy", nil)
	holds("a2")
	drop := s.approve(t, "s3", "a3", "drop_database", &askuser.Approvers{Groups: []string{"dba"}})
	holds("a3")
	s.approve(t, "s1", "a4", "rotate_keys", &askuser.Approvers{Users: []string{"carol"}})
	holds("a4")
	tb.elementScreenshot("approval-readonly", `[data-testid="approval"][data-request-id="a4"]`)
	tb.viewport(390, 844, true)
	tb.elementScreenshot("approval-readonly-phone", `[data-testid="approval"][data-request-id="a4"]`)
	tb.viewport(1280, 900, false)

	tb.do("opening the inbox", chromedp.Click(chromedp.CSS(`[data-testid="inbox-toggle"]`)))
	tb.waitInbox("four pending", inboxView{Toggle: "Inbox (4)", Pending: []string{
		"Onboarding | Approval: rotate_keys | true",
		"Billing db | Approval: drop_database | false",
		"Deploys | Approval: deploy | false",
		"Onboarding | Question: Database | false",
	}})
	if got := tb.shown(); len(got) != 0 {
		t.Errorf("the inbox, with nothing picked, shows the requests %q", got)
	}
	if got := eval[string](tb, `document.querySelector('[data-testid="inbox-toggle"]').getAttribute("aria-expanded")`); got != "true" {
		t.Errorf("the open inbox's toggle has aria-expanded=%q", got)
	}

	// Picking the routed approval shows its card alone, with its decisions, focused.
	tb.do("picking drop_database", chromedp.Click(chromedp.CSS(`[data-testid="inbox-item"][data-inbox-request="a3"]`)))
	waitFor[bool](tb, "a3 alone", `(() => { const n = document.activeElement.closest('[data-testid="approval"]'); return n && n.dataset.requestId === "a3"; })()`)
	if got := tb.shown(); !slices.Equal(got, []string{"a3"}) {
		t.Errorf("with a3 picked the panel shows %q", got)
	}
	if got := eval[string](tb, `document.querySelector('[data-testid="approval"][data-request-id="a3"] [data-testid="approval-session"]').textContent`); got != "Session: Billing db" {
		t.Errorf("a3's card names its session %q", got)
	}
	if n := eval[int](tb, `document.querySelectorAll('[data-testid="approval"][data-request-id="a3"] [data-testid="approve"]:not([hidden])').length`); n != 1 {
		t.Errorf("a3's card, whose approvers name alice's group, has %d Approve buttons", n)
	}
	tb.do("picking rotate_keys", chromedp.Click(chromedp.CSS(`[data-testid="inbox-item"][data-inbox-request="a4"]`)))
	waitFor[bool](tb, "a4 alone", `document.activeElement.closest('[data-testid="approval"]')?.dataset.requestId === "a4"`)

	// Bob, of dba, decides s3's approval from his device.
	bob := s.device(t, "user=bob&groups=dba&sessions=s3")
	sendEvent(t, bob, `{"type":"tool_approval_result","sessionId":"s3","data":{"requestId":"a3","decision":"approve"}}`)
	if r := <-drop; r.Outcome != askuser.Approved || r.Decision.By != "bob" {
		t.Fatalf("drop_database ended %+v; want approved by bob", r)
	}
	tb.waitInbox("a3 decided by bob", inboxView{Toggle: "Inbox (3)", Pending: []string{
		"Onboarding | Approval: rotate_keys | true",
		"Deploys | Approval: deploy | false",
		"Onboarding | Question: Database | false",
	}, Decided: []string{"Billing db | Approval: drop_database | Approved by bob"}})

	// Alice answers the question on another device of hers.
	other := s.device(t, "user=alice&groups=dba&sessions=s1")
	sendEvent(t, other, `{"type":"ask_user_questions_result","sessionId":"s1","data":{"requestId":"q1","answers":[{"question":"Which database?","selectedLabels":["SQLite"],"customInput":null}]}}`)
	if r := <-question; r.Outcome != askuser.Answered {
		t.Fatalf("the question ended %+v; want answered", r)
	}
	tb.waitInbox("q1 answered elsewhere", inboxView{Toggle: "Inbox (2)", Pending: []string{
		"Onboarding | Approval: rotate_keys | true",
		"Deploys | Approval: deploy | false",
	}, Decided: []string{"Billing db | Approval: drop_database | Approved by bob"}})
	if got := tb.shown(); !slices.Equal(got, []string{"a4"}) {
		t.Errorf("with a4 picked, after the others ended, the panel shows %q", got)
	}
	tb.pageScreenshot("inbox")
	tb.viewport(390, 844, true)
	tb.do("back to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	phone := eval[map[string]any](tb, `({overflow: document.documentElement.scrollWidth > innerWidth,
		small: [...document.querySelectorAll('[data-testid="inbox-toggle"], [data-testid="inbox-item"]')]
			.filter((b) => b.getBoundingClientRect().height < 44).map((b) => b.textContent)})`)
	if phone["overflow"] != false || len(phone["small"].([]any)) > 0 {
		t.Errorf("on a phone the inbox overflows the width (%v), or has targets under 44 px: %v", phone["overflow"], phone["small"])
	}
	tb.settle()
	tb.pageScreenshot("inbox-phone")
	tb.viewport(1280, 900, false)

	// Deciding in place, from the inbox: deploy, alice's own.
	tb.do("picking deploy from the keyboard", chromedp.Focus(chromedp.CSS(`[data-testid="inbox-item"][data-inbox-request="a2"]`)), chromedp.KeyEvent(kb.Enter))
	waitFor[bool](tb, "the focus on deploy's card", `document.activeElement.closest('[data-testid="approval"]')?.dataset.requestId === "a2"`)
	if got := tb.shown(); !slices.Equal(got, []string{"a2"}) {
		t.Errorf("with a2 picked the panel shows %q", got)
	}
	tb.do("approving deploy", chromedp.Click(chromedp.CSS(`[data-testid="approval"][data-request-id="a2"] [data-testid="approve"]`)))
	if r := <-deploy; r.Outcome != askuser.Approved || r.Decision.By != "alice" {
		t.Fatalf("deploy ended %+v; want approved by alice", r)
	}
	tb.waitInbox("a2 decided here", inboxView{Toggle: "Inbox (1)", Pending: []string{
		"Onboarding | Approval: rotate_keys | true",
	}, Decided: []string{"Deploys | Approval: deploy | Approved by alice", "Billing db | Approval: drop_database | Approved by bob"}})

	// A page loaded now is told by the hub what was decided lately.
	later := newTab(t)
	s.open(later, "user=alice&groups=dba&sessions=s1,s2")
	later.do("opening the inbox", chromedp.Click(chromedp.CSS(`[data-testid="inbox-toggle"]`)))
	later.waitInbox("the inbox of a page loaded later", inboxView{Toggle: "Inbox (1)", Pending: []string{
		"Onboarding | Approval: rotate_keys | true",
	}, Decided: []string{"Deploys | Approval: deploy | Approved by alice", "Billing db | Approval: drop_database | Approved by bob"}})
}

// cardState is what an approval card offers the person.
type cardState struct {
	Present  bool     `json:"present"`
	ReadOnly string   `json:"readonly"`
	Note     string   `json:"note"`     // the read-only line, when shown
	Progress string   `json:"progress"` // who it waits for, when shown
	Buttons  []string `json:"buttons"`  // the decision buttons shown
}

func (tb *tab) card(id string) cardState {
	tb.t.Helper()
	return eval[cardState](tb, `(() => {
		const c = document.querySelector('[data-testid="approval"][data-request-id=`+js(id)+`]');
		if (!c) return {present: false, buttons: []};
		const shown = (s) => { const e = c.querySelector(s); return e && !e.hidden && e.getClientRects().length ? e.textContent : ""; };
		return {present: true, readonly: c.dataset.readonly, note: shown('[data-testid="approval-readonly"]'),
			progress: shown('[data-testid="approval-progress"]'),
			buttons: [...c.querySelectorAll(".askuser-approval-buttons button")].filter((b) => b.getClientRects().length).map((b) => b.dataset.testid)};
	})()`)
}

// TestReadOnlyCardEscalates: alice, of ops, sees her session's drop_database, which two
// of dba must approve, read-only: who it waits for and why she cannot decide, with no
// decision. Carol of dba approves on her device and alice's card says so. Once the
// escalation step names alice, the card offers her the decisions, and the approval of
// another session that the step routes to her comes to her page too; her approval
// completes the quorum.
func TestReadOnlyCardEscalates(t *testing.T) {
	const after = 10 * time.Second // the checks before the step take well under it
	s := newInboxServer(t, true)
	tb := newTab(t)
	s.open(tb, "user=alice&groups=ops&sessions=s1")
	step := []store.Escalation{{After: after, Users: []string{"alice"}}}
	drop := s.approve(t, "s1", "e1", "drop_database", &askuser.Approvers{Groups: []string{"dba"}, Quorum: 2, Escalate: step})
	purge := s.approve(t, "s3", "e2", "purge_cache", &askuser.Approvers{Users: []string{"carol"}, Escalate: step})
	waitFor[bool](tb, "e1's card", `!!document.querySelector('[data-testid="approval"][data-request-id="e1"]')`)
	want := cardState{Present: true, ReadOnly: "true", Note: "You cannot decide this call: it waits for its approvers.",
		Progress: "Waiting for 2 more approvals from dba.", Buttons: []string{}}
	if got := tb.card("e1"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("before any approval, e1's card is %+v\nwant %+v", got, want)
	}

	carol := s.device(t, "user=carol&groups=dba&sessions=s1")
	sendEvent(t, carol, `{"type":"tool_approval_result","sessionId":"s1","data":{"requestId":"e1","decision":"approve","digest":`+js(s.digest(t, "s1", "e1"))+`}}`)
	waitFor[bool](tb, "carol's approval on the card", `document.querySelector('[data-request-id="e1"] [data-testid="approval-progress"]').textContent.includes("carol")`)
	want.Progress = "Waiting for 1 more approval from dba: carol approved."
	if got := tb.card("e1"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after carol's approval, e1's card is %+v\nwant %+v", got, want)
	}
	if got := tb.card("e2"); got.Present {
		t.Errorf("before the step, the approval of s3, which is carol's alone, is on alice's page: %+v", got)
	}
	if got := eval[string](tb, `window.ask.approvalIds().join()`); got != "e1" {
		t.Errorf("before the step alice's panel holds %q", got)
	}
	if got := eval[string](tb, `document.title`); got != "Inbox" {
		t.Errorf("before the step, with nothing alice may decide, the title is %q", got)
	}

	// The step: alice may decide both.
	waitFor[bool](tb, "the escalation step", `document.querySelector('[data-request-id="e1"]').dataset.readonly === "false" && !!document.querySelector('[data-request-id="e2"]')`)
	want = cardState{Present: true, ReadOnly: "false", Progress: "Waiting for 1 more approval from dba, alice: carol approved.",
		Buttons: []string{"approve", "deny", "edit"}}
	if got := tb.card("e1"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the step, e1's card is %+v\nwant %+v", got, want)
	}
	if got := tb.card("e2"); got.ReadOnly != "false" || !slices.Contains(got.Buttons, "approve") {
		t.Errorf("after the step, e2's card is %+v; want one alice decides", got)
	}
	waitFor[bool](tb, "the title's count", `document.title === "(2) Waiting for you \u00b7 Inbox"`)
	tb.do("approving e1", chromedp.Click(chromedp.CSS(`[data-testid="approval"][data-request-id="e1"] [data-testid="approve"]`)))
	r := <-drop
	if r.Outcome != askuser.Approved || r.Decision.By != "alice" {
		t.Fatalf("drop_database ended %+v; want approved, alice last", r)
	}
	tb.do("denying e2", chromedp.Click(chromedp.CSS(`[data-testid="approval"][data-request-id="e2"] [data-testid="deny"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="approval"][data-request-id="e2"] [data-testid="deny-confirm"]`)))
	if r := <-purge; r.Outcome != askuser.Denied || r.Decision.By != "alice" {
		t.Fatalf("purge_cache ended %+v; want denied by alice", r)
	}
}

// TestInboxPanelAPI: the panel alone (createPanel), given the events: without the inbox
// event an approval whose approvers name others keeps its decisions, as before; the
// inbox event makes it read-only, names the person, and lists what was decided; a
// quorum's progress reads "Waiting for 1 more approval from dba: alice approved."; an
// escalation step naming the person gives the decisions back, and the decision goes
// out; its resolution enters the decided list, newest first. With inbox: false the
// panel shows no inbox, and the cards are read-only all the same.
func TestInboxPanelAPI(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	got := eval[map[string]string](tb, `(() => {
		const box = document.createElement("div");
		document.body.appendChild(box);
		const sent = [];
		const panel = AskUser.createPanel({container: box, autoFocus: false, drafts: false, lang: "en",
			send: (ev) => { sent.push(AskUser.stringify(ev)); return true; }});
		const feed = (type, data) => panel.handle(AskUser.parse(JSON.stringify({type, sessionId: "ops", data})));
		const card = (id) => box.querySelector('[data-testid="approval"][data-request-id="' + id + '"]');
		const buttons = (id) => [...card(id).querySelectorAll(".askuser-approval-buttons button")].filter((b) => b.getClientRects().length).map((b) => b.dataset.testid).join();
		const text = (id, what) => { const e = card(id).querySelector('[data-testid="' + what + '"]'); return e.hidden ? "(hidden)" : e.textContent; };
		const bar = () => box.querySelector('[data-testid="inbox-bar"]');
		const out = {};
		feed("tool_approval", {requestId: "r0", tool: "restart", arguments: {}, decisions: ["approve", "deny"], digest: "r",
			approvers: {names: ["carol"], users: ["carol"]}, sessionTitle: "Ops"});
		out.before = buttons("r0") + " | " + text("r0", "approval-readonly") + " | bar " + (bar().hidden ? "hidden" : "shown");
		out.inbox = String(feed("inbox", {user: "erin", groups: ["ops"], decided: [
			{sessionId: "old", sessionTitle: "Old", requestId: "d0", kind: "approval", what: "old_tool", outcome: "denied", by: "carol", at: new Date(Date.now() - 3600e3).toISOString()}]}));
		out.after = buttons("r0") + " | " + text("r0", "approval-readonly") + " | " + box.querySelector('[data-testid="inbox-who"]').textContent;
		feed("tool_approval", {requestId: "q1", tool: "drop_database", arguments: {db: "prod"}, decisions: ["approve", "deny", "edit"],
			digest: "d1", approvers: {names: ["dba"], groups: ["dba"], quorum: 2, approved: ["alice"]}});
		out.readOnly = buttons("q1") + " | " + text("q1", "approval-progress") + " | " + card("q1").dataset.readonly;
		card("q1").querySelector('[data-testid="approve"]').click(); // hidden: nothing may go out
		out.sentReadOnly = String(sent.length);
		feed("tool_approval_progress", {requestId: "q1", approved: ["alice"], digest: "d1", names: ["dba", "erin"], users: ["erin"], groups: ["dba"]});
		out.escalated = buttons("q1") + " | " + text("q1", "approval-progress") + " | " + text("q1", "approval-readonly");
		card("q1").querySelector('[data-testid="approve"]').click();
		out.approve = sent.pop();
		feed("tool_approval_resolved", {requestId: "q1", outcome: "approved", by: "erin", at: new Date().toISOString()});
		box.querySelector('[data-testid="inbox-toggle"]').click();
		out.pending = [...box.querySelectorAll('[data-testid="inbox-item"]')].map((b) => b.textContent).join(" / ");
		out.decided = [...box.querySelectorAll('[data-testid="inbox-decided-item"]')].map((b) => b.textContent).join(" / ");
		out.toggle = box.querySelector('[data-testid="inbox-toggle"]').textContent + " " + box.querySelector('[data-testid="inbox-toggle"]').getAttribute("aria-expanded");
		panel.destroy();
		// inbox: false: no bar nor view, the cards read-only all the same.
		const quiet = AskUser.createPanel({container: box, autoFocus: false, drafts: false, lang: "en", inbox: false, send: () => true});
		quiet.handle({type: "inbox", sessionId: "ops", data: {user: "erin", decided: []}});
		quiet.handle({type: "tool_approval", sessionId: "ops", data: {requestId: "r1", tool: "restart", arguments: {}, decisions: ["approve"],
			digest: "r", approvers: {names: ["carol"], users: ["carol"]}}});
		out.quiet = (box.querySelector('[data-testid="inbox-bar"]').hidden ? "no bar" : "bar") + " | " + buttons("r1") + " | " + String(quiet.readOnly("r1"));
		quiet.destroy();
		box.remove();
		return out;
	})()`)
	want := map[string]string{
		"quiet":        "no bar |  | true",
		"before":       "approve,deny | (hidden) | bar hidden",
		"inbox":        "true",
		"after":        " | You cannot decide this call: it waits for its approvers. | Signed in as erin (ops)",
		"readOnly":     " | Waiting for 1 more approval from dba: alice approved. | true",
		"sentReadOnly": "0",
		"escalated":    "approve,deny,edit | Waiting for 1 more approval from dba, erin: alice approved. | (hidden)",
		"approve":      `{"type":"tool_approval_result","sessionId":"ops","data":{"requestId":"q1","decision":"approve","digest":"d1"}}`,
		"pending":      "OpsApproval: restartjust now · read-only",
		"decided":      "opsApproval: drop_databaseApproved by erin · just now / OldApproval: old_toolDenied by carol · 1 h ago",
		"toggle":       "Inbox (1) true",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q\nwant   %q", k, got[k], v)
		}
	}
}

// inboxHostile is what the inbox and a read-only card show of hostile text.
type inboxHostile struct {
	Who      string   `json:"who"`
	Titles   []string `json:"titles"`   // the pending entries', then the decided one's
	Whats    []string `json:"whats"`    // the same
	Decided  string   `json:"decided"`  // the decided entry's outcome line, without the time
	Session  string   `json:"session"`  // the card's session line
	Progress string   `json:"progress"` // the card's waiting line
	Strange  []string `json:"strange"`  // elements or attributes the inbox and the card should not have
	RawBidi  []string `json:"rawBidi"`
	Pwned    string   `json:"pwned"`
}

// TestInboxShowsHostileTextAsText: every payload of shared/xss/xss-payloads.jsonl, and
// text with bidi controls, as the person's name and group, a session's title, a tool's
// name, a question's header, an approver's name and who decided: the inbox and the
// read-only card show each as text (bidi controls dropped), nothing runs, nothing loads
// from elsewhere, and no markup gets in. The page has no Content-Security-Policy.
func TestInboxShowsHostileTextAsText(t *testing.T) {
	cn := newCanary(t)
	payloads := xssPayloads(t, cn.srv.URL)
	texts := []string{"send_invoice \u202Egnp.exe", "\u2066isolated\u2069 \u202Aembedded\u202C \u202Bright\u202C"}
	for _, p := range payloads {
		texts = append(texts, p.P)
	}
	s := newInboxServer(t, false)
	tb := newTab(t)
	g := tb.guard(s.srv.URL + "/")
	s.open(tb, "user=alice&sessions=s1")
	for i, p := range texts {
		got := eval[inboxHostile](tb, `((p) => {
			const box = document.createElement("div");
			document.body.appendChild(box);
			const panel = AskUser.createPanel({container: box, autoFocus: false, drafts: false, lang: "en", send: () => true});
			const feed = (type, data) => panel.handle({type, sessionId: "s", data});
			const at = new Date().toISOString();
			feed("inbox", {user: p, groups: [p], decided: [{sessionId: "x", sessionTitle: p, requestId: "d", kind: "approval", what: p, outcome: "approved", by: p, at}]});
			feed("ask_user_questions", {requestId: "q", sessionTitle: p, askedAt: at, questions: [{question: "Which?", header: p, multiSelect: false, options: [{label: "a"}, {label: "b"}]}]});
			feed("tool_approval", {requestId: "a", tool: p, sessionTitle: p, askedAt: at, arguments: {}, decisions: ["approve"], digest: "x",
				approvers: {names: [p], users: [p + "-other"], groups: [p + "-g"], quorum: 2, approved: [p]}});
			box.querySelector('[data-testid="inbox-toggle"]').click();
			const all = (s) => [...box.querySelectorAll(s)].map((e) => e.textContent);
			const strange = [];
			const tags = new Set(["DIV", "SECTION", "P", "SPAN", "CODE", "PRE", "STRONG", "BUTTON", "H2", "UL", "LI"]);
			const attrs = /^(class|id|role|tabindex|dir|lang|hidden|type|data-[a-z-]+|aria-[a-z]+)$/;
			for (const e of box.querySelectorAll('[data-testid="inbox-bar"], [data-testid="inbox"], [data-testid="approval"]')) {
				for (const n of [e, ...e.querySelectorAll("*")]) {
					if (!tags.has(n.tagName)) strange.push(n.outerHTML.slice(0, 120));
					for (const a of n.attributes) if (!attrs.test(a.name)) strange.push(n.tagName + " " + a.name);
				}
			}
			const rawBidi = [];
			const w = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
			while (w.nextNode()) if (/[\u202a-\u202e\u2066-\u2069]/.test(w.currentNode.data)) rawBidi.push(w.currentNode.data);
			const card = box.querySelector('[data-testid="approval"]');
			const out = {
				who: box.querySelector('[data-testid="inbox-who"]').textContent,
				titles: all(".askuser-inbox-title"), whats: all(".askuser-inbox-what"),
				decided: box.querySelector('[data-testid="inbox-decided-item"] .askuser-inbox-meta').textContent.split(" \u00b7 ")[0],
				session: card.querySelector('[data-testid="approval-session"]').textContent,
				progress: card.querySelector('[data-testid="approval-progress"]').textContent,
				strange, rawBidi, pwned: top.__pwn === undefined ? "" : String(top.__pwn),
			};
			panel.destroy();
			box.remove();
			return out;
		})(`+js(p)+`)`)
		what := fmt.Sprintf("text %d %q", i, p)
		if i >= 2 {
			what = fmt.Sprintf("payload %s (%s)", payloads[i-2].ID, payloads[i-2].Class)
		}
		x := shownText(p)
		if got.Pwned != "" || len(got.Strange) > 0 || len(got.RawBidi) > 0 {
			t.Errorf("%s: pwned %q, elements or attributes %q, raw bidi controls %q", what, got.Pwned, got.Strange, got.RawBidi)
		}
		want := inboxHostile{Who: "Signed in as " + x + " (" + x + ")", Titles: []string{x, x, x}, Whats: []string{x, x, x},
			Decided: "Approved by " + x, Session: "Session: " + x, Progress: "Waiting for 1 more approval from " + x + ": " + x + " approved."}
		got.Strange, got.RawBidi, got.Pwned = nil, nil, ""
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: shown as %+v\nwant %+v", what, got, want)
		}
		if dialogs, foreign := g.taken(); len(dialogs) > 0 || len(foreign) > 0 {
			t.Errorf("%s: dialogs %q, requests to elsewhere %q", what, dialogs, foreign)
		}
		if hits := cn.taken(); len(hits) > 0 {
			t.Errorf("%s: the attacker's server was reached: %q", what, hits)
		}
	}
}
