package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/chromedp"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
)

// linkServer is a hub in this process whose link pages are served on a server of their
// own, for tests that put a call of their choosing on an action link's page.
type linkServer struct {
	d     *askuser.Dispatcher
	links *notify.Links
	srv   *httptest.Server
}

func newLinkServer(t *testing.T, csp bool) *linkServer {
	t.Helper()
	ls := &linkServer{links: &notify.Links{Secrets: [][]byte{[]byte(notifySecret)}}}
	hub := wshub.New(&wshub.Options{Links: ls.links, Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return nil, errors.New("links only")
	}})
	ls.d = askuser.New(hub, &askuser.Options{Policy: &askuser.Policy{}})
	var h http.Handler = hub.LinkHandler()
	if !csp {
		h = withoutCSP(h)
	}
	mux := http.NewServeMux()
	mux.Handle("/links/", http.StripPrefix("/links", h))
	ls.srv = httptest.NewServer(mux)
	ls.links.BaseURL = ls.srv.URL + "/links"
	t.Cleanup(func() {
		ls.d.Close()
		_ = hub.Close()
		ls.srv.Close()
	})
	return ls
}

// approval makes call pending, as o describes it, and returns its approve link; the call
// ends with the test.
func (ls *linkServer) approval(t *testing.T, call askuser.ToolCall, o askuser.ApprovalOptions) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan askuser.ApprovalResult, 1)
	go func() { done <- ls.d.Approve(ctx, call, &o) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(actionTimeout)
	for !slices.ContainsFunc(askusertest.Approvals(ls.d, call.Session), func(a wire.ApprovalData) bool { return a.RequestID == call.ID }) {
		select {
		case r := <-done:
			t.Fatalf("the approval of %q ended at once: %+v", call.Name, r)
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the approval of %q is not pending", call.Name)
		}
	}
	return ls.links.Action(call.Session, call.ID, wire.DecisionApprove, time.Now().Add(time.Hour))
}

// linkPage is what an action link's confirmation page shows and holds, once its script
// has shown the call (with every folded value opened).
type linkPage struct {
	Tool        string   `json:"tool"`
	Description string   `json:"description"`
	Keys        []string `json:"keys"`
	Values      []string `json:"values"`
	Raw         string   `json:"raw"`       // the arguments when they are not JSON
	Strange     []string `json:"strange"`   // elements or attributes the page should not have
	RawBidi     []string `json:"rawBidi"`   // texts of the page with a bidi control in them
	Pwned       string   `json:"pwned"`     // top.__pwn, written by the payloads
	Violations  []string `json:"csp"`       // CSP violations
	FormShown   bool     `json:"formShown"` // the form that decides
}

// readLinkPage waits for the call on the confirmation page and reads the page.
func (tb *tab) readLinkPage() linkPage {
	tb.t.Helper()
	waitFor[bool](tb, "the call on the confirmation page", `!!document.querySelector('#askuser-link-call [data-testid="approval"]')`)
	return eval[linkPage](tb, `(() => {
		const call = document.querySelector("#askuser-link-call");
		call.querySelectorAll('[data-testid="json-fold"]').forEach((b) => b.click());
		const text = (s) => { const e = call.querySelector(s); return e ? e.textContent : ""; };
		const strange = [];
		// The call: the card's own elements, with their own attributes, and text.
		const tags = new Set(["DIV", "SECTION", "P", "SPAN", "CODE", "PRE", "STRONG", "BUTTON"]);
		const attrs = /^(class|id|role|tabindex|dir|lang|hidden|type|data-[a-z-]+|aria-[a-z]+)$/;
		for (const e of call.querySelectorAll("*")) {
			if (!tags.has(e.tagName)) strange.push(e.outerHTML.slice(0, 120));
			for (const a of e.attributes) if (!attrs.test(a.name)) strange.push(e.tagName + " " + a.name + "=" + a.value.slice(0, 60));
		}
		// Around it, the page's own: nothing added, no handler, no script but the page's.
		const own = new Set(["MAIN", "H1", "P", "DIV", "NOSCRIPT", "FORM", "INPUT", "BUTTON", "SCRIPT", "SPAN"]);
		for (const e of document.body.querySelectorAll("*")) {
			if (call.contains(e)) continue;
			if (!own.has(e.tagName)) strange.push(e.outerHTML.slice(0, 120));
			for (const a of e.attributes) if (/^on/i.test(a.name)) strange.push(e.tagName + " " + a.name);
			if (e.tagName === "SCRIPT" && !/\/assets\/(panel|link)\.js$/.test(e.src)) strange.push("script " + e.src);
		}
		for (const e of document.head.querySelectorAll("*")) {
			if (!["META", "TITLE", "LINK"].includes(e.tagName) || e.httpEquiv || (e.href && !e.href.startsWith(location.origin))) strange.push(e.outerHTML.slice(0, 120));
		}
		if (document.baseURI !== location.href) strange.push("base " + document.baseURI);
		const rawBidi = [];
		const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		while (w.nextNode()) if (/[\u202a-\u202e\u2066-\u2069]/.test(w.currentNode.data)) rawBidi.push(w.currentNode.data);
		if (/[\u202a-\u202e\u2066-\u2069]/.test(document.title)) rawBidi.push("title " + document.title);
		const strs = [...call.querySelectorAll(".askuser-json-str")].map((s) => (s.querySelector(".askuser-json-fold-body") || s).textContent);
		return {
			tool: text('[data-testid="approval-tool"]'),
			description: text('[data-testid="approval-description"]'),
			keys: [...call.querySelectorAll(".askuser-json-key")].map((k) => k.textContent),
			values: strs,
			raw: text('[data-testid="approval-raw"]'),
			strange, rawBidi,
			pwned: top.__pwn === undefined ? "" : String(top.__pwn),
			csp: window.__csp || [],
			formShown: !document.querySelector("form").hidden,
		};
	})()`)
}

// cut returns the longest start of s of at most n bytes that is whole characters.
func cut(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// TestActionLinkShowsHostileCallsAsText: the confirmation page of an action link, where a
// person approves a call from a phone, shows the call as the panel's card does, whatever
// the model wrote. Every payload of shared/xss/xss-payloads.jsonl, and text with bidi
// controls and invisible characters, goes in as the tool's name, as a key and a value of
// the arguments, and as the description and the server of the tool: nothing runs (no
// dialog, no write of top.__pwn), nothing loads from anywhere but the page's own server
// (every request is intercepted, and the payloads' attacker server hears nothing), no
// markup gets in, and no bidi control reaches the page's text raw: the tool's name and
// the description drop them, the arguments show them escaped (\u202e). The page is served
// without its Content-Security-Policy, so that what is tested is the page's own handling;
// one call is shown again under the policy, which must block nothing.
func TestActionLinkShowsHostileCallsAsText(t *testing.T) {
	cn := newCanary(t)
	payloads := xssPayloads(t, cn.srv.URL)
	texts := []string{
		"send_invoice \u202Egnp.exe",
		"\u2066isolated\u2069 \u202Aembedded\u202C \u202Bright\u202C \u202Doverride\u202C \u2067x\u2069 \u2068y\u2069",
		"zero\u200Bwidth\u200Cnon\u200Djoiner \u2060word\uFEFFbom \u200Emarks\u200F\u061C soft\u00ADhyphen line\u2028para\u2029",
	}
	for _, p := range payloads {
		texts = append(texts, p.P)
	}

	ls := newLinkServer(t, false)
	tb := newTab(t)
	tb.viewport(390, 844, true)
	g := tb.guard(ls.srv.URL + "/")
	session := askuser.IntSession(77)
	for i, p := range texts {
		name := cut(p, wire.MaxRequestIDBytes)
		call := askuser.ToolCall{Session: session, ID: fmt.Sprintf("x%03d", i), Name: name,
			Arguments: json.RawMessage(`{` + jsonString(p) + `:` + jsonString(p) + `}`)}
		link := ls.approval(t, call, askuser.ApprovalOptions{Tool: &askuser.Tool{Description: p}, Source: &wire.ToolSource{Server: p, Title: p}})
		tb.do("opening the confirmation page of "+call.ID, chromedp.Navigate(link))
		got := tb.readLinkPage()
		what := fmt.Sprintf("text %d %q", i, p)
		if i >= 3 {
			what = fmt.Sprintf("payload %s (%s)", payloads[i-3].ID, payloads[i-3].Class)
		}
		if got.Pwned != "" || len(got.Strange) > 0 || len(got.RawBidi) > 0 || !got.FormShown {
			t.Errorf("%s: pwned %q, elements or attributes %q, raw bidi controls %q, form shown %v", what, got.Pwned, got.Strange, got.RawBidi, got.FormShown)
		}
		if got.Tool != shownText(name) || got.Description != shownText(p) {
			t.Errorf("%s: tool %q, description %q\nwant %q, %q", what, got.Tool, got.Description, shownText(name), shownText(p))
		}
		if want := []string{shownJSONString(p)}; !slices.Equal(got.Keys, want) || !slices.Equal(got.Values, want) {
			t.Errorf("%s: keys %q, values %q\nwant %q", what, got.Keys, got.Values, want)
		}
		if dialogs, foreign := g.taken(); len(dialogs) > 0 || len(foreign) > 0 {
			t.Errorf("%s: dialogs %q, requests to elsewhere %q", what, dialogs, foreign)
		}
		if hits := cn.taken(); len(hits) > 0 {
			t.Errorf("%s: the attacker's server was reached: %q", what, hits)
		}
	}

	// The example, as a person reads it: the name without the override, the
	// arguments with it escaped; and arguments that are not JSON, as their text.
	tb.do("opening the first page again", chromedp.Navigate(ls.links.Action(session, "x000", wire.DecisionApprove, time.Now().Add(time.Hour))))
	got := tb.readLinkPage()
	if got.Tool != "send_invoice gnp.exe" || !slices.Equal(got.Keys, []string{`"send_invoice \u202egnp.exe"`}) {
		t.Errorf("the bidi example shows as %q, %q", got.Tool, got.Keys)
	}
	bad := askuser.ToolCall{Session: session, ID: "not-json", Name: "send_invoice", Arguments: json.RawMessage("{to: \u202Egnp.exe\u200B}")}
	tb.do("opening the page of arguments that are not JSON", chromedp.Navigate(ls.approval(t, bad, askuser.ApprovalOptions{})))
	if got := tb.readLinkPage(); got.Raw != `{to: \u202egnp.exe\u200b}` || len(got.RawBidi) > 0 {
		t.Errorf("arguments that are not JSON show as %q (raw bidi %q)", got.Raw, got.RawBidi)
	}

	// Under the page's own policy, the page shows the call and the policy blocks nothing.
	withCSP := newLinkServer(t, true)
	g.allow(withCSP.srv.URL + "/")
	call := askuser.ToolCall{Session: session, ID: "csp", Name: texts[0], Arguments: json.RawMessage(`{"file":` + jsonString(texts[0]) + `}`)}
	tb.do("opening a page with its policy", chromedp.Navigate(withCSP.approval(t, call, askuser.ApprovalOptions{Tool: &askuser.Tool{Description: payloads[0].P}})))
	got = tb.readLinkPage()
	if got.Tool != "send_invoice gnp.exe" || !got.FormShown || len(got.Violations) > 0 || len(got.Strange) > 0 {
		t.Errorf("under its policy the page shows %+v", got)
	}
	if dialogs, foreign := g.taken(); len(dialogs) > 0 || len(foreign) > 0 {
		t.Errorf("under its policy: dialogs %q, requests to elsewhere %q", dialogs, foreign)
	}
}
