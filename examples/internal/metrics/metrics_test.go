package metrics_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/examples/internal/metrics"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
)

const question = `{"questions":[{"question":"Deploy now?","header":"Deploy","multiSelect":false,"options":[{"label":"Yes","description":"Ship it"},{"label":"No","description":"Wait"}]}]}`

// TestScrape is what an operator's scraper reads after one answered question, one
// timed-out question and one refused device event, on a real hub with a real
// WebSocket device: every family the docs name, in Prometheus's text format.
func TestScrape(t *testing.T) {
	obs, handler, err := metrics.New()
	if err != nil {
		t.Fatal(err)
	}
	s := askuser.IntSession(42)
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) { return []askuser.SessionID{s}, nil }, Observer: obs})
	// Long enough for a device on loopback to answer the first question, short enough
	// for the second to time out while the test waits.
	d := askuser.New(hub, &askuser.Options{Observer: obs, Timeout: 3 * time.Second})
	srv := httptest.NewServer(hub)
	t.Cleanup(func() { srv.Close(); hub.Close(); d.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for !hub.Connected(s) {
		time.Sleep(5 * time.Millisecond)
	}
	asks := make(chan wire.AskData, 2)
	go func() {
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				return
			}
			if ev, err := wire.ParseEvent(msg); err == nil && ev.Type == wire.EventAsk {
				var a wire.AskData
				if json.Unmarshal(ev.Data, &a) == nil {
					asks <- a
				}
			}
		}
	}()

	answered := make(chan askuser.Result, 1)
	go func() {
		answered <- d.Dispatch(ctx, askuser.ToolCall{Session: s, ID: "call_1", Name: askuser.ToolName, Arguments: json.RawMessage(question)})
	}()
	a := <-asks
	go func() { <-asks }() // the second question's, left unanswered
	// A refused event first (an answer to a request nobody asked), then the answer.
	bad, _ := wire.NewEvent(wire.EventResult, s, wire.ResultData{RequestID: "nobody-asked", Answers: []askuser.Answer{{Question: "Deploy now?", SelectedLabels: []string{"Yes"}}}})
	good, _ := wire.NewEvent(wire.EventResult, s, wire.ResultData{RequestID: a.RequestID, Answers: []askuser.Answer{{Question: "Deploy now?", SelectedLabels: []string{"Yes"}}}})
	for _, ev := range []wire.Event{bad, good} {
		msg, err := ev.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
			t.Fatal(err)
		}
	}
	if r := <-answered; r.Outcome != askuser.Answered {
		t.Fatalf("first call: %v", r.Outcome)
	}
	if r := d.Dispatch(ctx, askuser.ToolCall{Session: s, ID: "call_2", Name: askuser.ToolName, Arguments: json.RawMessage(question)}); r.Outcome != askuser.TimedOut {
		t.Fatalf("second call: %v (%s)", r.Outcome, r.Content)
	}

	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`askuser_request_duration_seconds_bucket\{[^}]*askuser_outcome="answered"[^}]*askuser_request_kind="question"[^}]*\} 1`,
		`askuser_request_duration_seconds_count\{[^}]*askuser_outcome="timeout"[^}]*\} 1`,
		`askuser_request_pending\{[^}]*askuser_request_kind="question"[^}]*\} 0`,
		`askuser_device_connection_count\{[^}]*\} 1`,
		`askuser_device_refusals_total\{[^}]*askuser_refusal_code="[a-z_]+"[^}]*\} 1`,
		`gen_ai_execute_tool_duration_seconds_count\{[^}]*gen_ai_tool_name="ask_user_questions"[^}]*\} 1`,
	} {
		if !regexp.MustCompile(`(?m)^` + want).MatchString(text) {
			t.Errorf("no line matches %s in:\n%s", want, text)
		}
	}
}
