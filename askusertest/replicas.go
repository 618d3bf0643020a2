package askusertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// Replica is one of two dispatchers that share a [store.Store], as [TestReplicas]
// takes them: the dispatcher, and the in-process transport its devices connect to.
type Replica struct {
	// Dispatcher uses the shared store.
	Dispatcher *askuser.Dispatcher
	// Devices is where the replica's devices connect. It is bound to whatever takes
	// their events on this replica: the dispatcher itself, or a transport that spans the
	// replicas and passes them on (as cluster.Transport does, with this as its local
	// transport).
	Devices *Transport
}

// TestReplicas checks what two dispatchers sharing one Store, each with its own
// transport, must give the devices, which is what a shared store needs of the transport
// (see [store.Store]):
//
//   - a question asked on either replica is shown to the devices of both, those
//     connected before the ask and those that join after, once each;
//   - an answer from a device of either replica ends the call on the other, and the
//     resolution reaches the devices of both;
//   - a session cancelled on either replica ends the other's call, and the devices of
//     both are told.
//
// A transport local to each replica (a wshub.Hub alone, say) fails it: the devices of
// one replica are never shown the other's questions, nor told how they ended. Each call
// of open returns two fresh replicas; the check uses a session of its own, and waits at
// most a few seconds for each event.
func TestReplicas(t *testing.T, open func(t *testing.T) (a, b Replica)) {
	t.Helper()
	a, b := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := checkReplicas(ctx, a, b, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

var replicasSeq atomic.Int64

// replicaQuestion is the question set the check asks.
const replicaQuestion = `{"questions":[{"question":"Which replica answers?","header":"Replica","multiSelect":false,"options":[{"label":"A","description":"the first"},{"label":"B","description":"the second"}]}]}`

// checkReplicas is TestReplicas' check: it returns the first promise broken. wait bounds
// each wait for an event.
func checkReplicas(ctx context.Context, a, b Replica, wait time.Duration) error {
	session := askuser.StringSession(fmt.Sprintf("replicas-%d-%d", time.Now().UnixNano(), replicasSeq.Add(1)))
	expect := func(d *Device, where, typ, id string) (wire.Event, error) {
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		for {
			ev, err := d.Recv(wctx)
			if err != nil {
				return wire.Event{}, fmt.Errorf("askusertest: a device of %s was not sent %s of %q: %w", where, typ, id, err)
			}
			if ev.Type != wire.EventAsk && ev.Type != wire.EventResolved {
				continue // a host's own event
			}
			if ev.Type == typ && ev.RequestID() == id {
				return ev, nil
			}
			return wire.Event{}, fmt.Errorf("askusertest: a device of %s was sent %s of %q while waiting for %s of %q", where, ev.Type, ev.RequestID(), typ, id)
		}
	}
	outcome := func(ev wire.Event) askuser.Outcome {
		var r wire.ResolvedData
		if json.Unmarshal(ev.Data, &r) != nil {
			return 0
		}
		return r.Outcome
	}
	call := func(r Replica, id string) chan askuser.Result {
		ch := make(chan askuser.Result, 1)
		go func() {
			ch <- r.Dispatcher.Dispatch(ctx, askuser.ToolCall{Session: session, ID: id, Arguments: json.RawMessage(replicaQuestion)})
		}()
		return ch
	}
	returned := func(ch chan askuser.Result, where string) (askuser.Result, error) {
		select {
		case res := <-ch:
			return res, nil
		case <-time.After(wait):
			return askuser.Result{}, fmt.Errorf("askusertest: the call on %s did not return", where)
		}
	}

	da, db := a.Devices.Connect(session), b.Devices.Connect(session)
	defer da.Close()
	defer db.Close()

	// Asked on the first replica, answered on the second.
	const first = "replicas-answered"
	res := call(a, first)
	if _, err := expect(da, "the asking replica", wire.EventAsk, first); err != nil {
		return err
	}
	if _, err := expect(db, "the other replica", wire.EventAsk, first); err != nil {
		return err
	}
	answer, _ := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: first, Answers: []askuser.Answer{
		{Question: "Which replica answers?", SelectedLabels: []string{"B"}},
	}})
	if err := db.Send(ctx, answer); err != nil {
		return fmt.Errorf("askusertest: an answer from a device of the other replica was refused: %w", err)
	}
	got, err := returned(res, "the asking replica")
	if err != nil {
		return err
	}
	if got.Outcome != askuser.Answered || len(got.Answers) != 1 || len(got.Answers[0].SelectedLabels) != 1 || got.Answers[0].SelectedLabels[0] != "B" {
		return fmt.Errorf("askusertest: the asking replica's call ended %v with %v, want the other replica's device's answer", got.Outcome, got.Answers)
	}
	for _, d := range []struct {
		dev   *Device
		where string
	}{{da, "the asking replica"}, {db, "the answering replica"}} {
		ev, err := expect(d.dev, d.where, wire.EventResolved, first)
		if err != nil {
			return err
		}
		if o := outcome(ev); o != askuser.Answered {
			return fmt.Errorf("askusertest: a device of %s was told %v, want answered", d.where, o)
		}
	}

	// Asked on the second replica, seen by a device that joins the first after the ask,
	// and cancelled from the first.
	const second = "replicas-cancelled"
	res = call(b, second)
	if _, err := expect(db, "the asking replica", wire.EventAsk, second); err != nil {
		return err
	}
	if _, err := expect(da, "the other replica", wire.EventAsk, second); err != nil {
		return err
	}
	late := a.Devices.Connect(session)
	defer late.Close()
	if _, err := expect(late, "the other replica (joining after the ask)", wire.EventAsk, second); err != nil {
		return err
	}
	if n := a.Dispatcher.CancelSession(session); n != 1 {
		return fmt.Errorf("askusertest: CancelSession on the other replica ended %d questions, want 1", n)
	}
	got, err = returned(res, "the asking replica")
	if err != nil {
		return err
	}
	if got.Outcome != askuser.Cancelled || !errors.Is(got.Err, askuser.ErrCancelled) {
		return fmt.Errorf("askusertest: the asking replica's call ended %v, want cancelled", got.Outcome)
	}
	for _, d := range []struct {
		dev   *Device
		where string
	}{{db, "the asking replica"}, {da, "the cancelling replica"}, {late, "the cancelling replica (joined late)"}} {
		ev, err := expect(d.dev, d.where, wire.EventResolved, second)
		if err != nil {
			return err
		}
		if o := outcome(ev); o != askuser.Cancelled {
			return fmt.Errorf("askusertest: a device of %s was told %v, want cancelled", d.where, o)
		}
	}
	return nil
}
