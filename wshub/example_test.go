package wshub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

// Mount the hub and the panel in a host's HTTP server; here a Go client plays the
// browser and answers the question the model asks.
func Example() {
	hub := wshub.New(&wshub.Options{
		// The host's own login check: here, the session named in the URL.
		Authorize: func(r *http.Request) ([]askuser.SessionID, error) {
			return []askuser.SessionID{wire.ParseSessionID(r.URL.Query().Get("session"))}, nil
		},
	})
	d := askuser.New(hub, nil)
	mux := http.NewServeMux()
	mux.Handle("/ws", hub)
	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer hub.Close()
	defer d.Close()

	// A device: what the browser panel does, in Go.
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws?session=123", nil)
	if err != nil {
		panic(err)
	}
	defer ws.CloseNow()
	go func() {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			return
		}
		ev, _ := wire.ParseEvent(msg)
		var ask wire.AskData
		_ = json.Unmarshal(ev.Data, &ask)
		reply, _ := wire.NewEvent(wire.EventResult, ev.SessionID, wire.ResultData{
			RequestID: ask.RequestID,
			Answers:   []askuser.Answer{{Question: ask.Questions[0].Question, CustomInput: ptr("Next Tuesday")}},
		})
		b, _ := reply.Encode()
		_ = ws.Write(ctx, websocket.MessageText, b)
	}()

	res := d.Dispatch(ctx, askuser.ToolCall{Session: askuser.IntSession(123), ID: "call_1", Arguments: json.RawMessage(
		`{"questions":[{"question":"When should we ship?","header":"Ship date","options":[{"label":"Today","description":"Now"},{"label":"Friday","description":"End of week"}],"multiSelect":false}]}`)})
	fmt.Println(res.Content)
	// Output:
	// {"answers":[{"question":"When should we ship?","selectedLabels":[],"customInput":"Next Tuesday"}]}
}

func ptr(s string) *string { return &s }
