package bench

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/wire"
)

// BenchmarkApprovalRoundTrip is one tool call approved by the person, end to end,
// beside one question answered (BenchmarkRoundTrip/askuser's path), in the same run:
//
//   - question: the model's arguments into Dispatcher.Dispatch, as BenchmarkRoundTrip;
//   - approval: a delete_branch call into Dispatcher.Approve under a Policy that asks
//     about it, with the tool's JSON Schema on the card; a device goroutine receives the
//     tool_approval event, decodes it and approves with its digest; the decision comes
//     out, ready to run the tool with.
func BenchmarkApprovalRoundTrip(b *testing.B) {
	b.Run("question", func(b *testing.B) { benchAskuser(b, typicalArgs) })
	b.Run("approval", benchApproval)
}

// approvalPolicy asks about delete_branch, whose arguments a schema describes.
var approvalPolicy = &askuser.Policy{
	Ask:   []askuser.Rule{{Tool: "delete_branch"}},
	Tools: []askuser.Tool{{Name: "delete_branch", Description: "Deletes a git branch", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`)}},
}

func benchApproval(b *testing.B) {
	ctx := context.Background()
	mt := askusertest.NewTransport()
	d := askuser.New(mt, &askuser.Options{Policy: approvalPolicy})
	defer d.Close()
	session := askuser.IntSession(123)
	dev := mt.Connect(session)
	done := make(chan struct{})
	go func() {
		defer close(done)
		approveAll(ctx, dev)
	}()
	defer func() { dev.Close(); <-done }()

	call := askuser.ToolCall{Session: session, Name: "delete_branch", Arguments: json.RawMessage(`{"name":"feature/login"}`)}
	b.ReportAllocs()
	stop := cpuTime(b)
	for b.Loop() {
		res := d.Approve(ctx, call, nil)
		if res.Outcome != askuser.Approved {
			b.Fatalf("outcome %v: %s", res.Outcome, res.Content(""))
		}
	}
	stop()
}

// approveAll is a device that approves every tool call as fast as it can, until the
// device is closed.
func approveAll(ctx context.Context, dev *askusertest.Device) {
	for {
		ev, err := dev.Recv(ctx)
		if err != nil {
			return
		}
		if ev.Type != wire.EventApproval {
			continue
		}
		var a wire.ApprovalData
		if err := json.Unmarshal(ev.Data, &a); err != nil {
			panic(err)
		}
		data, err := json.Marshal(wire.ApprovalResultData{RequestID: a.RequestID, Decision: wire.DecisionApprove, Digest: a.Digest})
		if err != nil {
			panic(err)
		}
		if err := dev.Send(ctx, wire.Event{Type: wire.EventApprovalResult, SessionID: dev.Session(), Data: data}); err != nil {
			panic(err)
		}
	}
}
