package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A replica's watch whose consumer stays alive (its heartbeats come) but delivers
// nothing finds itself behind the stream's leader at its audits, and starts again: its
// device is told of an answer given on another replica.
func TestStarvedWatchStartsAgain(t *testing.T) {
	rs := threeReplicas(t, nil, nil)
	s := askuser.StringSession("starved")
	d1, d2 := rs[0].devices.Connect(s), rs[1].devices.Connect(s)
	ch := dispatch(rs[1], s, "q", deployArgs)
	recv(t, d1, wire.EventAsk)
	recv(t, d2, wire.EventAsk)
	before := rs[0].store.Snapshots()
	rs[0].store.StarveWatch()
	if err := d2.Send(context.Background(), answerEvent(s, "q", "Yes", "")); err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	if res := result(t, ch); res.Outcome != askuser.Answered {
		t.Fatalf("the call got %+v", res)
	}
	if r := resolvedOf(t, recv(t, d1, wire.EventResolved)); r.RequestID != "q" || r.Outcome != askuser.Answered {
		t.Fatalf("the starved replica's device was told %+v", r)
	}
	late := time.Since(answered)
	t.Logf("the starved replica's device was told of the answer %v after it", late.Round(time.Millisecond))
	if n := rs[0].store.Snapshots(); n <= before {
		t.Errorf("the watch did not start again (%d snapshots, %d before)", n, before)
	}
	if late > endsBound {
		t.Errorf("told %v after the answer, more than %v", late, endsBound)
	}
}

// A replica away for longer than a question's whole life in the bucket (it times out
// meanwhile; its end is kept Keep, then its removal's marker Keep) comes back to a snapshot without the question's
// key: its watch cannot tell from the snapshot, asks the stream's leader, which has no
// message of the key either, and ends the question as timed out for its device.
func TestQuestionGoneWhileAway(t *testing.T) {
	nodes := startCluster(t, 3)
	const keep = 2 * time.Second
	sopts := &cluster.Options{Replicas: 3, Keep: keep}
	dopts := &askuser.Options{Timeout: keep}
	r1 := newReplica(t, "r1", nodes[0].url(), sopts, dopts, nats.IgnoreDiscoveredServers())
	r2 := newReplica(t, "r2", urls(nodes[1:]), sopts, dopts)
	s := askuser.StringSession("away")
	d1, d2 := r1.devices.Connect(s), r2.devices.Connect(s)
	ch := dispatch(r2, s, "q", deployArgs)
	recv(t, d1, wire.EventAsk)
	recv(t, d2, wire.EventAsk)
	nodes[0].stop()
	// r2's call ends the question at its expiry, while r1 is away.
	if res := result(t, ch); res.Outcome != askuser.TimedOut {
		t.Fatalf("the call got %+v", res)
	}
	// The bucket keeps the end, then the marker of its removal, each Keep.
	js, err := jetstream.New(connect(t, urls(nodes[1:])))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the bucket empty", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		st, err := js.Stream(ctx, bucketStream)
		return err == nil && st.CachedInfo().State.Msgs == 0
	})
	nodes[0].start()
	r := resolvedOf(t, recv(t, d1, wire.EventResolved))
	if r.RequestID != "q" || r.Outcome != askuser.TimedOut {
		t.Fatalf("the replica back was told %+v", r)
	}
	waitFor(t, "nothing pending on r1", func() bool { return len(r1.tr.Pending(s)) == 0 })
}
