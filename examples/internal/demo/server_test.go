package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/coder/websocket"
)

var testPage = fstest.MapFS{
	"index.html": {Data: []byte("<!doctype html><title>demo</title>")},
	"app.js":     {Data: []byte("// app")},
}

func newTestServer(t *testing.T, opts *Options) (*Server, *httptest.Server) {
	t.Helper()
	o := Options{Page: testPage, Timeout: time.Minute}
	if opts != nil {
		o = *opts
		if o.Page == nil {
			o.Page = testPage
		}
	}
	srv, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		_ = srv.Close()
		hs.Close()
	})
	return srv, hs
}

// device is one WebSocket client of the demo.
type device struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, hs *httptest.Server, session string) *device {
	t.Helper()
	return dialURL(t, hs.URL+"/ws?session="+session)
}

func (d *device) send(msg string) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		d.t.Fatalf("write: %v", err)
	}
}

// next returns the raw message of the next event of type typ, skipping others.
func (d *device) next(typ string) []byte {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, msg, err := d.ws.Read(ctx)
		if err != nil {
			d.t.Fatalf("waiting for %s: %v", typ, err)
		}
		ev, err := wire.ParseEvent(msg)
		if err != nil {
			d.t.Fatalf("server sent %s: %v", msg, err)
		}
		if ev.Type == typ {
			return msg
		}
	}
}

func TestServerRunsTheAgentOverWebSockets(t *testing.T) {
	_, hs := newTestServer(t, nil)
	d := dial(t, hs, "42")
	// A device that connects first gets the (empty) history.
	if msg := d.next(EventHistory); !bytes.Contains(msg, []byte(`"events":[]`)) {
		t.Fatalf("first history = %s", msg)
	}
	d.send(`{"type":"user_message","sessionId":42,"data":{"text":"/single"}}`)
	// A numeric session in the URL is a number in every event.
	if msg := d.next(EventUserMessage); !bytes.Contains(msg, []byte(`"sessionId":42,`)) {
		t.Fatalf("echo = %s", msg)
	}
	var ask struct {
		Data wire.AskData `json:"data"`
	}
	if err := json.Unmarshal(d.next(wire.EventAsk), &ask); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ask.Data.RequestID, "call_") || ask.Data.ExpiresAt.IsZero() {
		t.Fatalf("ask = %+v", ask.Data)
	}

	// A second device connecting meanwhile is shown the pending question and the history.
	d2 := dial(t, hs, "42")
	if msg := d2.next(wire.EventAsk); !bytes.Contains(msg, []byte(ask.Data.RequestID)) {
		t.Fatalf("second device got %s", msg)
	}
	if msg := d2.next(EventHistory); !bytes.Contains(msg, []byte(`"type":"tool_call"`)) {
		t.Fatalf("second device history = %s", msg)
	}

	// A bad answer is refused to the sender alone and the question stays open.
	d.send(`{"type":"ask_user_questions_result","sessionId":42,"data":{"requestId":"` + ask.Data.RequestID + `","answers":[{"question":"nope","selectedLabels":["React"],"customInput":null}]}}`)
	if msg := d.next(wire.EventError); !bytes.Contains(msg, []byte(`"code":"invalid_answer"`)) {
		t.Fatalf("error = %s", msg)
	}
	d.send(`{"type":"ask_user_questions_result","sessionId":42,"data":{"requestId":"` + ask.Data.RequestID + `","answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["React"],"customInput":null}]}}`)
	for _, dev := range []*device{d, d2} {
		dev.next(wire.EventResolved)
		var res struct {
			Data struct {
				RequestID string `json:"requestId"`
				Content   string `json:"content"`
			} `json:"data"`
		}
		if err := json.Unmarshal(dev.next(EventToolResult), &res); err != nil {
			t.Fatal(err)
		}
		want := `{"answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["React"],"customInput":null}]}`
		if res.Data.RequestID != ask.Data.RequestID || res.Data.Content != want {
			t.Fatalf("tool_result = %+v", res.Data)
		}
	}
}

func TestServerRefusals(t *testing.T) {
	_, hs := newTestServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, q := range []string{"", "?session=", "?session=" + strings.Repeat("x", 129)} {
		if _, resp, err := websocket.Dial(ctx, hs.URL+"/ws"+q, nil); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("dial /ws%s: err %v, response %v; want 403", q, err, resp)
		}
	}
	d := dial(t, hs, "abc")
	for _, tc := range []struct{ msg, code string }{
		{`{"type":"dance","sessionId":"abc"}`, "unsupported_event"},
		{`{"type":"user_message","sessionId":"abc","data":{"txt":"hi"}}`, "malformed_event"},
		{`{"type":"user_message","sessionId":"abc","data":{"text":"  "}}`, "malformed_event"},
		{`{"type":"user_message","sessionId":"other","data":{"text":"hi"}}`, "forbidden"},
	} {
		d.send(tc.msg)
		if msg := d.next(wire.EventError); !bytes.Contains(msg, []byte(`"code":"`+tc.code+`"`)) {
			t.Errorf("%s: got %s, want code %s", tc.msg, msg, tc.code)
		}
	}
}

func TestServerCancel(t *testing.T) {
	_, hs := newTestServer(t, nil)
	d := dial(t, hs, "7")
	d.send(`{"type":"user_message","sessionId":7,"data":{"text":"/preview"}}`)
	d.next(wire.EventAsk)
	d.send(`{"type":"cancel","sessionId":7}`)
	if msg := d.next(wire.EventResolved); !bytes.Contains(msg, []byte(`"outcome":"cancelled"`)) {
		t.Fatalf("resolved = %s", msg)
	}
	if msg := d.next(EventToolResult); !bytes.Contains(msg, []byte(`"content":"{\"error\": \"Session cancelled\"}"`)) {
		t.Fatalf("tool_result = %s", msg)
	}
}

func TestServerPageAndHeaders(t *testing.T) {
	for _, noCSP := range []bool{false, true} {
		_, hs := newTestServer(t, &Options{NoCSP: noCSP})
		for _, path := range []string{"/", "/app.js", "/askuser/panel.js", "/askuser/panel.css"} {
			resp, err := http.Get(hs.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || len(body) == 0 {
				t.Errorf("GET %s: %d, %d bytes", path, resp.StatusCode, len(body))
			}
			if got := resp.Header.Get("Content-Security-Policy"); (got == ContentSecurityPolicy) == noCSP {
				t.Errorf("GET %s with NoCSP %v: Content-Security-Policy %q", path, noCSP, got)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("GET %s: no nosniff", path)
			}
		}
	}
	if _, err := New(&Options{Page: fstest.MapFS{}}); err == nil {
		t.Error("New took a page without index.html")
	}
	if _, err := New(nil); err == nil {
		t.Error("New took no page")
	}
}

func TestServerCloseEndsRuns(t *testing.T) {
	srv, hs := newTestServer(t, nil)
	d := dial(t, hs, "9")
	d.send(`{"type":"user_message","sessionId":9,"data":{"text":"hello"}}`)
	d.next(wire.EventAsk)
	// Keep reading, as a browser does, so that the close handshake can complete.
	go func() {
		for {
			if _, _, err := d.ws.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		_ = srv.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return while a run waited for an answer")
	}
	if len(srv.Dispatcher().Pending(askuser.IntSession(9))) > 0 {
		t.Fatal("a question is still pending after Close")
	}
	if err := srv.agent(askuser.IntSession(9)).message("again"); err == nil {
		t.Fatal("a run started after Close")
	}
}

func TestServerForgetsIdleSessionsBeyondTheBound(t *testing.T) {
	srv, _ := newTestServer(t, &Options{MaxSessions: 2})
	a1 := srv.agent(askuser.IntSession(1))
	srv.agent(askuser.IntSession(2))
	a1.mu.Lock()
	a1.used = time.Now().Add(-time.Hour)
	a1.mu.Unlock()
	srv.agent(askuser.IntSession(3))
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.agents) != 2 || srv.agents[askuser.IntSession(1)] != nil {
		t.Fatalf("sessions kept: %v", srv.agents)
	}
}
