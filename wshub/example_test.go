package wshub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

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

// A person's inbox in Go, for a page or a bot of the host's own: the lead, whose
// devices are connected for no session of the agent's, is who may decide a restart.
func ExampleHub_Inbox() {
	hub := wshub.New(&wshub.Options{
		Authenticate: func(r *http.Request) (wshub.Access, error) {
			return wshub.Access{}, fmt.Errorf("this example connects no device")
		},
	})
	d := askuser.New(hub, &askuser.Options{
		Policy:       &askuser.Policy{Ask: []askuser.Rule{{Tool: "restart", Approvers: &askuser.Approvers{Users: []string{"lead"}}}}},
		SessionTitle: func(s askuser.SessionID) string { return "Deploy of " + s.String() },
	})
	defer hub.Close()
	defer d.Close()

	ops := askuser.StringSession("checkout-service")
	done := make(chan askuser.ApprovalResult)
	go func() {
		done <- d.Approve(context.Background(), askuser.ToolCall{Session: ops, ID: "call_7", Name: "restart", Requester: "dev"}, nil)
	}()
	for len(d.Pending(ops)) == 0 {
		time.Sleep(time.Millisecond)
	}

	lead := hub.Inbox(wshub.Access{User: "lead", Sessions: []askuser.SessionID{askuser.StringSession("lead-home")}})
	for _, e := range lead.Pending {
		fmt.Printf("%s: %s %s, read-only %v\n", e.SessionTitle, e.Kind, e.What, e.ReadOnly)
	}
	dev := hub.Inbox(wshub.Access{User: "dev", Sessions: []askuser.SessionID{ops}})
	for _, e := range dev.Pending {
		fmt.Printf("%s: %s %s, read-only %v\n", e.SessionTitle, e.Kind, e.What, e.ReadOnly)
	}
	d.CancelSession(ops)
	fmt.Println((<-done).Outcome)
	// Output:
	// Deploy of checkout-service: approval restart, read-only false
	// Deploy of checkout-service: approval restart, read-only true
	// cancelled
}
