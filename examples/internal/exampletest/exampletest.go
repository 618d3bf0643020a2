// Package exampletest runs the examples that replay a recorded LLM exchange end to end,
// with a WebSocket device answering in the browser's place, or a browser of the test's.
package exampletest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
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
	// Approval, when set, is the one approval the device must be shown after the
	// question, which it decides with an edit; when nil, the device must be shown none.
	Approval *Approval
	// ResultPrefix starts the lines with the tool results; Results are those whole
	// lines, in order.
	ResultPrefix string
	Results      []string
	// Final starts the line that ends the run: the model's last message.
	Final string
	// Browser, when set, is the device in the WebSocket client's place: it opens the
	// example's page at url, and answers (or declines) and decides as the WebSocket
	// client would, checking what the panel shows; it returns once it has decided the
	// last request, and fails t when the page does not show what it should.
	Browser func(ctx context.Context, t *testing.T, url string, r Replay)
}

// Approval is an approval the device is shown, and its decision: an edit.
type Approval struct {
	// CallID and Tool are the recorded tool call's id and tool.
	CallID, Tool string
	// Shows is a part of the recorded arguments that the approval's card shows, for a
	// Browser to check.
	Shows string
	// Edit are the arguments the person edits the call to.
	Edit json.RawMessage
}

// Check runs the example as a person would: it replays the recorded exchange and serves
// the page, a browser device (a WebSocket client, or r.Browser) answers the question,
// or declines, and edits the approval it is shown, and the example prints the tool
// results the model was sent and the model's last message, and returns.
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

	// printed checks what the example printed once the device has decided: every tool
	// result, the model's last message, and that it returned.
	printed := func() {
		t.Helper()
		for _, want := range r.Results {
			if got := wait(r.ResultPrefix); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		}
		wait(r.Final)
		if err := <-done; err != nil {
			t.Fatalf("the example failed: %v", err)
		}
	}
	if r.Browser != nil {
		r.Browser(ctx, t, url, r)
		printed()
		return
	}

	// The browser device: it picks the first option of the question it is shown, or
	// declines, and edits the approval it is shown; it goes on reading, as a browser
	// does, so that the example's closing handshake is answered.
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	var asks, approvals int // written by the device, read once it is done
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
				continue
			}
			var reply wire.Event
			switch ev.Type {
			case wire.EventAsk:
				asks++
				reply, err = answer(t, r, ev.Data)
			case wire.EventApproval:
				approvals++
				reply, err = decide(t, r, ev.Data)
			default:
				continue
			}
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := reply.Encode()
			if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() {
		ws.CloseNow()
		<-deviceDone
	}()

	printed()
	<-deviceDone
	wantApprovals := 0
	if r.Approval != nil {
		wantApprovals = 1
	}
	if asks != 1 || approvals != wantApprovals {
		t.Errorf("the device was shown %d questions and %d approvals", asks, approvals)
	}
}

// answer is the device's reply to a question: the first option of the first question,
// or a decline.
func answer(t *testing.T, r Replay, data []byte) (wire.Event, error) {
	var ask wire.AskData
	if err := json.Unmarshal(data, &ask); err != nil {
		return wire.Event{}, err
	}
	if ask.RequestID != r.CallID {
		t.Errorf("asked under %q, want the recorded tool call id %q", ask.RequestID, r.CallID)
	}
	reply := wire.ResultData{RequestID: ask.RequestID, Declined: r.Decline}
	if !r.Decline {
		reply.Answers = []askuser.Answer{{Question: ask.Questions[0].Question, SelectedLabels: []string{ask.Questions[0].Options[0].Label}}}
	}
	return wire.NewEvent(wire.EventResult, askuser.IntSession(1), reply)
}

// decide is the device's decision on an approval: the edit of r.Approval, with the
// approval's digest, as the panel sends it.
func decide(t *testing.T, r Replay, data []byte) (wire.Event, error) {
	var a wire.ApprovalData
	if err := json.Unmarshal(data, &a); err != nil {
		return wire.Event{}, err
	}
	if r.Approval == nil {
		return wire.Event{}, fmt.Errorf("the device was shown an approval of %s %s, and none was expected", a.Tool, a.RequestID)
	}
	if a.RequestID != r.Approval.CallID || a.Tool != r.Approval.Tool {
		t.Errorf("asked to approve %s under %q, want %s under the recorded tool call id %q", a.Tool, a.RequestID, r.Approval.Tool, r.Approval.CallID)
	}
	return wire.NewEvent(wire.EventApprovalResult, askuser.IntSession(1), wire.ApprovalResultData{
		RequestID: a.RequestID, Decision: wire.DecisionEdit, Arguments: r.Approval.Edit, Digest: a.Digest,
	})
}
