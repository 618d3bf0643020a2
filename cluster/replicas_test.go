package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// The guarantees across replicas, each with its test. Replicas here are in one process,
// each with its own NATS connection, store, transport, dispatcher and devices; the test
// of a replica killed outright runs replicas as processes (kill_test.go).

const deployArgs = `{"questions":[{"question":"Deploy now?","header":"Deploy","options":[{"label":"Yes","description":"Ship it"},{"label":"No","description":"Wait"}],"multiSelect":false}]}`

const otherArgs = `{"questions":[{"question":"Roll back?","header":"Rollback","options":[{"label":"Yes","description":"Undo"},{"label":"No","description":"Keep"}],"multiSelect":false}]}`

// answerEvent is a device's answer to the deploy question: label, or Other text.
func answerEvent(session askuser.SessionID, id, label, other string) wire.Event {
	a := map[string]any{"question": "Deploy now?", "selectedLabels": []string{}, "customInput": nil}
	if label != "" {
		a["selectedLabels"] = []string{label}
	}
	if other != "" {
		a["customInput"] = other
	}
	ev, _ := wire.NewEvent(wire.EventResult, session, map[string]any{"requestId": id, "answers": []any{a}})
	return ev
}

// recv returns the device's next event of type typ, skipping others.
func recv(t testing.TB, d *askusertest.Device, typ string) wire.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	for {
		ev, err := d.Recv(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", typ, err)
		}
		if ev.Type == typ {
			return ev
		}
	}
}

// drain returns the events queued for d now, and those that come within a moment.
func drain(d *askusertest.Device) []wire.Event {
	var out []wire.Event
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		ev, err := d.Recv(ctx)
		cancel()
		if err != nil {
			return out
		}
		out = append(out, ev)
	}
}

func resolvedOf(t testing.TB, ev wire.Event) wire.ResolvedData {
	t.Helper()
	var r wire.ResolvedData
	if err := json.Unmarshal(ev.Data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// threeReplicas starts one NATS server and three replicas on it.
func threeReplicas(t testing.TB, sopts *cluster.Options, dopts *askuser.Options) []*replica {
	n := startNode(t)
	if sopts == nil {
		sopts = &cluster.Options{Storage: jetstream.MemoryStorage}
	}
	var rs []*replica
	for i := range 3 {
		rs = append(rs, newReplica(t, fmt.Sprintf("r%d", i+1), n.url(), sopts, dopts))
	}
	return rs
}

// dispatch runs a call in a goroutine; the result comes on the channel.
func dispatch(r *replica, session askuser.SessionID, id, args string) chan askuser.Result {
	ch := make(chan askuser.Result, 1)
	go func() {
		ch <- r.d.Dispatch(context.Background(), askuser.ToolCall{Session: session, ID: id, Name: askuser.ToolName, Arguments: json.RawMessage(args)})
	}()
	return ch
}

func result(t testing.TB, ch chan askuser.Result) askuser.Result {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-time.After(failsafe):
		t.Fatal("the call never returned")
	}
	return askuser.Result{}
}

// Guarantee 1: a question asked on any replica reaches every device of the session on
// every replica, once per device, including devices that join later on any replica.
func TestQuestionReachesEveryReplica(t *testing.T) {
	checkLeaks(t)
	rs := threeReplicas(t, nil, nil)
	s := askuser.IntSession(123)
	early := []*askusertest.Device{rs[0].devices.Connect(s), rs[1].devices.Connect(s), rs[2].devices.Connect(s)}
	// The string session "123" is another session: its device sees nothing.
	stranger := rs[2].devices.Connect(askuser.StringSession("123"))
	ch := dispatch(rs[0], s, "call-1", deployArgs)
	for _, d := range early {
		if ask := recv(t, d, wire.EventAsk); ask.RequestID() != "call-1" || ask.SessionID != s {
			t.Fatalf("ask %s of %v", ask.RequestID(), ask.SessionID)
		}
	}
	late := []*askusertest.Device{rs[1].devices.Connect(s), rs[2].devices.Connect(s)}
	for _, d := range late {
		if ask := recv(t, d, wire.EventAsk); ask.RequestID() != "call-1" {
			t.Fatalf("a late device was shown %s", ask.RequestID())
		}
	}
	if err := late[1].Send(context.Background(), answerEvent(s, "call-1", "Yes", "")); err != nil {
		t.Fatal(err)
	}
	res := result(t, ch)
	if res.Outcome != askuser.Answered || res.Answers[0].SelectedLabels[0] != "Yes" {
		t.Fatalf("result %+v", res)
	}
	for i, d := range append(early, late...) {
		rest := drain(d)
		asks, resolved := 0, 0
		for _, ev := range rest {
			switch ev.Type {
			case wire.EventAsk:
				asks++
			case wire.EventResolved:
				resolved++
				if r := resolvedOf(t, ev); r.Outcome != askuser.Answered || r.Answers[0].SelectedLabels[0] != "Yes" {
					t.Errorf("device %d: resolved %+v", i, r)
				}
			}
		}
		if asks != 0 || resolved != 1 {
			t.Errorf("device %d got %d more asks and %d resolutions, want 0 and 1: %v", i, asks, resolved, rest)
		}
	}
	if evs := drain(stranger); len(evs) != 0 {
		t.Errorf("the string session's device got %v", evs)
	}
}

// Guarantee 1, the join rule across replicas, under load: devices join and leave on
// every replica while questions are asked and answered on every replica; each device
// sees each question it is shown exactly once, and its end.
func TestJoinRuleAcrossReplicas(t *testing.T) {
	checkLeaks(t)
	rs := threeReplicas(t, nil, nil)
	s := askuser.StringSession("join")
	const questions = 40
	var wg sync.WaitGroup
	stop := make(chan struct{})
	type seenBy struct {
		asks, ends map[string]int
	}
	var mu sync.Mutex
	var all []*seenBy
	for i := range 6 {
		wg.Go(func() {
			for round := 0; ; round++ {
				select {
				case <-stop:
					return
				default:
				}
				d := rs[(i+round)%3].devices.Connect(s)
				sb := &seenBy{asks: map[string]int{}, ends: map[string]int{}}
				deadline := time.Now().Add(time.Duration(20+10*i) * time.Millisecond)
				for time.Now().Before(deadline) {
					ctx, cancel := context.WithDeadline(context.Background(), deadline)
					ev, err := d.Recv(ctx)
					cancel()
					if err != nil {
						break
					}
					switch ev.Type {
					case wire.EventAsk:
						sb.asks[ev.RequestID()]++
					case wire.EventResolved:
						sb.ends[ev.RequestID()]++
					}
				}
				d.Close()
				mu.Lock()
				all = append(all, sb)
				mu.Unlock()
			}
		})
	}
	answerer := rs[2].devices.Connect(s)
	var calls sync.WaitGroup
	for q := range questions {
		id := fmt.Sprintf("q%d", q)
		ch := dispatch(rs[q%3], s, id, deployArgs)
		for {
			ev := recv(t, answerer, wire.EventAsk)
			if ev.RequestID() == id {
				break
			}
		}
		if err := answerer.Send(context.Background(), answerEvent(s, id, "No", "")); err != nil {
			t.Fatal(err)
		}
		calls.Go(func() {
			if res := result(t, ch); res.Outcome != askuser.Answered {
				t.Errorf("%s: %v", id, res.Outcome)
			}
		})
	}
	calls.Wait()
	close(stop)
	wg.Wait()
	for _, sb := range all {
		for id, n := range sb.asks {
			if n != 1 {
				t.Errorf("a device was shown %s %d times", id, n)
			}
		}
		for id, n := range sb.ends {
			if n != 1 {
				t.Errorf("a device was told %d times that %s ended", n, id)
			}
		}
	}
}

// Guarantee 2: devices on different replicas answer at once; exactly one answer is
// accepted, the others are refused as not pending, and the model gets exactly the
// winner's answer.
func TestFirstAnswerWinsAcrossReplicas(t *testing.T) {
	checkLeaks(t)
	rs := threeReplicas(t, nil, nil)
	for round := range 10 {
		s := askuser.StringSession(fmt.Sprintf("race-%d", round))
		var devs []*askusertest.Device
		for i := range 6 {
			devs = append(devs, rs[i%3].devices.Connect(s))
		}
		ch := dispatch(rs[round%3], s, "call", deployArgs)
		for _, d := range devs {
			recv(t, d, wire.EventAsk)
		}
		errs := make([]error, len(devs))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, d := range devs {
			wg.Go(func() {
				<-start
				errs[i] = d.Send(context.Background(), answerEvent(s, "call", "", fmt.Sprintf("device %d", i)))
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: devices %d and %d were both accepted", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, wire.ErrNotPending):
				t.Fatalf("round %d: device %d refused with %v, want not pending", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no answer accepted", round)
		}
		res := result(t, ch)
		if res.Outcome != askuser.Answered || *res.Answers[0].CustomInput != fmt.Sprintf("device %d", winner) {
			t.Fatalf("round %d: the model got %+v, the winner was device %d", round, res.Answers, winner)
		}
		for i, d := range devs {
			r := resolvedOf(t, recv(t, d, wire.EventResolved))
			if *r.Answers[0].CustomInput != fmt.Sprintf("device %d", winner) {
				t.Errorf("device %d was told the answer was %q", i, *r.Answers[0].CustomInput)
			}
		}
	}
}

// Guarantee 3: a cancel on any replica ends the session's questions on every replica
// with "Session cancelled".
func TestCancelFromAnyReplica(t *testing.T) {
	checkLeaks(t)
	rs := threeReplicas(t, nil, nil)
	s := askuser.IntSession(7)
	other := askuser.IntSession(8)
	dev := rs[1].devices.Connect(s)
	otherDev := rs[1].devices.Connect(other)
	a := dispatch(rs[0], s, "a", deployArgs)
	b := dispatch(rs[1], s, "b", otherArgs)
	keep := dispatch(rs[0], other, "c", deployArgs)
	recv(t, dev, wire.EventAsk)
	recv(t, dev, wire.EventAsk)
	// The other session's question must be pending on every replica before the
	// cancel, or the check below could pass or fail by timing alone.
	recv(t, otherDev, wire.EventAsk)
	if n := rs[2].d.CancelSession(s); n != 2 {
		t.Fatalf("CancelSession ended %d questions, want 2", n)
	}
	for _, ch := range []chan askuser.Result{a, b} {
		if res := result(t, ch); res.Outcome != askuser.Cancelled || res.Content != `{"error": "Session cancelled"}` {
			t.Fatalf("result %+v", res)
		}
	}
	for range 2 {
		if r := resolvedOf(t, recv(t, dev, wire.EventResolved)); r.Outcome != askuser.Cancelled {
			t.Fatalf("resolved %+v", r)
		}
	}
	if !(len(rs[1].d.Pending(other)) > 0) {
		t.Fatal("the other session's question was ended too")
	}
	rs[0].d.CancelSession(other)
	result(t, keep)
}

// Guarantee 3: a question that several replicas wait for times out once, not once per
// replica: one end is recorded, one resolution reaches each device, and every caller
// gets the timeout.
func TestTimeoutEndsOnce(t *testing.T) {
	checkLeaks(t)
	var ends atomic.Int32
	dopts := &askuser.Options{Timeout: 300 * time.Millisecond, Observer: observe.Hooks{OnEnd: func(e observe.Observation) {
		if e.Outcome == askuser.TimedOut {
			ends.Add(1)
		}
	}}}
	rs := threeReplicas(t, nil, dopts)
	s := askuser.StringSession("slow")
	dev := rs[2].devices.Connect(s)
	var chs []chan askuser.Result
	for _, r := range rs {
		chs = append(chs, dispatch(r, s, "same-call", deployArgs))
	}
	for _, ch := range chs {
		if res := result(t, ch); res.Outcome != askuser.TimedOut {
			t.Fatalf("result %+v", res)
		}
	}
	if n := ends.Load(); n != 1 {
		t.Fatalf("the question ended %d times", n)
	}
	evs := drain(dev)
	var asks, resolved int
	for _, ev := range evs {
		switch ev.Type {
		case wire.EventAsk:
			asks++
		case wire.EventResolved:
			resolved++
		}
	}
	if asks != 1 || resolved != 1 {
		t.Fatalf("the device got %d asks and %d resolutions: %v", asks, resolved, evs)
	}
}

// A question whose every waiter is gone (its replica closed, its run not resumed) is
// ended as timed out by a replica after its expiry and the grace, so that every device
// clears it; a run resumed later gets the timeout at once.
func TestUnattendedQuestionExpires(t *testing.T) {
	checkLeaks(t)
	sopts := &cluster.Options{Storage: jetstream.MemoryStorage, ExpireGrace: 200 * time.Millisecond}
	rs := threeReplicas(t, sopts, &askuser.Options{Timeout: 300 * time.Millisecond})
	s := askuser.StringSession("abandoned")
	dev := rs[1].devices.Connect(s)
	ch := dispatch(rs[0], s, "lost", deployArgs)
	recv(t, dev, wire.EventAsk)
	rs[0].d.Close() // the run is gone; the question stays in the bucket
	if res := result(t, ch); res.Outcome != askuser.Shutdown {
		t.Fatalf("result %+v", res)
	}
	if r := resolvedOf(t, recv(t, dev, wire.EventResolved)); r.Outcome != askuser.TimedOut || r.RequestID != "lost" {
		t.Fatalf("resolved %+v", r)
	}
	if res := result(t, dispatch(rs[2], s, "lost", deployArgs)); res.Outcome != askuser.TimedOut {
		t.Fatalf("resumed: %+v", res)
	}
}

// Guarantee 4, in one process: the replica that asked closes (a deploy) while its
// question waits; a device on another replica answers it; the run resumed on a third
// replica with the same tool-call id and arguments gets that answer at once, and nobody
// is asked twice. The same id with other arguments is refused.
func TestResumeOnAnotherReplica(t *testing.T) {
	checkLeaks(t)
	rs := threeReplicas(t, nil, nil)
	s := askuser.StringSession("deploy")
	dev := rs[1].devices.Connect(s)
	ch := dispatch(rs[0], s, "toolu_01", deployArgs)
	recv(t, dev, wire.EventAsk)
	rs[0].d.Close()
	result(t, ch)
	// Still pending, on every replica.
	if !(len(rs[2].d.Pending(s)) > 0) || len(askusertest.Questions(rs[1].d, s)) != 1 {
		t.Fatal("the question did not outlive its replica")
	}
	late := rs[2].devices.Connect(s)
	if ask := recv(t, late, wire.EventAsk); ask.RequestID() != "toolu_01" {
		t.Fatal(ask)
	}
	if err := dev.Send(context.Background(), answerEvent(s, "toolu_01", "Yes", "")); err != nil {
		t.Fatal(err)
	}
	res := result(t, dispatch(rs[2], s, "toolu_01", deployArgs))
	if res.Outcome != askuser.Answered || res.Answers[0].SelectedLabels[0] != "Yes" {
		t.Fatalf("resumed: %+v", res)
	}
	if res := result(t, dispatch(rs[1], s, "toolu_01", otherArgs)); res.Outcome != askuser.Invalid {
		t.Fatalf("the same id with other arguments: %+v", res)
	}
	for _, d := range []*askusertest.Device{dev, late} {
		for _, ev := range drain(d) {
			if ev.Type == wire.EventAsk {
				t.Fatalf("asked again: %v", ev)
			}
		}
	}
}

// Guarantee 4, resumed before the answer: the resumed run waits for the same question.
func TestResumeWaitsForTheSameQuestion(t *testing.T) {
	checkLeaks(t)
	rs := threeReplicas(t, nil, nil)
	s := askuser.StringSession("deploy")
	dev := rs[1].devices.Connect(s)
	ch := dispatch(rs[0], s, "toolu_02", deployArgs)
	recv(t, dev, wire.EventAsk)
	rs[0].d.Close()
	result(t, ch)
	resumed := dispatch(rs[2], s, "toolu_02", deployArgs)
	if err := dev.Send(context.Background(), answerEvent(s, "toolu_02", "No", "")); err != nil {
		t.Fatal(err)
	}
	if res := result(t, resumed); res.Outcome != askuser.Answered || res.Answers[0].SelectedLabels[0] != "No" {
		t.Fatalf("resumed: %+v", res)
	}
	for _, ev := range drain(dev) {
		if ev.Type == wire.EventAsk {
			t.Fatalf("asked again: %v", ev)
		}
	}
}

// Other events a host sends (a transcript, a status) reach the session's devices on
// every replica, once.
func TestHostEventsReachEveryReplica(t *testing.T) {
	checkLeaks(t)
	rs := threeReplicas(t, nil, nil)
	s := askuser.IntSession(5)
	devs := []*askusertest.Device{rs[0].devices.Connect(s), rs[1].devices.Connect(s), rs[2].devices.Connect(s)}
	ev, _ := wire.NewEvent("agent_message", s, map[string]any{"text": "hello"})
	if err := rs[1].tr.Send(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	for i, d := range devs {
		got := recv(t, d, "agent_message")
		if string(got.Data) != `{"text":"hello"}` {
			t.Errorf("device %d got %s", i, got.Data)
		}
		if more := drain(d); len(more) != 0 {
			t.Errorf("device %d got more: %v", i, more)
		}
	}
}

// Presence across replicas: a session has a device when any replica has one, so that
// FailWithoutDevice and FailOnDisconnect act on the whole cluster.
func TestPresenceAcrossReplicas(t *testing.T) {
	checkLeaks(t)
	rs := threeReplicas(t, nil, &askuser.Options{FailWithoutDevice: true, FailOnDisconnect: true})
	s := askuser.StringSession("here")
	if rs[0].tr.Connected(s) {
		t.Fatal("connected with no device")
	}
	if res := result(t, dispatch(rs[0], s, "nobody", deployArgs)); res.Outcome != askuser.Undelivered {
		t.Fatalf("with no device anywhere: %+v", res)
	}
	// Replica 3's device first, until replicas 1 and 2 (with none of their own) see it:
	// its presence subscription has reached their NATS servers.
	d2 := rs[2].devices.Connect(s)
	waitFor(t, "presence seen from the other replicas", func() bool { return rs[0].tr.Connected(s) && rs[1].tr.Connected(s) })
	d1 := rs[1].devices.Connect(s)
	ch := dispatch(rs[0], s, "someone", deployArgs)
	recv(t, d1, wire.EventAsk)
	d1.Close() // replica 2's last device: replica 3 still has one
	time.Sleep(100 * time.Millisecond)
	if !(len(rs[0].d.Pending(s)) > 0) {
		t.Fatal("the question ended while a device was still connected to another replica")
	}
	d2.Close() // the last device of the cluster
	if res := result(t, ch); res.Outcome != askuser.Disconnected {
		t.Fatalf("after the last device went: %+v", res)
	}
}

// deadlineOf is the bound Inbound of a replica's transport: it notes the deadline of
// each device event's context, then hands the event to the dispatcher.
type deadlineOf struct {
	*askuser.Dispatcher
	deadlines chan time.Duration // how far off each deadline was; -1 for none
}

// The rest of the Inbound, from the dispatcher's face.
func (d deadlineOf) Pending(s askuser.SessionID) []wire.AskData {
	return askusertest.Questions(d.Dispatcher, s)
}
func (d deadlineOf) PendingApprovals(s askuser.SessionID) []wire.ApprovalData {
	return askusertest.Approvals(d.Dispatcher, s)
}
func (d deadlineOf) Disconnected(askuser.SessionID) {}

func (d deadlineOf) HandleEvent(ctx context.Context, ev wire.Event) error {
	left := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	d.deadlines <- left
	return d.Dispatcher.Deliver(ctx, ev)
}

// A device's event reaches the dispatcher with one deadline of the store's
// RequestTimeout, when its transport gave it none, so that the dispatcher's read and end
// of the question share it (a refusal without quorum takes one timeout); a deadline of
// the transport's own is kept.
func TestHandleEventHasOneDeadline(t *testing.T) {
	checkLeaks(t)
	const timeout = 3 * time.Second
	rs := threeReplicas(t, &cluster.Options{Storage: jetstream.MemoryStorage, RequestTimeout: timeout}, nil)
	in := deadlineOf{Dispatcher: rs[1].d, deadlines: make(chan time.Duration, 2)}
	rs[1].tr.Bind(in)
	s := askuser.StringSession("deadline")
	dev := rs[1].devices.Connect(s)
	ch := dispatch(rs[0], s, "q", deployArgs)
	recv(t, dev, wire.EventAsk)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dev.Send(ctx, answerEvent(s, "q", "Yes", "")); err != nil {
		t.Fatal(err)
	}
	if left := <-in.deadlines; left < timeout {
		t.Errorf("the device's own deadline, a minute off, became %v", left)
	}
	if err := dev.Send(context.Background(), answerEvent(s, "q", "No", "")); !errors.Is(err, wire.ErrNotPending) {
		t.Fatalf("a second answer got %v", err)
	}
	if left := <-in.deadlines; left < 0 || left > timeout {
		t.Errorf("an event without a deadline reached the dispatcher with %v left, want at most the request timeout %v", left, timeout)
	}
	if res := result(t, ch); res.Outcome != askuser.Answered {
		t.Fatalf("result %+v", res)
	}
}
