package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
	"github.com/coder/websocket"
)

// BenchmarkApprovalOverHub is one approval end to end over a real wshub.Hub on
// loopback: Dispatcher.Approve of a delete_branch call, the tool_approval event written
// to a device connected as alice with coder/websocket, which decodes it and approves
// with its digest, the decision read back by the hub and the result returned.
//
//   - anyone: the Policy asks about delete_branch, and anyone of the session decides;
//   - one-approver: the rule names alice, alone, as its approver.
func BenchmarkApprovalOverHub(b *testing.B) {
	b.Run("anyone", func(b *testing.B) { benchApprovalOverHub(b, nil) })
	b.Run("one-approver", func(b *testing.B) { benchApprovalOverHub(b, &askuser.Approvers{Users: []string{"alice"}}) })
}

func benchApprovalOverHub(b *testing.B, approvers *askuser.Approvers) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	session := askuser.StringSession("ops")
	hub := wshub.New(&wshub.Options{
		Authenticate: func(*http.Request) (wshub.Access, error) {
			return wshub.Access{User: "alice", Sessions: []askuser.SessionID{session}}, nil
		},
		MaxMessagesPerSecond: 1 << 20,
	})
	policy := *approvalPolicy
	policy.Ask = []askuser.Rule{{Tool: "delete_branch", Approvers: approvers}}
	d := askuser.New(hub, &askuser.Options{Policy: &policy})
	srv := httptest.NewServer(hub)
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		approveOverHub(ctx, ws)
	}()
	defer func() {
		d.Close()
		hub.Close()
		srv.Close()
		cancel()
		<-done
	}()
	call := askuser.ToolCall{Session: session, Name: "delete_branch", Arguments: json.RawMessage(`{"name":"feature/login"}`)}
	b.ReportAllocs()
	stop := cpuTime(b)
	for b.Loop() {
		if res := d.Approve(ctx, call, nil); res.Outcome != askuser.Approved {
			b.Fatalf("outcome %v", res.Outcome)
		}
	}
	stop()
}

// approveOverHub is a device that approves every tool_approval it reads on ws, until
// ws fails.
func approveOverHub(ctx context.Context, ws *websocket.Conn) {
	for {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var ev struct {
			Type string            `json:"type"`
			Data wire.ApprovalData `json:"data"`
		}
		if json.Unmarshal(msg, &ev) != nil || ev.Type != wire.EventApproval {
			continue
		}
		out, _ := json.Marshal(map[string]any{"type": wire.EventApprovalResult, "sessionId": "ops",
			"data": wire.ApprovalResultData{RequestID: ev.Data.RequestID, Decision: wire.DecisionApprove, Digest: ev.Data.Digest}})
		if ws.Write(ctx, websocket.MessageText, out) != nil {
			return
		}
	}
}
