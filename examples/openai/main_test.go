package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/internal/leakcheck"
)

// TestMain fails the run when goroutines started by the tests outlive them.
func TestMain(m *testing.M) { leakcheck.Main(m, 5*time.Second, nil) }

// TestReplayEndToEnd runs the example without an API key, as a person would: it
// replays the recorded exchange, serves the page, a browser device (a WebSocket client
// here) answers the question, and the example prints the tool result the model was sent
// and the model's last message, and returns.
func TestReplayEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name          string
		decline       bool
		result, final string
	}{
		{"answered", false, `tool result: {"answers":[{"question":"Which layout should the settings page use?","selectedLabels":["Sidebar (Recommended)"],"customInput":null}]}`, "assistant: Thanks, that settles it."},
		{"declined", true, `tool result: {"error": "User declined to answer"}`, "assistant: No answer, so"},
	} {
		t.Run(tc.name, func(t *testing.T) { replayOnce(t, tc.decline, tc.result, tc.final) })
	}
}

// replayOnce runs the example in replay mode; its device answers with the first option,
// or declines.
func replayOnce(t *testing.T, decline bool, result, final string) {
	lines := make(chan string, 64)
	pr, pw := io.Pipe()
	go func() {
		s := bufio.NewScanner(pr)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{addr: "127.0.0.1:0", timeout: time.Minute, prompt: "Plan the settings page."}, pw)
		pw.Close()
	}()

	var out []string
	wait := func(prefix string) string {
		t.Helper()
		for line := range lines {
			out = append(out, line)
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
		t.Fatalf("the example never printed %q; it printed:\n%s", prefix, strings.Join(out, "\n"))
		return ""
	}

	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(wait("Answer the agent's questions at "))
	wait("OPENAI_API_KEY is not set: replaying")
	for _, path := range []string{"", "askuser/panel.js", "page.js"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /%s: %s", path, resp.Status)
		}
	}

	// The browser device: it picks the first option of the question it is shown, or declines.
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	var ask askuser.AskData
	for ask.RequestID == "" {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev, err := askuser.ParseEvent(msg); err == nil && ev.Type == askuser.EventAsk {
			if err := json.Unmarshal(ev.Data, &ask); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ask.RequestID != "call_Dn2RJJSxzDm49vlVTehseJ0k" {
		t.Errorf("asked under %q, want the recorded tool call id", ask.RequestID)
	}
	data := askuser.ResultData{RequestID: ask.RequestID, Declined: decline}
	if !decline {
		data.Answers = []askuser.Answer{{Question: ask.Questions[0].Question, SelectedLabels: []string{ask.Questions[0].Options[0].Label}}}
	}
	reply, _ := askuser.NewEvent(askuser.EventResult, askuser.IntSession(1), data)
	b, _ := reply.Encode()
	if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	// Go on reading, as a browser does, so that the example's closing handshake is answered.
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	}()
	defer func() { <-readerDone }()

	if got := wait("tool result: "); got != result {
		t.Errorf("got  %s\nwant %s", got, result)
	}
	wait(final)
	if err := <-done; err != nil {
		t.Fatalf("the example failed: %v", err)
	}
}
