package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
)

// The guarantees when NATS servers fail, on a three-node NATS cluster with R3 storage.

// streamLeader returns the node leading the bucket's stream, once there is one.
func streamLeader(t testing.TB, nodes []*node) *node {
	t.Helper()
	var leader *node
	waitFor(t, "a leader of the bucket's stream", func() bool {
		for _, n := range nodes {
			if s := n.server(); s != nil && s.JetStreamIsStreamLeader("$G", "KV_"+cluster.DefaultBucket) {
				leader = n
				return true
			}
		}
		return false
	})
	return leader
}

// answerUntilTaken sends ev from d until it is taken or refused for a reason other than
// the store being unavailable; it returns the last verdict and how many were
// unavailable.
func answerUntilTaken(d *askusertest.Device, ev askuser.Event) (int, error) {
	unavailable := 0
	deadline := time.Now().Add(failsafe)
	for {
		err := d.Send(context.Background(), ev)
		if !errors.Is(err, cluster.ErrUnavailable) || time.Now().After(deadline) {
			return unavailable, err
		}
		unavailable++
		time.Sleep(50 * time.Millisecond)
	}
}

// Guarantee 5: the stream's leader is killed in the middle of a run of questions asked
// on one replica and answered from another; no answer is lost and none is counted
// twice. The stall is measured and logged: how long no call completed around the kill.
func TestStreamLeaderLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster")
	}
	checkLeaks(t)
	nodes := startCluster(t, 3)
	sopts := &cluster.Options{Replicas: 3, RequestTimeout: 2 * time.Second}
	var rs []*replica
	for i := range 3 {
		// Each replica prefers another node, and fails over to the others.
		order := []*node{nodes[i], nodes[(i+1)%3], nodes[(i+2)%3]}
		rs = append(rs, newReplica(t, fmt.Sprintf("r%d", i+1), urls(order), sopts, nil))
	}
	const sessions, rounds = 6, 16
	var mu sync.Mutex
	var done []time.Time
	var unavailable int
	var killedAt time.Time
	var wg sync.WaitGroup
	for si := range sessions {
		wg.Go(func() {
			s := askuser.StringSession(fmt.Sprintf("leader-%d", si))
			asker, answerer := rs[si%3], rs[(si+1)%3]
			dev := answerer.devices.Connect(s)
			defer dev.Close()
			for round := range rounds {
				id := fmt.Sprintf("s%d-q%d", si, round)
				token := "token " + id
				ch := dispatch(asker, s, id, deployArgs)
				if res, ok := awaitAsk(t, dev, id, ch); !ok {
					t.Errorf("%s ended before its ask reached the device: %+v", id, res)
					return
				}
				n, err := answerUntilTaken(dev, answerEvent(s, id, "", token))
				mu.Lock()
				unavailable += n
				mu.Unlock()
				// After a refusal for unavailability, the first try may have been
				// recorded after all: not pending then means it was.
				if err != nil && !(n > 0 && errors.Is(err, askuser.ErrNotPending)) {
					rec, gerr := answerer.store.Get(context.Background(), s, id)
					t.Errorf("%s: the answer was refused: %v (after %d refusals as unavailable); the record: %+v %v", id, err, n, rec, gerr)
					return
				}
				var res askuser.Result
				select {
				case res = <-ch:
				case <-time.After(failsafe):
					rec, gerr := asker.store.Get(context.Background(), s, id)
					t.Errorf("%s: the call never returned; the record %+v %v; the asker's mirror %+v", id, rec, gerr, asker.tr.Pending(s))
					return
				}
				if res.Outcome != askuser.Answered || *res.Answers[0].CustomInput != token {
					t.Errorf("%s: the model got %+v", id, res)
					return
				}
				mu.Lock()
				done = append(done, time.Now())
				mu.Unlock()
			}
		})
	}
	// Kill the leader once a third of the calls are done; bring it back later.
	waitFor(t, "progress", func() bool { mu.Lock(); defer mu.Unlock(); return len(done) >= sessions*rounds/3 })
	leader := streamLeader(t, nodes)
	mu.Lock()
	killedAt = time.Now()
	mu.Unlock()
	leader.stop()
	waitFor(t, "progress after the kill", func() bool { mu.Lock(); defer mu.Unlock(); return len(done) >= 2*sessions*rounds/3 })
	leader.start()
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.SortFunc(done, func(a, b time.Time) int { return a.Compare(b) })
	var stall time.Duration
	for i := 1; i < len(done); i++ {
		if done[i].After(killedAt) {
			prev := done[i-1]
			if prev.Before(killedAt) {
				prev = killedAt
			}
			stall = max(stall, done[i].Sub(prev))
		}
	}
	firstAfter := time.Duration(0)
	for _, d := range done {
		if d.After(killedAt) {
			firstAfter = d.Sub(killedAt)
			break
		}
	}
	t.Logf("%d calls answered, none lost or doubled; after the leader's kill the first call completed in %v (longest pause %v); %d answers refused as unavailable and sent again", len(done), firstAfter, stall, unavailable)
}

// Guarantee 5: with two of three nodes down there is no quorum. A device's answer is
// refused with an error that says to try again (wrapping ErrUnavailable), the question
// stays pending, and once quorum is back the same answer is taken and reaches the call.
func TestQuorumLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster")
	}
	checkLeaks(t)
	nodes := startCluster(t, 3)
	sopts := &cluster.Options{Replicas: 3, RequestTimeout: time.Second}
	asker := newReplica(t, "asker", urls(nodes), sopts, nil)
	answerer := newReplica(t, "answerer", urls([]*node{nodes[2], nodes[0], nodes[1]}), sopts, nil)
	s := askuser.StringSession("quorum")
	dev := answerer.devices.Connect(s)
	ch := dispatch(asker, s, "q", deployArgs)
	recv(t, dev, askuser.EventAsk)

	survivor := nodes[0]
	for _, n := range nodes[1:] {
		n.stop()
	}
	_ = survivor
	var err error
	waitFor(t, "a refusal for want of quorum", func() bool {
		err = dev.Send(context.Background(), answerEvent(s, "q", "Yes", ""))
		if err == nil || errors.Is(err, askuser.ErrNotPending) {
			t.Fatalf("without quorum the answer got %v", err)
		}
		return errors.Is(err, cluster.ErrUnavailable)
	})
	t.Logf("without quorum, the device is told: %s", askuser.ErrorEvent(s, "q", err).Data)
	if res := result(t, dispatch(asker, s, "new", deployArgs)); res.Outcome != askuser.Undelivered || !errors.Is(res.Err, cluster.ErrUnavailable) {
		t.Fatalf("asking without quorum: %+v", res)
	}

	for _, n := range nodes[1:] {
		n.start()
	}
	// A refused try may still be written once the quorum is back (a write that timed out
	// is not known to have failed): not pending then, and the call has that answer.
	_, err = answerUntilTaken(dev, answerEvent(s, "q", "Yes", ""))
	if err != nil && !errors.Is(err, askuser.ErrNotPending) {
		t.Fatalf("with quorum back: %v", err)
	}
	if res := result(t, ch); res.Outcome != askuser.Answered || res.Answers[0].SelectedLabels[0] != "Yes" {
		t.Fatalf("result %+v", res)
	}
}

// Guarantee 6: a replica loses its NATS connection while a question it waits for is
// answered elsewhere; when it reconnects, its watch starts again from a snapshot, and
// its waiting call ends with the answer, its devices are told.
func TestReconnectRebuildsWatch(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster")
	}
	checkLeaks(t)
	nodes := startCluster(t, 3)
	sopts := &cluster.Options{Replicas: 3, RequestTimeout: 2 * time.Second}
	r1 := newReplica(t, "r1", nodes[0].url(), sopts, nil)
	r2 := newReplica(t, "r2", nodes[2].url(), sopts, nil) // only this node: it cannot fail over
	s := askuser.StringSession("cut")
	d1 := r1.devices.Connect(s)
	d2 := r2.devices.Connect(s)
	first := dispatch(r1, s, "q1", deployArgs)
	recv(t, d1, askuser.EventAsk)
	recv(t, d2, askuser.EventAsk)
	// The same call, waiting on r2 too.
	jd, sig := joiner(t, r2)
	joined := make(chan askuser.Result, 1)
	go func() {
		joined <- jd.Dispatch(context.Background(), askuser.ToolCall{Session: s, ID: "q1", Arguments: []byte(deployArgs)})
	}()
	<-sig.put
	second := dispatch(r1, s, "q2", otherArgs)
	recv(t, d1, askuser.EventAsk)
	recv(t, d2, askuser.EventAsk)

	nodes[2].stop() // r2 is cut off
	streamLeader(t, nodes)
	if _, err := answerUntilTaken(d1, answerEvent(s, "q1", "No", "")); err != nil {
		t.Fatal(err)
	}
	if res := result(t, first); res.Outcome != askuser.Answered {
		t.Fatalf("r1: %+v", res)
	}
	waitFor(t, "q2 cancelled", func() bool { return r1.d.CancelSession(s) == 1 })
	if res := result(t, second); res.Outcome != askuser.Cancelled {
		t.Fatalf("q2: %+v", res)
	}
	nodes[2].start()
	res := result(t, joined)
	if res.Outcome != askuser.Answered || res.Answers[0].SelectedLabels[0] != "No" {
		t.Fatalf("r2 after reconnecting: %+v", res)
	}
	ends := map[string]askuser.Outcome{}
	for len(ends) < 2 {
		r := resolvedOf(t, recv(t, d2, askuser.EventResolved))
		ends[r.RequestID] = r.Outcome
	}
	if ends["q1"] != askuser.Answered || ends["q2"] != askuser.Cancelled {
		t.Fatalf("r2's device was told %v", ends)
	}
}

// awaitAsk waits for the ask of id to reach d, or for its call to end first.
func awaitAsk(t testing.TB, d *askusertest.Device, id string, ch chan askuser.Result) (askuser.Result, bool) {
	t.Helper()
	deadline := time.Now().Add(failsafe)
	for time.Now().Before(deadline) {
		select {
		case res := <-ch:
			return res, false
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		ev, err := d.Recv(ctx)
		cancel()
		if err == nil && ev.Type == askuser.EventAsk && ev.RequestID() == id {
			return askuser.Result{}, true
		}
	}
	t.Fatalf("%s: neither its ask nor its end came", id)
	return askuser.Result{}, false
}
