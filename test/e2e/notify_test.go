package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/askuser-go/askuser/notify"
)

// The notifications and links of the demo, as a person meets them: nobody is looking,
// the webhook comes, signed, and the link it carries opens the request alone in a
// browser, where the person decides it; the link then only says how it ended.

const notifySecret = "an e2e secret of at least thirty-two bytes"

// receiver takes the demo's webhooks, checking each one's signature.
type receiver struct {
	srv    *httptest.Server
	bodies chan notify.Body
	bad    chan string
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{bodies: make(chan notify.Body, 16), bad: make(chan string, 16)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := notify.Verify([]byte(notifySecret), r.Header.Get(notify.SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
			rc.bad <- err.Error()
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var b notify.Body
		if err := json.Unmarshal(body, &b); err != nil {
			rc.bad <- err.Error()
		}
		rc.bodies <- b
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) next(t *testing.T) notify.Body {
	t.Helper()
	select {
	case b := <-rc.bodies:
		return b
	case bad := <-rc.bad:
		t.Fatalf("a webhook did not check: %s", bad)
	case <-time.After(actionTimeout):
		t.Fatal("no webhook came")
	}
	return notify.Body{}
}

// askUnwatched starts a demo of the test's own that sends its webhooks, signed, to a
// receiver of the test's own after a second; has a device of a new session send text and
// go as soon as the request that makes (an event of type typ) comes; and returns the
// demo, the session, the request's id and the webhook that says nobody is looking.
func askUnwatched(t *testing.T, typ, text string) (srv *demoServer, session, id string, b notify.Body) {
	t.Helper()
	setup(t)
	rc := newReceiver(t)
	srv, err := startDemo("127.0.0.1:0", "-notify-webhook", rc.srv.URL+"/hook", "-notify-after", "1s", "-notify-secret", notifySecret, "-timeout", "2m")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.stop)
	session = newSession()

	ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+srv.addr+"/ws?session="+session, nil)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := json.Marshal(map[string]any{"type": "user_message", "data": map[string]string{"text": text}})
	if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
	for id == "" {
		_, m, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for the %s: %v", typ, err)
		}
		var ev struct {
			Type string `json:"type"`
			Data struct {
				RequestID string `json:"requestId"`
			} `json:"data"`
		}
		if json.Unmarshal(m, &ev) == nil && ev.Type == typ {
			id = ev.Data.RequestID
		}
	}
	ws.Close(websocket.StatusNormalClosure, "")
	return srv, session, id, rc.next(t)
}

func TestNotifyAndDecideFromALink(t *testing.T) {
	// A device asks for it and goes: nobody is looking.
	srv, session, id, b := askUnwatched(t, "tool_approval", `/tool delete_branch {"name":"feature/from-a-link"}`)
	if b.Type != "tool_approval" || b.RequestID != id || b.Title != "delete_branch" || b.SessionID.String() != session || len(b.Actions) != 2 {
		t.Fatalf("webhook %+v", b)
	}
	if !strings.HasPrefix(b.URL, srv.base+"askuser/links/a/") {
		t.Fatalf("the answer link %q is not the demo's", b.URL)
	}

	// A link altered anywhere is refused, and says nothing of the request.
	bad := b.URL[:len(b.URL)-3] + "AAA"
	for _, link := range []string{bad, srv.base + "askuser/links/a/" + notify.TokenOf(b.Actions[0].URL)} {
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || strings.Contains(string(body), "delete_branch") || strings.Contains(string(body), session) {
			t.Fatalf("%s: %d\n%s", link, resp.StatusCode, body)
		}
	}
	// An action link's GET (a previewer fetching it) decides nothing.
	lt := newTab(t)
	lt.viewport(390, 844, true)
	lt.do("opening the deny link", chromedp.Navigate(b.Actions[1].URL))
	waitFor[bool](lt, "the confirmation page", `document.body.textContent.includes("Deny this tool call?") && !!document.querySelector("form")`)

	// The answer link: the approval alone, on a phone, decided there.
	lt.do("opening the answer link", chromedp.Navigate(b.URL))
	if got := lt.newestApproval(""); got != id {
		t.Fatalf("the link's page shows %q, want %q", got, id)
	}
	if n := eval[int](lt, `document.querySelectorAll('[data-testid="approval"], [data-testid="panel"]').length`); n != 1 {
		t.Fatalf("the link's page shows %d requests, want its one", n)
	}
	lt.do("approving on the link's page", chromedp.Click(asel(id, `[data-testid="approve"]`)))
	lt.approvalGone(id)
	waitFor[bool](lt, "the page's last word", `!document.querySelector(".askuser-link-done").hidden`)

	// The model read the tool's result; the agent's page shows it.
	tb := newTab(t)
	tb.open(srv, session)
	got := waitFor[string](tb, "the tool result in the history", `(() => {
		const h = window.demo.events.find(e => e.type === "history");
		const r = h && h.data.events.find(e => e.type === "tool_result" && e.data.requestId === `+js(id)+`);
		return r ? r.data.content : false;
	})()`)
	if got != `{"deleted":"feature/from-a-link"}` {
		t.Fatalf("the tool result %s", got)
	}

	// Used again, both links only say how it ended.
	for _, link := range []string{b.URL, b.Actions[1].URL} {
		lt.do("opening the link again", chromedp.Navigate(link))
		waitFor[bool](lt, "the ended page", `document.body.textContent.includes("This tool call was approved.") && !document.querySelector("form") && !document.querySelector('[data-testid="approval"]')`)
	}
}
