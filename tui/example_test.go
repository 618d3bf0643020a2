package tui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/tui"
	"github.com/askuser-go/askuser/wshub"
)

// A host serves the wshub endpoint; the terminal dials it and answers a question. Here
// the person's typing is scripted: the accessible mode reads "2", the second option.
func Example() {
	// The host: a dispatcher whose transport is a WebSocket hub.
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return []askuser.SessionID{askuser.IntSession(1)}, nil
	}})
	d := askuser.New(hub, nil)
	srv := httptest.NewServer(hub)
	defer srv.Close()
	defer hub.Close()
	defer d.Close()

	// The terminal: one device of session 1.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := tui.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	done := make(chan error, 1)
	go func() {
		done <- tui.Run(ctx, conn, &tui.Options{Accessible: true, Input: strings.NewReader("2\n"), Output: io.Discard})
	}()

	// The agent asks.
	res := d.Dispatch(ctx, askuser.ToolCall{Session: askuser.IntSession(1), ID: "call_1", Arguments: json.RawMessage(`{
		"questions": [{"question": "Which framework?", "header": "Framework", "multiSelect": false, "options": [
			{"label": "Vue 3 (Recommended)", "description": "Matches the stack"},
			{"label": "React", "description": "Larger ecosystem"}]}]}`)})
	fmt.Println(res.Content)

	cancel()
	<-done
	// Output:
	// {"answers":[{"question":"Which framework?","selectedLabels":["React"],"customInput":null}]}
}
