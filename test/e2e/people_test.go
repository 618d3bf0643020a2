package e2e

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"
)

// The three-person demo: each page is one person's (?as=), of a session of its own. The
// developer's /drop calls drop_database, which two of the DBAs (alice, bob) must
// approve, and which reaches the lead once it has waited -escalate-after.

// openAs loads the demo page of a session as the person user, and waits until its
// socket is open.
func (tb *tab) openAs(s *demoServer, session, user string) {
	tb.t.Helper()
	tb.do("loading the demo page as "+user, chromedp.Navigate(s.base+"?"+url.Values{"session": {session}, "as": {user}}.Encode()))
	waitFor[bool](tb, "the connection", `document.querySelector("#conn").dataset.state === "open"`)
}

// progressed waits until the page was told that the approval of requestID was
// approved by who.
func (tb *tab) progressed(requestID, who string) {
	tb.t.Helper()
	waitFor[bool](tb, who+"'s approval", `window.demo.events.some(e => e.type === "tool_approval_progress" &&
		e.data.requestId === `+js(requestID)+` && (e.data.approved || []).includes(`+js(who)+`))`)
}

// TestThreePeoplePages: the developer's call comes to alice's and bob's pages, each of
// its own session; alice's Approve leaves it waiting for one more, bob's runs it.
func TestThreePeoplePages(t *testing.T) {
	dev, alice, bob := newTab(t), newTab(t), newTab(t)
	dev.open(env.main, newSession())
	alice.openAs(env.main, newSession(), "alice")
	bob.openAs(env.main, newSession(), "bob")
	dev.say("/drop")
	id := dev.toolCallOf("drop_database", 0)
	for name, tb := range map[string]*tab{"alice": alice, "bob": bob} {
		if got := tb.newestApproval(""); got != id {
			t.Fatalf("%s's page shows the card of %s, not %s", name, got, id)
		}
	}
	alice.do("approving as alice", chromedp.Click(asel(id, `[data-testid="approve"]`)))
	bob.progressed(id, "alice")
	if n := eval[int](dev, `window.demo.events.filter(e => e.type === "tool_result" && e.data.requestId === `+js(id)+`).length`); n != 0 {
		t.Fatalf("drop_database ended after one approval")
	}
	bob.do("approving as bob", chromedp.Click(asel(id, `[data-testid="approve"]`)))
	if got := dev.toolResult(id); got != `{"dropped":"staging"}` {
		t.Fatalf("tool result = %s", got)
	}
	alice.approvalGone(id)
	bob.approvalGone(id)
}

// TestThreePeopleEscalation: undecided by the DBAs for -escalate-after, the call comes
// to the lead's page, and the lead's Deny ends it.
func TestThreePeopleEscalation(t *testing.T) {
	setup(t)
	srv, err := startDemo("127.0.0.1:0", "-escalate-after", "200ms")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.stop)
	dev, lead := newTab(t), newTab(t)
	dev.open(srv, newSession())
	lead.openAs(srv, newSession(), "lead")
	dev.say("/drop")
	id := dev.toolCallOf("drop_database", 0)
	if got := lead.newestApproval(""); got != id {
		t.Fatalf("the lead's page shows the card of %s, not %s", got, id)
	}
	lead.do("denying as the lead", chromedp.Click(asel(id, `[data-testid="deny"]`)), chromedp.Click(asel(id, `[data-testid="deny-confirm"]`)))
	if got := dev.toolResult(id); got != deniedResult {
		t.Fatalf("tool result = %s", got)
	}
}
