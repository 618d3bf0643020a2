package askmcp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/integrations/askmcp"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestElicitationOnEveryPanel: the whole host side with the browser panels' transport.
// An MCP server's elicitation reaches two devices of the session, connected to a wshub
// hub over real WebSockets; the first device's answer is the server's content, and the
// other device is told the question ended, with the answer.
func TestElicitationOnEveryPanel(t *testing.T) {
	session := askuser.IntSession(42)
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return []askuser.SessionID{session}, nil
	}})
	d := askuser.New(hub, nil)
	hs := httptest.NewServer(hub)
	defer func() { d.Close(); hub.Close(); hs.Close() }()

	ctx := t.Context()
	var phones [2]*websocket.Conn
	for i := range phones {
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		phones[i] = c
	}
	// The hub counts a device once it has joined, which may be a moment after the dial
	// returns; a question asked before is shown on joining anyway.

	client := mcp.NewClient(impl, &mcp.ClientOptions{ElicitationHandler: askmcp.ElicitationHandler(d, session, nil)})
	h := &host{d: d, session: session, client: client}
	ss := h.connect(t, mcp.NewServer(impl, nil), "2025-11-25")
	done := elicit(ss, ctx, &mcp.ElicitParams{Message: "Ship it?", RequestedSchema: schema(t,
		`{"type":"object","properties":{"ship":{"type":"boolean","title":"Ship"}},"required":["ship"]}`)})

	read := func(c *websocket.Conn) wire.Event {
		t.Helper()
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := wire.ParseEvent(msg)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	var asks [2]wire.AskData
	for i, c := range phones {
		ev := read(c)
		if ev.Type != wire.EventAsk {
			t.Fatalf("device %d got %s", i, ev.Type)
		}
		_ = json.Unmarshal(ev.Data, &asks[i])
	}
	if asks[0].RequestID != asks[1].RequestID || asks[0].Questions[0].Question != "Ship it?\n\nShip" {
		t.Fatalf("asks %+v / %+v", asks[0], asks[1])
	}
	reply, _ := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: asks[1].RequestID,
		Answers: []askuser.Answer{{Question: asks[1].Questions[0].Question, SelectedLabels: []string{"Yes"}}}})
	b, _ := reply.Encode()
	if err := phones[1].Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	e := wait(t, done)
	if e.err != nil || e.res.Action != askmcp.ActionAccept || e.res.Content["ship"] != true {
		t.Fatalf("server got %+v, %v", e.res, e.err)
	}
	ev := read(phones[0])
	var r wire.ResolvedData
	_ = json.Unmarshal(ev.Data, &r)
	if ev.Type != wire.EventResolved || r.Outcome != askuser.Answered || len(r.Answers) != 1 {
		t.Fatalf("the other device got %s %+v", ev.Type, r)
	}
}
