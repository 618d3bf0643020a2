package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/store"
)

// receiver is a real HTTP receiver that checks each delivery's signature, as a host's
// would, and answers with the statuses it is given, then 200.
type receiver struct {
	t        *testing.T
	mu       sync.Mutex
	statuses []int
	bodies   [][]byte
	bad      int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := notify.Verify(secret, r.Header.Get(notify.SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
		rc.bad++
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	rc.bodies = append(rc.bodies, body)
	if len(rc.statuses) > 0 {
		s := rc.statuses[0]
		rc.statuses = rc.statuses[1:]
		w.WriteHeader(s)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) got() [][]byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([][]byte(nil), rc.bodies...)
}

// TestWebhook: a notice of an approval is posted, signed, with its answer link and its
// action links; a receiver that fails twice gets it on the third attempt.
func TestWebhook(t *testing.T) {
	rc := &receiver{t: t, statuses: []int{500, 503}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	links := &notify.Links{Secrets: [][]byte{secret}, BaseURL: "https://agent.example/askuser/links"}
	w := &notify.Webhook{URL: srv.URL, Secret: secret, Links: links, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
	exp := time.Now().Add(time.Minute).UTC().Truncate(time.Second)
	err := w.Notify(context.Background(), notify.Notice{Kind: store.KindApproval, Session: askuser.IntSession(42), RequestID: "call_9", Title: "delete_branch", ExpiresAt: exp, Decisions: []string{"approve", "deny", "edit"}})
	if err != nil {
		t.Fatal(err)
	}
	bodies := rc.got()
	if len(bodies) != 3 || rc.bad != 0 {
		t.Fatalf("%d deliveries, %d badly signed; want 3 good ones", len(bodies), rc.bad)
	}
	var b map[string]any
	if err := json.Unmarshal(bodies[2], &b); err != nil {
		t.Fatal(err)
	}
	if b["type"] != "tool_approval" || b["sessionId"] != 42.0 || b["requestId"] != "call_9" || b["title"] != "delete_branch" || b["expiresAt"] != exp.Format(time.RFC3339) {
		t.Fatalf("body %s", bodies[2])
	}
	c, err := links.Check(notify.TokenOf(b["url"].(string)), time.Now())
	if err != nil || c.RequestID != "call_9" || c.Decision != "" {
		t.Fatalf("the answer link: %+v, %v", c, err)
	}
	actions := b["actions"].([]any)
	if len(actions) != 2 {
		t.Fatalf("actions %v", actions)
	}
	for i, want := range []string{"approve", "deny"} {
		a := actions[i].(map[string]any)
		c, err := links.Check(notify.TokenOf(a["url"].(string)), time.Now())
		if a["decision"] != want || err != nil || c.Decision != want {
			t.Fatalf("action %d: %v, %+v, %v", i, a, c, err)
		}
	}
}

// TestWebhookQuestion: a question's notice has no actions.
func TestWebhookQuestion(t *testing.T) {
	w := &notify.Webhook{Secret: secret, Links: &notify.Links{Secrets: [][]byte{secret}, BaseURL: "https://h"}}
	b := w.BodyOf(notify.Notice{Kind: store.KindQuestion, Session: askuser.StringSession("s"), RequestID: "q", Title: "Which?", ExpiresAt: time.Now().Add(time.Minute)})
	if b.Type != "ask_user_questions" || b.URL == "" || b.Actions != nil {
		t.Fatalf("body %+v", b)
	}
}

// TestWebhookGivesUp: a receiver that never takes it is tried until the context ends,
// each attempt bounded, and Notify then returns.
func TestWebhookGivesUp(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	w := &notify.Webhook{URL: srv.URL, Secret: secret, AttemptTimeout: 50 * time.Millisecond, MinBackoff: time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- w.Notify(ctx, notify.Notice{Kind: store.KindQuestion, Session: askuser.IntSession(1), RequestID: "q", ExpiresAt: time.Now().Add(time.Minute)})
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a receiver that never answered took it")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Notify did not give up when its context ended")
	}
}

// TestVerifyRefuses: a changed body, another secret, and a delivery outside the
// tolerance (a replay) are refused.
func TestVerifyRefuses(t *testing.T) {
	body := []byte(`{"requestId":"q"}`)
	now := time.Now()
	h := notify.Sign(secret, now, body)
	if err := notify.Verify(secret, h, body, now, time.Minute); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"body":    notify.Verify(secret, h, []byte(`{"requestId":"r"}`), now, time.Minute),
		"secret":  notify.Verify([]byte("another secret of thirty-two bytes!"), h, body, now, time.Minute),
		"replay":  notify.Verify(secret, h, body, now.Add(6*time.Minute), 5*time.Minute),
		"garbage": notify.Verify(secret, "nonsense", body, now, time.Minute),
	} {
		if err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}

// TestWebhookPeople: an escalation step's notice carries, beside the links of no person,
// links of each user it names that act as them.
func TestWebhookPeople(t *testing.T) {
	links := &notify.Links{Secrets: [][]byte{secret}, BaseURL: "https://h/links"}
	w := &notify.Webhook{Secret: secret, Links: links}
	b := w.BodyOf(notify.Notice{Kind: store.KindApproval, Session: askuser.IntSession(1), RequestID: "drop1", Title: "drop_database",
		ExpiresAt: time.Now().Add(time.Minute), Decisions: []string{"approve", "deny", "edit"}, To: []string{"lead", "oncall"}, Users: []string{"lead"}})
	if b.URL == "" || len(b.Actions) != 2 || len(b.People) != 1 || b.People[0].User != "lead" || len(b.People[0].Actions) != 2 {
		t.Fatalf("body %+v", b)
	}
	check := func(link, user, decision string) {
		t.Helper()
		c, err := links.Check(notify.TokenOf(link), time.Now())
		if err != nil || c.User != user || c.Decision != decision || c.RequestID != "drop1" {
			t.Fatalf("%s: %+v, %v; want user %q, decision %q", link, c, err, user, decision)
		}
	}
	check(b.URL, "", "")
	check(b.Actions[0].URL, "", "approve")
	check(b.People[0].URL, "lead", "")
	check(b.People[0].Actions[0].URL, "lead", "approve")
	check(b.People[0].Actions[1].URL, "lead", "deny")
	if raw, _ := json.Marshal(w.BodyOf(notify.Notice{Kind: store.KindApproval, RequestID: "x", ExpiresAt: time.Now().Add(time.Minute)})); strings.Contains(string(raw), "people") {
		t.Fatalf("a notice of no step has people: %s", raw)
	}
}
