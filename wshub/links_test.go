package wshub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

var linkSecret = []byte("0123456789abcdef0123456789abcdef")

// linkEnv is an env whose hub serves link pages under /links, on a server of its own.
type linkEnv struct {
	*env
	links *notify.Links
	srv   *httptest.Server
	audit chan observe.Audit
}

func newLinkEnv(t *testing.T) *linkEnv {
	t.Helper()
	return newLinkEnvWith(t, nil, nil)
}

// newLinkEnvWith is newLinkEnv with these options of the hub and the dispatcher (whose
// Links and Observer it sets).
func newLinkEnvWith(t *testing.T, hopts *wshub.Options, dopts *askuser.Options) *linkEnv {
	t.Helper()
	le := &linkEnv{links: &notify.Links{Secrets: [][]byte{linkSecret}}, audit: make(chan observe.Audit, 8)}
	var ho wshub.Options
	if hopts != nil {
		ho = *hopts
	}
	var do askuser.Options
	if dopts != nil {
		do = *dopts
	}
	ho.Links, do.Observer = le.links, observe.Hooks{OnAudit: func(a observe.Audit) { le.audit <- a }}
	le.env = newEnv(t, &ho, &do)
	mux := http.NewServeMux()
	mux.Handle("/ws", le.hub)
	mux.Handle("/links/", http.StripPrefix("/links", le.hub.LinkHandler()))
	le.srv = httptest.NewServer(mux)
	t.Cleanup(le.srv.Close)
	le.links.BaseURL = le.srv.URL + "/links"
	return le
}

func (le *linkEnv) get(t *testing.T, link string) (*http.Response, string) {
	t.Helper()
	resp, err := le.client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// dialLink opens the WebSocket of an answer link's page.
func (le *linkEnv) dialLink(t *testing.T, link string) *device {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	u := "ws" + strings.TrimPrefix(link, "http") + "/ws"
	ws, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: le.client})
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	if resp.Body != nil {
		resp.Body.Close()
	}
	<-le.connected
	ws.SetReadLimit(-1)
	dv := &device{t: t, ws: ws, events: make(chan wire.Event, 64), done: make(chan struct{})}
	t.Cleanup(func() { ws.CloseNow(); <-dv.done })
	dv.start()
	return dv
}

// TestAnswerLink: an answer link's page serves the panel, with headers that leak
// nothing; its socket shows that one request alone and takes its answer; once it has
// ended, the page says how and offers nothing.
func TestAnswerLink(t *testing.T) {
	le := newLinkEnv(t)
	s := askuser.IntSession(31)
	res := le.ask(s, "mine")
	other := le.ask(s, "other")
	for len(askusertest.Questions(le.d, s)) < 2 {
		time.Sleep(time.Millisecond)
	}
	link := le.links.Answer(s, "mine", time.Now().Add(time.Minute))
	resp, body := le.get(t, link)
	if resp.StatusCode != 200 || !strings.Contains(body, `src="../assets/panel.js"`) || !strings.Contains(body, `src="../assets/link.js"`) {
		t.Fatalf("page %d:\n%s", resp.StatusCode, body)
	}
	for h, want := range map[string]string{"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	for _, asset := range []string{"panel.js", "panel.css", "link.js", "link.css"} {
		if r, _ := le.get(t, le.links.BaseURL+"/assets/"+asset); r.StatusCode != 200 {
			t.Errorf("asset %s: %d", asset, r.StatusCode)
		}
	}

	dv := le.dialLink(t, link)
	if a := decode[wire.AskData](t, dv.next(wire.EventAsk)); a.RequestID != "mine" {
		t.Fatalf("the link's socket showed %q", a.RequestID)
	}
	// Another request of the session is not its to answer, nor a host's event to see.
	dv.answer(nil, "other")
	expectError(t, dv.next(wire.EventError), "forbidden", "other")
	_ = le.hub.Send(context.Background(), wire.Event{Type: "transcript", SessionID: s, Data: json.RawMessage(`{}`)})
	dv.answer(nil, "mine")
	if r := le.result(res); r.Outcome != askuser.Answered {
		t.Fatalf("the link's answer: %+v", r)
	}
	for ev := range dv.events {
		if ev.Type == wire.EventResolved {
			if decode[wire.ResolvedData](t, ev).RequestID != "mine" {
				t.Fatalf("the link's socket was told of another request: %s", ev.Data)
			}
			break
		}
		if ev.Type != wire.EventAsk && ev.Type != wire.EventError {
			t.Fatalf("the link's socket got %s %s", ev.Type, ev.Data)
		}
	}
	_, body = le.get(t, link)
	if !strings.Contains(body, "This question was answered.") || strings.Contains(body, "panel.js") {
		t.Fatalf("after the end the page is:\n%s", body)
	}
	le.d.CancelSession(s)
	le.result(other)
}

// TestBadLinks: a link altered, expired, of the wrong kind, or made with another secret
// gets the one 404 page, which names nothing of the request; so does its socket.
func TestBadLinks(t *testing.T) {
	le := newLinkEnv(t)
	s := askuser.StringSession("secret-project")
	res := le.ask(s, "r1")
	// Pending before the cancel below, or the cancel could come first and end nothing.
	for !(len(le.d.Pending(s)) > 0) {
		time.Sleep(time.Millisecond)
	}
	exp := time.Now().Add(time.Minute)
	good := le.links.Answer(s, "r1", exp)
	tok := notify.TokenOf(good)
	other := &notify.Links{Secrets: [][]byte{[]byte("another secret of thirty-two bytes!")}, BaseURL: le.links.BaseURL}
	flipped := "Q" // the token's fourth character, changed
	if tok[3] == 'Q' {
		flipped = "R"
	}
	bad := []string{
		le.links.BaseURL + "/a/" + tok[:len(tok)-2] + "xx",
		le.links.BaseURL + "/a/" + tok[:3] + flipped + tok[4:],
		le.links.Answer(s, "r1", time.Now().Add(-time.Second)),
		other.Answer(s, "r1", exp),
		le.links.BaseURL + "/a/" + notify.TokenOf(le.links.Action(s, "r1", "approve", exp)),
		le.links.BaseURL + "/x/" + tok,
		le.links.BaseURL + "/a/nonsense",
	}
	var first string
	for _, link := range bad {
		resp, body := le.get(t, link)
		if resp.StatusCode != 404 {
			t.Fatalf("%s: %d", link, resp.StatusCode)
		}
		if first == "" {
			first = body
		} else if body != first {
			t.Fatalf("two refusals differ:\n%s\n%s", first, body)
		}
		if strings.Contains(body, "secret-project") || strings.Contains(body, "r1") {
			t.Fatalf("the refusal names the request: %s", body)
		}
		ctx, cancel := context.WithTimeout(context.Background(), failsafe)
		_, r, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(link, "http")+"/ws", &websocket.DialOptions{HTTPClient: le.client})
		cancel()
		if err == nil || r == nil || r.StatusCode != 404 {
			t.Fatalf("the socket of %s opened (%v)", link, err)
		}
	}
	le.d.CancelSession(s)
	le.result(res)
}

// TestActionLink: a GET of an action link shows a confirmation page and decides
// nothing; only its form's POST, from the page's own origin and with its form token,
// decides, once, audited as made through a link.
func TestActionLink(t *testing.T) {
	le := newLinkEnv(t)
	s := askuser.IntSession(32)
	ch := make(chan askuser.ApprovalResult, 1)
	go func() {
		ch <- le.d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: "act", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"<b>old</b>"}`)}, nil)
	}()
	for len(askusertest.Approvals(le.d, s)) == 0 {
		time.Sleep(time.Millisecond)
	}
	link := le.links.Action(s, "act", "approve", time.Now().Add(time.Minute))
	for range 3 { // previewers and scanners fetch it, again and again
		resp, body := le.get(t, link)
		if resp.StatusCode != 200 || !strings.Contains(body, "Approve this tool call?") || !strings.Contains(body, "&lt;b&gt;old&lt;/b&gt;") {
			t.Fatalf("confirmation page %d:\n%s", resp.StatusCode, body)
		}
	}
	if len(askusertest.Approvals(le.d, s)) != 1 {
		t.Fatal("a GET decided the approval")
	}
	_, body := le.get(t, link)
	form := regexp.MustCompile(`name="form" value="([^"]+)"`).FindStringSubmatch(body)
	if form == nil {
		t.Fatalf("no form token in\n%s", body)
	}
	post := func(value, origin string) (int, string) {
		req, _ := http.NewRequest("POST", link, strings.NewReader(url.Values{"form": {value}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := le.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, _ := post("", le.srv.URL); code != 403 {
		t.Fatalf("a POST without the form token: %d", code)
	}
	if code, _ := post(form[1], "https://evil.example"); code != 403 {
		t.Fatalf("a cross-site POST: %d", code)
	}
	if len(askusertest.Approvals(le.d, s)) != 1 {
		t.Fatal("a refused POST decided the approval")
	}
	if code, body := post(form[1], le.srv.URL); code != 200 || !strings.Contains(body, "Approved.") {
		t.Fatalf("the POST: %d\n%s", code, body)
	}
	r := <-ch
	if r.Outcome != askuser.Approved || r.Decision.Via != "link" {
		t.Fatalf("approval %+v", r)
	}
	if a := <-le.audit; a.Via != "link" || a.Decision != wire.DecisionApprove {
		t.Fatalf("audit %+v", a)
	}
	// Once: the link, used again, or the approval's other link, says how it ended.
	if code, body := post(form[1], le.srv.URL); code != 200 || !strings.Contains(body, "This tool call was approved.") {
		t.Fatalf("the POST again: %d\n%s", code, body)
	}
	_, body = le.get(t, le.links.Action(s, "act", "deny", time.Now().Add(time.Minute)))
	if !strings.Contains(body, "This tool call was approved.") || strings.Contains(body, "<form") {
		t.Fatalf("the deny link after the approval:\n%s", body)
	}
}

// TestVisibility: a device that says its page is hidden stops counting as watching from
// then on; one that never says so counts while connected.
func TestVisibility(t *testing.T) {
	e := newEnv(t, nil, nil)
	s := askuser.IntSession(40)
	before := time.Now()
	if e.hub.WatchedSince(s, before) {
		t.Fatal("watched with no device")
	}
	dv := e.dial("40")
	if !e.hub.WatchedSince(s, before) {
		t.Fatal("a connected device that said nothing does not count as watching")
	}
	dv.sendRaw(`{"type":"device_visibility","data":{"visible":false}}`)
	dv.sendRaw(`{"type":"chaos_sync"}`) // any event after it: the hub has read the first
	dv.next(wire.EventError)
	hiddenAt := time.Now()
	if !e.hub.WatchedSince(s, before) {
		t.Fatal("it was visible after before")
	}
	if e.hub.WatchedSince(s, hiddenAt) {
		t.Fatal("hidden, it still counts as watching")
	}
	dv.sendRaw(`{"type":"device_visibility","data":{"visible":true}}`)
	dv.sendRaw(`{"type":"chaos_sync"}`)
	dv.next(wire.EventError)
	if !e.hub.WatchedSince(s, time.Now()) {
		t.Fatal("visible again, it does not count")
	}
	dv.sendRaw(`{"type":"device_visibility","data":{}}`)
	expectError(t, dv.next(wire.EventError), "malformed_event", "")
}

// TestActionLinkWithApprovers: a link names no person, so a call whose host named
// approvers refuses its decision, says why, and stays pending.
func TestActionLinkWithApprovers(t *testing.T) {
	le := newLinkEnv(t)
	s := askuser.IntSession(33)
	go le.d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: "act", Name: "drop_database"},
		&askuser.ApprovalOptions{Approvers: &askuser.Approvers{Users: []string{"lead"}}})
	for len(askusertest.Approvals(le.d, s)) == 0 {
		time.Sleep(time.Millisecond)
	}
	link := le.links.Action(s, "act", "approve", time.Now().Add(time.Minute))
	if code, body := le.act(t, link); code != http.StatusForbidden || !strings.Contains(body, "a link cannot decide it") {
		t.Fatalf("the POST: %d %s", code, body)
	}
	if len(askusertest.Approvals(le.d, s)) != 1 {
		t.Fatal("the link's decision changed the approval")
	}
	le.d.CancelSession(s)
}

// act opens an action link's confirmation page and POSTs its form, as the person's
// browser does, and returns the answer's status and body.
func (le *linkEnv) act(t *testing.T, link string) (int, string) {
	t.Helper()
	_, body := le.get(t, link)
	form := regexp.MustCompile(`name="form" value="([^"]+)"`).FindStringSubmatch(body)
	if form == nil {
		t.Fatalf("no form token in\n%s", body)
	}
	req, _ := http.NewRequest("POST", link, strings.NewReader(url.Values{"form": {form[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", le.srv.URL)
	resp, err := le.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// approveAsync asks for approval of a call of tool in s, with id, and returns where its
// result goes once it is pending.
func (le *linkEnv) approveAsync(t *testing.T, s askuser.SessionID, id, tool string) <-chan askuser.ApprovalResult {
	t.Helper()
	ch := make(chan askuser.ApprovalResult, 1)
	go func() {
		ch <- le.d.Approve(context.Background(), askuser.ToolCall{Session: s, ID: id, Name: tool, Arguments: json.RawMessage(`{"db":"prod"}`), Requester: "dev"}, nil)
	}()
	for len(askusertest.Approvals(le.d, s)) == 0 {
		time.Sleep(time.Millisecond)
	}
	return ch
}

// TestPersonLinks: a link made for one person acts as them. The lead's link, from the
// notice of the escalation step that names the lead, decides; bob's link is refused
// (not_approver) on an approval only alice may decide, through the action and through
// the answer page's socket, and changes nothing; bob's link decides an approval of his
// group, which the host's LinkGroups gives him; each decision is audited as the
// person's, made through a link.
func TestPersonLinks(t *testing.T) {
	ns := make(notices, 8)
	le := newLinkEnvWith(t, &wshub.Options{LinkGroups: func(_ context.Context, user string) ([]string, error) {
		return map[string][]string{"bob": {"dba"}}[user], nil
	}}, &askuser.Options{Timeout: time.Minute, Notifier: ns, NotifyAfter: time.Hour, Policy: &askuser.Policy{Ask: []askuser.Rule{
		{Tool: "drop_database", Approvers: &askuser.Approvers{Users: []string{"alice"},
			Escalate: []store.Escalation{{After: 20 * time.Millisecond, Users: []string{"lead"}}}}},
		{Tool: "drop_table", Approvers: &askuser.Approvers{Users: []string{"alice"}}},
		{Tool: "truncate", Approvers: &askuser.Approvers{Groups: []string{"dba"}}},
	}}})
	s := askuser.IntSession(34)

	// The lead, reached by the escalation step's notice.
	res := le.approveAsync(t, s, "drop1", "drop_database")
	n := nextNotice(t, ns)
	body := (&notify.Webhook{Links: le.links}).BodyOf(n)
	if fmt.Sprint(n.Users) != "[lead]" || len(body.People) != 1 || body.People[0].User != "lead" || len(body.People[0].Actions) == 0 {
		t.Fatalf("notice %+v: body %+v", n, body)
	}
	if code, page := le.act(t, body.People[0].Actions[0].URL); code != 200 || !strings.Contains(page, "Approved.") {
		t.Fatalf("the lead's action: %d %s", code, page)
	}
	if r := <-res; r.Outcome != askuser.Approved || r.Decision.By != "lead" || r.Decision.Via != "link" {
		t.Fatalf("the lead's approval: %+v", r)
	}
	if a := <-le.audit; a.By != "lead" || a.Via != "link" {
		t.Fatalf("audit %+v", a)
	}

	// Bob, on alice's approval: refused, by the action and on the answer page.
	res = le.approveAsync(t, s, "drop2", "drop_table")
	exp := time.Now().Add(time.Minute)
	if code, page := le.act(t, le.links.ActionAs(s, "drop2", wire.DecisionApprove, "bob", exp)); code != http.StatusForbidden || !strings.Contains(page, "not_approver") {
		t.Fatalf("bob's action: %d %s", code, page)
	}
	dv := le.dialLink(t, le.links.AnswerAs(s, "drop2", "bob", exp))
	a := decode[wire.ApprovalData](t, dv.next(wire.EventApproval))
	decide(dv, "drop2", wire.DecisionApprove, a.Digest, nil)
	expectError(t, dv.next(wire.EventError), "not_approver", "drop2")
	if len(askusertest.Approvals(le.d, s)) != 1 {
		t.Fatal("bob's link changed alice's approval")
	}
	le.d.CancelSession(s)
	if r := <-res; r.Outcome != askuser.Cancelled {
		t.Fatalf("alice's approval after bob's links: %+v", r)
	}

	// Bob, on his group's approval: the page's socket decides as bob, of dba.
	res = le.approveAsync(t, s, "trunc", "truncate")
	dv = le.dialLink(t, le.links.AnswerAs(s, "trunc", "bob", exp))
	a = decode[wire.ApprovalData](t, dv.next(wire.EventApproval))
	decide(dv, "trunc", wire.DecisionDeny, a.Digest, nil)
	if r := <-res; r.Outcome != askuser.Denied || r.Decision.By != "bob" || r.Decision.Via != "link" {
		t.Fatalf("bob's denial: %+v", r)
	}
}
