package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
	"github.com/coder/websocket"
)

// dialAs connects a device of session as the person user ("" for a page without ?as=).
func dialAs(t *testing.T, hs interface{ URL() string }, session, user string) *device {
	t.Helper()
	q := url.Values{"session": {session}}
	if user != "" {
		q.Set("as", user)
	}
	return dialURL(t, hs.URL()+"/ws?"+q.Encode())
}

// dialURL connects a device at u.
func dialURL(t *testing.T, u string) *device {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &device{t: t, ws: ws}
}

// peopleServer is a demo server and its URL, for dialAs.
type peopleServer struct {
	srv *Server
	url string
}

func (p peopleServer) URL() string { return p.url }

func newPeopleServer(t *testing.T, escalateAfter time.Duration) peopleServer {
	t.Helper()
	srv, hs := newTestServer(t, &Options{Timeout: time.Minute, EscalateAfter: escalateAfter})
	return peopleServer{srv, hs.URL}
}

// event decodes a raw event.
func event(t *testing.T, msg []byte) wire.Event {
	t.Helper()
	ev, err := wire.ParseEvent(msg)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// decodeAs decodes an event's data into a T.
func decodeAs[T any](t *testing.T, msg []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(event(t, msg).Data, &v); err != nil {
		t.Fatalf("%s: %v", msg, err)
	}
	return v
}

// decide sends a decision on the approval a of session from d.
func (d *device) decide(session string, a wire.ApprovalData, decision string) {
	d.t.Helper()
	b, err := json.Marshal(map[string]any{"type": wire.EventApprovalResult, "sessionId": wire.ParseSessionID(session),
		"data": wire.ApprovalResultData{RequestID: a.RequestID, Decision: decision, Digest: a.Digest}})
	if err != nil {
		d.t.Fatal(err)
	}
	d.send(string(b))
}

// nextOf returns the next event whose type is one of types, skipping others.
func (d *device) nextOf(types ...string) wire.Event {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, msg, err := d.ws.Read(ctx)
		if err != nil {
			d.t.Fatalf("waiting for one of %v: %v", types, err)
		}
		if ev := event(d.t, msg); slices.Contains(types, ev.Type) {
			return ev
		}
	}
}

// TestThreePeople is the three-person demo: the developer's agent calls drop_database;
// the approval comes to the pages of alice and bob, the DBAs, each of a session of its
// own; the developer may not decide it; alice's approval is one of the two it needs, and
// bob's runs it.
func TestThreePeople(t *testing.T) {
	ps := newPeopleServer(t, time.Hour)
	dev := dialAs(t, ps, "1001", "")
	alice := dialAs(t, ps, "alice-page", "alice")
	bob := dialAs(t, ps, "bob-page", "bob")

	// A device is first told who it is.
	if in := decodeAs[wire.InboxData](t, alice.next(wire.EventInbox)); in.User != "alice" || fmt.Sprint(in.Groups) != "[dba]" {
		t.Fatalf("alice's inbox = %+v", in)
	}
	if in := decodeAs[wire.InboxData](t, dev.next(wire.EventInbox)); in.User != Developer || len(in.Groups) != 0 {
		t.Fatalf("the developer's inbox = %+v", in)
	}

	dev.send(`{"type":"user_message","data":{"text":"/drop"}}`)
	call := decodeAs[map[string]any](t, dev.next(EventToolCall))
	if call["name"] != toolDropDatabase {
		t.Fatalf("tool_call = %v", call)
	}
	mine := decodeAs[wire.ApprovalData](t, dev.next(wire.EventApproval))
	for name, d := range map[string]*device{"alice": alice, "bob": bob} {
		ev := event(t, d.next(wire.EventApproval))
		var a wire.ApprovalData
		if err := json.Unmarshal(ev.Data, &a); err != nil {
			t.Fatal(err)
		}
		if ev.SessionID.String() != "1001" || a.RequestID != call["requestId"] || a.Digest != mine.Digest {
			t.Fatalf("%s's page got %s of session %s", name, a.RequestID, ev.SessionID)
		}
		if a.Approvers == nil || a.Approvers.Quorum != 2 || fmt.Sprint(a.Approvers.Groups) != "[dba]" ||
			a.SessionTitle != "dev's agent, session 1001" || a.AskedAt.IsZero() {
			t.Fatalf("%s's page was shown %+v (approvers %+v)", name, a, a.Approvers)
		}
	}

	// The developer's page shows it, but the developer does not decide it.
	dev.decide("1001", mine, wire.DecisionApprove)
	if msg := dev.next(wire.EventError); !strings.Contains(string(msg), `"code":"not_approver"`) {
		t.Fatalf("the developer's approval: %s", msg)
	}

	// Alice's approval is one of two: the call still waits.
	alice.decide("1001", mine, wire.DecisionApprove)
	ev := bob.nextOf(wire.EventApprovalProgress, wire.EventApprovalResolved)
	if p := decodeAs[wire.ApprovalProgressData](t, mustEncode(t, ev)); ev.Type != wire.EventApprovalProgress || fmt.Sprint(p.Approved) != "[alice]" {
		t.Fatalf("after alice's approval bob's page got %s %s", ev.Type, ev.Data)
	}
	if n := len(askusertest.Approvals(ps.srv.Dispatcher(), wire.ParseSessionID("1001"))); n != 1 {
		t.Fatalf("after alice's approval, %d approvals pending", n)
	}

	// Bob's is the second: it runs, and the developer's agent says who approved it.
	bob.decide("1001", mine, wire.DecisionApprove)
	res := decodeAs[map[string]any](t, dev.next(EventToolResult))
	if res["content"] != `{"dropped":"staging"}` || res["outcome"] != "approved" || res["isError"] != false {
		t.Fatalf("drop_database = %v", res)
	}
	for {
		text := decodeAs[map[string]any](t, dev.next(EventAgentMessage))["text"].(string)
		if strings.HasPrefix(text, "bob approved drop_database") {
			break
		}
	}
	for name, d := range map[string]*device{"alice": alice, "bob": bob} {
		if r := decodeAs[wire.ApprovalResolvedData](t, d.next(wire.EventApprovalResolved)); r.By != "bob" || r.Outcome != wire.Approved {
			t.Fatalf("%s's page: resolved %+v", name, r)
		}
	}
}

// TestThreePeopleEscalate: when the DBAs do not decide in time, the approval comes to
// the lead's page too, and the lead decides it.
func TestThreePeopleEscalate(t *testing.T) {
	ps := newPeopleServer(t, 50*time.Millisecond)
	dev := dialAs(t, ps, "2002", "")
	lead := dialAs(t, ps, "lead-page", "lead")
	alice := dialAs(t, ps, "alice-page", "alice")
	dev.send(`{"type":"user_message","data":{"text":"/drop"}}`)
	mine := decodeAs[wire.ApprovalData](t, dev.next(wire.EventApproval))
	decodeAs[wire.ApprovalData](t, alice.next(wire.EventApproval))

	a := decodeAs[wire.ApprovalData](t, lead.next(wire.EventApproval))
	if a.RequestID != mine.RequestID {
		t.Fatalf("the lead's page got %s, not %s", a.RequestID, mine.RequestID)
	}
	// Shown as escalation made it, or told of the escalation after: the lead is an
	// approver now.
	if p := decodeAs[wire.ApprovalProgressData](t, lead.next(wire.EventApprovalProgress)); !slices.Contains(p.Users, Lead) {
		t.Fatalf("the lead's page: progress %+v", p)
	}
	lead.decide("2002", mine, wire.DecisionDeny)
	res := decodeAs[map[string]any](t, dev.next(EventToolResult))
	if res["outcome"] != "denied" || res["isError"] != true {
		t.Fatalf("drop_database = %v", res)
	}
	for {
		text := decodeAs[map[string]any](t, dev.next(EventAgentMessage))["text"].(string)
		if strings.HasPrefix(text, "lead denied drop_database") {
			break
		}
	}
	if r := decodeAs[wire.ApprovalResolvedData](t, alice.next(wire.EventApprovalResolved)); r.By != Lead {
		t.Fatalf("alice's page: resolved %+v", r)
	}
}

// TestPeopleRefusals: ?as= takes a plain name of at most 32 characters; the production
// database is never asked about.
func TestPeopleRefusals(t *testing.T) {
	ps := newPeopleServer(t, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, as := range []string{"a b", strings.Repeat("x", 33), "<b>", "é"} {
		u := ps.url + "/ws?" + url.Values{"session": {"1"}, "as": {as}}.Encode()
		if _, resp, err := websocket.Dial(ctx, u, nil); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("as=%q: err %v; want 403", as, err)
		}
	}
	carol := dialAs(t, ps, "3003", "carol.k-1_x")
	if in := decodeAs[wire.InboxData](t, carol.next(wire.EventInbox)); in.User != "carol.k-1_x" || len(in.Groups) != 0 {
		t.Fatalf("carol's inbox = %+v", in)
	}
	carol.send(`{"type":"user_message","data":{"text":"/tool drop_database {\"name\":\"production\"}"}}`)
	res := decodeAs[map[string]any](t, carol.next(EventToolResult))
	if res["outcome"] != "denied" || res["rule"] != "never_drop_production" {
		t.Fatalf("drop_database of production = %v", res)
	}
}

func mustEncode(t *testing.T, ev wire.Event) []byte {
	t.Helper()
	b, err := ev.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// syncBuffer is a bytes.Buffer that may be written and read concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestThreePeopleLeadLink: with notifications on, the escalation's notice carries links
// that act as the lead (logged as the demo logs every link); the lead's approval through
// one counts, and alice's makes the two.
func TestThreePeopleLeadLink(t *testing.T) {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer hook.Close()
	hs := httptest.NewUnstartedServer(nil) // its address first, for the links
	o := &Options{Page: testPage, Timeout: time.Minute, EscalateAfter: 50 * time.Millisecond}
	var log syncBuffer
	nf := NotifyFlags{Webhook: hook.URL, After: time.Hour}
	if err := nf.Apply(o, hs.Listener.Addr().String(), &log); err != nil {
		t.Fatal(err)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = srv
	hs.Start()
	t.Cleanup(func() {
		_ = srv.Close()
		hs.Close()
	})
	ps := peopleServer{srv, hs.URL}

	dev := dialAs(t, ps, "4004", "")
	alice := dialAs(t, ps, "alice-page", "alice")
	dev.send(`{"type":"user_message","data":{"text":"/drop"}}`)
	mine := decodeAs[wire.ApprovalData](t, dev.next(wire.EventApproval))
	approve := regexp.MustCompile(`as lead: approve: (\S+)`)
	var link string
	for deadline := time.Now().Add(10 * time.Second); link == ""; time.Sleep(5 * time.Millisecond) {
		if m := approve.FindStringSubmatch(log.String()); m != nil {
			link = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no link for the lead was logged:\n%s", log.String())
		}
	}
	_, page := get(t, link)
	form := regexp.MustCompile(`name="form" value="([^"]+)"`).FindStringSubmatch(page)
	if form == nil {
		t.Fatalf("the lead's confirmation page:\n%s", page)
	}
	req, _ := http.NewRequest("POST", link, strings.NewReader(url.Values{"form": {form[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the lead's approval: %d %s", resp.StatusCode, b)
	}
	if p := decodeAs[wire.ApprovalProgressData](t, alice.next(wire.EventApprovalProgress)); !slices.Contains(p.Approved, Lead) {
		// The escalation's own progress comes first: the lead's approval after it.
		if p = decodeAs[wire.ApprovalProgressData](t, alice.next(wire.EventApprovalProgress)); !slices.Contains(p.Approved, Lead) {
			t.Fatalf("alice's page: progress %+v", p)
		}
	}
	alice.decide("4004", mine, wire.DecisionApprove)
	if res := decodeAs[map[string]any](t, dev.next(EventToolResult)); res["content"] != `{"dropped":"staging"}` {
		t.Fatalf("drop_database = %v", res)
	}
}

func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}
