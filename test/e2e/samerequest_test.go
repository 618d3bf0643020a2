package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
)

// approveWith asks for the approval of tool with args in session, by approvers (nil:
// anyone of the session), and waits until it is pending; its result goes to the channel.
func (s *inboxServer) approveWith(t *testing.T, session, id, tool, args string, approvers *askuser.Approvers) <-chan askuser.ApprovalResult {
	t.Helper()
	out := make(chan askuser.ApprovalResult, 1)
	sid := askuser.StringSession(session)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		out <- s.d.Approve(s.ctx, askuser.ToolCall{Session: sid, ID: id, Name: tool, Arguments: json.RawMessage(args)},
			&askuser.ApprovalOptions{Approvers: approvers})
	}()
	deadline := time.Now().Add(actionTimeout)
	for !slices.ContainsFunc(askusertest.Approvals(s.d, sid), func(a wire.ApprovalData) bool { return a.RequestID == id }) {
		if time.Now().After(deadline) {
			t.Fatalf("the approval %s of %s is not pending", id, session)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return out
}

// mark gives the one element sel selects whose text has text the attribute
// data-e2e-target (and takes it from every other), for a click on it; it waits for it.
func (tb *tab) mark(what, sel, text string) {
	tb.t.Helper()
	waitFor[bool](tb, what, `(() => {
		document.querySelectorAll("[data-e2e-target]").forEach((n) => n.removeAttribute("data-e2e-target"));
		const all = [...document.querySelectorAll(`+js(sel)+`)].filter((n) => n.textContent.includes(`+js(text)+`));
		if (all.length !== 1) return false;
		all[0].setAttribute("data-e2e-target", "");
		return true;
	})()`)
}

// noResult fails the test when ch already holds a result: the request must still wait.
func noResult[T any](t *testing.T, what string, ch <-chan T) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s ended %+v; it must still wait", what, r)
	default:
	}
}

// TestApprovalSameRequestIDAcrossSessions: request ids are unique only within a session.
// Alice's page, connected for s1 as a member of dba, holds s1's call_1 (drop_database of
// "dev") and s3's call_1 (drop_database of "prod", routed to her because its approvers
// name dba): two cards, each with its own arguments and session; picked in the inbox,
// each is shown alone. Approving the prod one
// approves s3's call alone (it carried s3's session and digest) and leaves the dev card
// as it was, with the denial begun in it, after a reload too; approving that one then
// approves s1's.
func TestApprovalSameRequestIDAcrossSessions(t *testing.T) {
	s := newInboxServer(t, false)
	tb := newTab(t)
	s.open(tb, "user=alice&groups=dba&sessions=s1")
	dev := s.approveWith(t, "s1", "call_1", "drop_database", `{"db":"dev"}`, nil)
	waitFor[bool](tb, "the dev card", `document.querySelectorAll('[data-testid="approval"]').length === 1`)
	prod := s.approveWith(t, "s3", "call_1", "drop_database", `{"db":"prod"}`, &askuser.Approvers{Groups: []string{"dba"}})

	modes := `[...document.querySelectorAll('[data-testid="approval"]')].map((c) => c.dataset.mode)`
	cards := `[...document.querySelectorAll('[data-testid="approval"]')].map((c) =>
		c.dataset.requestId + " | " + c.querySelector('[data-testid="approval-session"]').textContent + " | " +
		c.querySelector('[data-testid="approval-arguments"]').textContent.replace(/\s+/g, ""))`
	want := []string{`call_1 | Session: Onboarding | {"db":"dev"}`, `call_1 | Session: Billing db | {"db":"prod"}`}
	waitFor[bool](tb, "two cards", `document.querySelectorAll('[data-testid="approval"]').length === 2`)
	if got := eval[[]string](tb, cards); !slices.Equal(got, want) {
		t.Fatalf("the cards are\n%q\nwant\n%q", got, want)
	}

	// Picked in the inbox, the prod one is shown alone.
	tb.do("opening the inbox", chromedp.Click(chromedp.CSS(`[data-testid="inbox-toggle"]`)))
	tb.mark("prod in the inbox", `[data-testid="inbox-item"]`, "Billing db")
	tb.do("picking prod", chromedp.Click(chromedp.CSS(`[data-e2e-target]`)))
	waitFor[bool](tb, "one card shown", `[...document.querySelectorAll('[data-testid="approval"]')].filter((n) => n.getClientRects().length).length === 1`)
	if got := eval[string](tb, `[...document.querySelectorAll('[data-testid="approval"]')].find((n) => n.getClientRects().length)
		.querySelector('[data-testid="approval-arguments"]').textContent.replace(/\s+/g, "")`); got != `{"db":"prod"}` {
		t.Errorf("with prod picked in the inbox the card shown is %s", got)
	}
	tb.do("closing the inbox", chromedp.Click(chromedp.CSS(`[data-testid="inbox-toggle"]`)))

	// A denial begun on the dev card is its draft alone.
	tb.mark("dev's card", `[data-testid="approval"]`, `"dev"`)
	tb.do("beginning to deny dev", chromedp.Click(chromedp.CSS(`[data-e2e-target] [data-testid="deny"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-e2e-target] [data-testid="deny-reason"]`), "not dev"))
	if got := eval[[]string](tb, modes); !slices.Equal(got, []string{"deny", "decide"}) {
		t.Fatalf("the cards' modes are %q; want deny for dev alone", got)
	}

	tb.mark("prod's Approve", `[data-testid="approval"]`, `"prod"`)
	tb.do("approving prod", chromedp.Click(chromedp.CSS(`[data-e2e-target] [data-testid="approve"]`)))
	if r := <-prod; r.Outcome != askuser.Approved || r.Decision.By != "alice" {
		t.Fatalf("s3's call_1 ended %+v; want approved by alice", r)
	}
	waitFor[bool](tb, "prod's card gone", `document.querySelectorAll('[data-testid="approval"]').length === 1`)
	noResult(t, "s1's call_1", dev)
	if got := eval[[]string](tb, cards); !slices.Equal(got, want[:1]) {
		t.Fatalf("after prod was approved the cards are %q; want %q", got, want[:1])
	}
	if n := eval[int](tb, `document.querySelectorAll('[data-testid="approval-ended"]').length`); n != 0 {
		t.Errorf("alice's own decision left %d notes", n)
	}

	// The dev card's draft outlives the end of prod's, which shared its request id.
	tb.do("reloading", chromedp.Reload())
	waitFor[bool](tb, "the dev card again", `document.querySelectorAll('[data-testid="approval"]').length === 1`)
	if got := eval[string](tb, `document.querySelector('[data-testid="approval"]').dataset.mode + " " +
		document.querySelector('[data-testid="deny-reason"]').value`); got != "deny not dev" {
		t.Errorf("after a reload the dev card is %q; want its denial begun, \"deny not dev\"", got)
	}
	tb.do("back to the decisions", chromedp.Click(chromedp.CSS(`[data-testid="approval"] [data-testid="deny-cancel"]`)))
	tb.do("approving dev", chromedp.Click(chromedp.CSS(`[data-testid="approval"] [data-testid="approve"]`)))
	if r := <-dev; r.Outcome != askuser.Approved || r.Decision.By != "alice" {
		t.Fatalf("s1's call_1 ended %+v; want approved by alice", r)
	}
	waitFor[bool](tb, "no card left", `document.querySelectorAll('[data-testid="approval"]').length === 0`)
}

// TestQuestionSameRequestIDAcrossSessions: on a connection authorized for s1 and s2, a
// question set q_1 of each is shown, each with its own question; answering s2's answers
// it alone, and s1's stays as it was, with what was chosen in it, to be answered too.
func TestQuestionSameRequestIDAcrossSessions(t *testing.T) {
	s := newInboxServer(t, false)
	tb := newTab(t)
	s.open(tb, "user=alice&groups=dba&sessions=s1,s2")
	q1 := s.ask("s1", "q_1", "Dev db")
	waitFor[bool](tb, "s1's set", `document.querySelectorAll('[data-testid="panel"]').length === 1`)
	q2 := s.ask("s2", "q_1", "Prod db")
	forms := `[...document.querySelectorAll('[data-testid="panel"]')].map((f) =>
		f.dataset.requestId + " | " + f.querySelector('[data-testid="header"]').textContent)`
	want := []string{"q_1 | Dev db", "q_1 | Prod db"}
	waitFor[bool](tb, "two sets", `document.querySelectorAll('[data-testid="panel"]').length === 2`)
	if got := eval[[]string](tb, forms); !slices.Equal(got, want) {
		t.Fatalf("the sets are %q; want %q", got, want)
	}

	tb.mark("s1's set", `[data-testid="panel"]`, "Dev db")
	tb.do("choosing PostgreSQL in s1's set", chromedp.Click(chromedp.CSS(`[data-e2e-target] [data-testid="option"][data-index="0"] [data-testid="option-label"]`)))
	tb.mark("s2's set", `[data-testid="panel"]`, "Prod db")
	tb.do("answering s2's set", chromedp.Click(chromedp.CSS(`[data-e2e-target] [data-testid="option"][data-index="1"] [data-testid="option-label"]`)),
		chromedp.Click(chromedp.CSS(`[data-e2e-target] [data-testid="submit"]`)))
	if r := <-q2; r.Outcome != askuser.Answered || !slices.Equal(r.Answers[0].SelectedLabels, []string{"SQLite"}) {
		t.Fatalf("s2's q_1 ended %+v; want answered SQLite", r)
	}
	waitFor[bool](tb, "s2's set gone", `document.querySelectorAll('[data-testid="panel"]').length === 1`)
	noResult(t, "s1's q_1", q1)
	if got := eval[[]string](tb, forms); !slices.Equal(got, want[:1]) {
		t.Fatalf("after s2's was answered the sets are %q; want %q", got, want[:1])
	}
	if !eval[bool](tb, `document.querySelector('[data-testid="panel"] [data-testid="option"][data-index="0"] input').checked`) {
		t.Errorf("s1's set lost its choice")
	}
	tb.do("answering s1's set", chromedp.Click(chromedp.CSS(`[data-testid="panel"] [data-testid="submit"]`)))
	if r := <-q1; r.Outcome != askuser.Answered || !slices.Equal(r.Answers[0].SelectedLabels, []string{"PostgreSQL"}) {
		t.Fatalf("s1's q_1 ended %+v; want answered PostgreSQL", r)
	}
}
