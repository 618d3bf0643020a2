package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// TestHost runs the example's host on a real HTTP server, with a WebSocket device as
// the person: the agent's calls are answered and decided on the device (the edit of
// delete_branch's arguments is what the tool runs with), the rule denies drop_database,
// every decision is audited, and a call left waiting with no device is notified by the
// signed webhook to the host's own /hook, whose approve link, confirmed on its page,
// runs the call.
func TestHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	out := newLines(t)
	h, err := newHost(config{PublicURL: base, Secret: bytes.Repeat([]byte("k"), 32), NotifyAfter: 100 * time.Millisecond, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h.handler
	srv.Start()
	// Cleanups run last first, as the example's defers do: the dispatcher, the hub, then
	// the server.
	t.Cleanup(srv.Close)
	t.Cleanup(func() { h.hub.Close() })
	t.Cleanup(func() { h.d.Close() })

	for _, path := range []string{"/", "/askuser/panel.js", "/askuser/panel.css"} {
		if status, _ := get(t, base+path); status != http.StatusOK {
			t.Errorf("GET %s: %d", path, status)
		}
	}

	// The person's device: it answers with the second option, and edits the call of
	// delete_branch to another branch.
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	deviceDone := make(chan struct{})
	go func() {
		defer close(deviceDone)
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				return
			}
			ev, err := wire.ParseEvent(msg)
			if err != nil {
				t.Errorf("the device was sent %s: %v", msg, err)
				return
			}
			var reply wire.Event
			switch ev.Type {
			case wire.EventAsk:
				var ask wire.AskData
				if err := json.Unmarshal(ev.Data, &ask); err != nil {
					t.Error(err)
					return
				}
				reply, err = wire.NewEvent(wire.EventResult, ev.SessionID, wire.ResultData{RequestID: ask.RequestID,
					Answers: []askuser.Answer{{Question: ask.Questions[0].Question, SelectedLabels: []string{ask.Questions[0].Options[1].Label}}}})
			case wire.EventApproval:
				var a wire.ApprovalData
				if err := json.Unmarshal(ev.Data, &a); err != nil {
					t.Error(err)
					return
				}
				if a.Tool != "delete_branch" || string(a.Arguments) != `{"name":"feature/spike"}` || string(a.ArgumentsSchema) != branchSchema {
					t.Errorf("the device was asked to approve %s %s (schema %s)", a.Tool, a.Arguments, a.ArgumentsSchema)
				}
				reply, err = wire.NewEvent(wire.EventApprovalResult, ev.SessionID, wire.ApprovalResultData{RequestID: a.RequestID,
					Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"name":"feature/spike-2"}`), Digest: a.Digest})
			default:
				continue
			}
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := reply.Encode()
			if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
				return
			}
		}
	}()

	agentDone := make(chan error, 1)
	go func() { agentDone <- agent(ctx, h.tools, out) }()
	out.expect(`agent: list_files → {"files":["README.md","main.go"]} (error: false)`)
	out.expect(`agent: ask_user_questions → {"answers":[{"question":"Which branch should I delete?","selectedLabels":["feature/spike"],"customInput":null}]} (error: false)`)
	// The tool ran with the person's arguments, and the model is told so.
	out.expect("tool: deleting branch feature/spike-2")
	out.expect(`agent: delete_branch → {"notice": "The user edited the arguments of this tool call before it ran: it ran with the arguments given here, not with yours.", "arguments": {"name":"feature/spike-2"}, "result": {"deleted":"feature/spike-2"}} (error: false)`)
	out.expect(`agent: drop_database → {"error": "This tool call is not allowed here; the tool did not run. Do not call it again."} (error: true)`)
	if err := <-agentDone; err != nil {
		t.Fatalf("the agent: %v", err)
	}
	out.expect(`audit: list_files {} approved by ""`)
	out.expect(`audit: delete_branch {"name":"feature/spike"} edited by "you"`)
	out.expect(`audit: drop_database {"name":"production"} denied by ""`)
	ws.Close(websocket.StatusNormalClosure, "")
	<-deviceDone

	// No device now: the call waits, and after NotifyAfter the webhook reaches the hook.
	type result struct {
		res string
		err error
	}
	waiting := make(chan result, 1)
	go func() {
		res, err := h.tools(ctx, askuser.ToolCall{Session: session, ID: "call_9", Name: "delete_branch", Arguments: json.RawMessage(`{"name":"feature/x"}`)})
		waiting <- result{res, err}
	}()
	answerLink := strings.TrimPrefix(out.expect("notice: delete_branch is waiting for you: "+base+"/askuser/links/a/"), "notice: delete_branch is waiting for you: ")
	approveLink := strings.TrimPrefix(out.expect("notice: to approve: "+base+"/askuser/links/x/"), "notice: to approve: ")
	if status, page := get(t, answerLink); status != http.StatusOK || !strings.Contains(page, "panel.js") {
		t.Errorf("the answer link's page: %d %s", status, page)
	}
	// The action link's GET decides nothing: its page asks, and its form's POST acts.
	status, page := get(t, approveLink)
	form := regexp.MustCompile(`name="form" value="([^"]+)"`).FindStringSubmatch(page)
	if status != http.StatusOK || form == nil || !strings.Contains(page, "feature/x") {
		t.Fatalf("the approve link's page: %d %s", status, page)
	}
	select {
	case r := <-waiting:
		t.Fatalf("the GET of an action link decided the call: %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
	resp, err := http.PostForm(approveLink, url.Values{"form": {form[1]}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Approved.") {
		t.Fatalf("the approve link's POST: %s %s", resp.Status, b)
	}
	if r := <-waiting; r.res != `{"deleted":"feature/x"}` || r.err != nil {
		t.Fatalf("the call approved by the link: %+v", r)
	}
	out.expect("tool: deleting branch feature/x")
	out.expect(`audit: delete_branch {"name":"feature/x"} approved by "" via a link`)
}

// TestHostRefusesAShortSecret: a secret under 32 bytes is refused at start, where the
// links would otherwise silently not be made.
func TestHostRefusesAShortSecret(t *testing.T) {
	_, err := newHost(config{PublicURL: "http://127.0.0.1:1", Secret: bytes.Repeat([]byte("k"), 31), Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("newHost with a 31-byte secret: %v", err)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// lines is what the host prints, line by line, for a test to wait on.
type lines struct {
	t    *testing.T
	w    *io.PipeWriter
	c    chan string
	seen []string
}

func newLines(t *testing.T) *lines {
	r, w := io.Pipe()
	l := &lines{t: t, w: w, c: make(chan string, 256)}
	go func() {
		s := bufio.NewScanner(r)
		for s.Scan() {
			l.c <- s.Text()
		}
	}()
	t.Cleanup(func() { w.Close() })
	return l
}

func (l *lines) Write(p []byte) (int, error) { return l.w.Write(p) }

// expect returns the first line printed, so far or from now on, that starts with
// prefix; it fails the test when none comes within a minute.
func (l *lines) expect(prefix string) string {
	l.t.Helper()
	for _, s := range l.seen {
		if strings.HasPrefix(s, prefix) {
			return s
		}
	}
	timeout := time.After(time.Minute)
	for {
		select {
		case s := <-l.c:
			l.seen = append(l.seen, s)
			if strings.HasPrefix(s, prefix) {
				return s
			}
		case <-timeout:
			l.t.Fatalf("never printed %q; printed:\n%s", prefix, strings.Join(l.seen, "\n"))
		}
	}
}
