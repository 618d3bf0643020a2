// Package exampletest runs the examples that replay a recorded LLM exchange end to end,
// with a WebSocket device answering in the browser's place.
package exampletest

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
)

// Replay is what one run of an example in replay mode should show.
type Replay struct {
	// Run runs the example on a free loopback port, writing what it prints to out.
	Run func(ctx context.Context, out io.Writer) error
	// KeyVar is the environment variable of the API key, which the example says is
	// not set.
	KeyVar string
	// CallID is the recorded tool-call id the question must be asked under.
	CallID string
	// Decline makes the device decline instead of answering with the first option.
	Decline bool
	// ResultPrefix starts the line with the tool result; Result is that whole line.
	ResultPrefix, Result string
	// Final starts the line that ends the run: the model's last message.
	Final string
}

// Check runs the example as a person would: it replays the recorded exchange and serves
// the page, a browser device (a WebSocket client here) answers the question, or
// declines, and the example prints the tool result the model was sent and the model's
// last message, and returns.
func Check(t *testing.T, r Replay) {
	t.Helper()
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
		done <- r.Run(ctx, pw)
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
	wait(r.KeyVar + " is not set: replaying")
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
	if ask.RequestID != r.CallID {
		t.Errorf("asked under %q, want the recorded tool call id %q", ask.RequestID, r.CallID)
	}
	data := askuser.ResultData{RequestID: ask.RequestID, Declined: r.Decline}
	if !r.Decline {
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

	if got := wait(r.ResultPrefix); got != r.Result {
		t.Errorf("got  %s\nwant %s", got, r.Result)
	}
	wait(r.Final)
	if err := <-done; err != nil {
		t.Fatalf("the example failed: %v", err)
	}
}
