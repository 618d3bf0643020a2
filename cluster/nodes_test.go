package cluster_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/cluster/natstest"
	"github.com/askuser-go/askuser/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The guarantees when NATS servers crash, on a three-node NATS cluster with R3 storage
// whose nodes are processes of their own (natstest), killed with SIGKILL: no Raft
// leadership is handed over, as none is when a machine dies. The figures each test logs
// are what docs/CLUSTER.md's failure table reports; a soak repeats each measurement:
//
//	go test -race -run TestNodeCrashes ./cluster -crash.runs 10 -timeout 60m -v
var crashRuns = flag.Int("crash.runs", 1, "how many times TestNodeCrashes kills a node in each of its measurements")

// crashBusy loads the machine for a soak of the crash tests: as many goroutines of the
// test's process spinning, beside the NATS processes. A soak of the scenario of a quorum
// lost twice, on a machine loaded as a busy host is:
//
//	go test -race -run 'TestNodeCrashes/quorum_lost_twice' ./cluster -crash.runs 20 -crash.busy 4 -timeout 60m -v
var crashBusy = flag.Int("crash.busy", 0, "goroutines spinning beside TestNodeCrashes/quorum_lost_twice")

// crashConn is the client side of a replica's connection, as docs/CLUSTER.md advises:
// reconnect for ever, try a server that was just tried again after 250 ms, and take a
// server that answers no ping within 2 × 2 s as dead (a machine that crashed closes no
// connection).
var crashConn = []nats.Option{
	nats.MaxReconnects(-1),
	nats.ReconnectWait(250 * time.Millisecond),
	nats.ReconnectJitter(100*time.Millisecond, 100*time.Millisecond),
	nats.PingInterval(2 * time.Second),
	nats.MaxPingsOutstanding(2),
	nats.Timeout(time.Second),
}

// Generous bounds of what the crash tests measure, for a loaded 2-core machine; the
// measured figures are in docs/CLUSTER.md.
const (
	// A stream's followers elect a new leader 4 to 9 s after the old one's last
	// heartbeat (nats-server's fixed Raft election timeout); then a try in flight
	// gives up, and the next goes to the new leader.
	stallBound = 30 * time.Second
	// A watch's consumer lost with its server is noticed after two missed heartbeats
	// (1 s); then a new consumer, a snapshot, and the changes handed on.
	lostConsumerBound = 6 * time.Second
)

// The bucket's stream.
const bucketStream = "KV_" + cluster.DefaultBucket

// controlJS is a JetStream context of the test's own, to ask the cluster who leads what.
func controlJS(t testing.TB, nodes []*natstest.Node) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(connect(t, natstest.URLs(nodes...)))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// preferring lists the nodes' URLs with nodes[i] first, for a replica that connects to
// it and fails over to the others, in order (with inOrder).
func preferring(nodes []*natstest.Node, i int) string {
	var order []*natstest.Node
	for k := range nodes {
		order = append(order, nodes[(i+k)%len(nodes)])
	}
	return natstest.URLs(order...)
}

// inOrder is crashConn for a replica that connects to its servers in the order given.
var inOrder = append(append([]nats.Option(nil), crashConn...), nats.DontRandomize())

// answerUntilTaken sends ev from d until it is taken or refused for a reason other than
// the store being unavailable; it returns the last verdict and how many were
// unavailable.
func answerUntilTaken(d *askusertest.Device, ev wire.Event) (int, error) {
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

// unavailableAsk reports whether a call ended because NATS did not take its question:
// the host's run then calls again with the same id, as after a restart.
func unavailableAsk(res askuser.Result) bool {
	return res.Outcome == askuser.Undelivered && errors.Is(res.Err, cluster.ErrUnavailable)
}

// summary is the least, the median and the greatest of ds, one per run.
func summary(ds []time.Duration) string { return summaryOf(ds, "runs") }

// summaryOf is the least, the median and the greatest of ds, counted as what.
func summaryOf(ds []time.Duration, what string) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return "none"
	}
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
	return fmt.Sprintf("%d %s: min %v, median %v, max %v", len(s), what, r(s[0]), r(s[len(s)/2]), r(s[len(s)-1]))
}

// TestNodeCrashes runs the crash tests side by side: each waits mostly for Raft
// elections, which cost little CPU. One leak check covers them all.
func TestNodeCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("NATS nodes as processes")
	}
	checkLeaks(t)
	t.Run("stream leader killed", testStreamLeaderKilled)
	t.Run("follower killed under a watch", testFollowerKilledUnderWatch)
	t.Run("quorum lost", testQuorumLost)
	t.Run("quorum lost twice", testQuorumLostTwice)
	t.Run("a replica's only server killed", testReplicaServerKilled)
	t.Run("a watch started again without a leader", testWatchWithoutLeader)
}

// Guarantee 5: the stream's leader is killed with SIGKILL in the middle of a run of
// questions asked on one replica and answered from another; no answer is lost and none
// is counted twice. Measured: from the kill to the acceptance of the first answer sent
// after it (the stall), bounded by stallBound.
func testStreamLeaderKilled(t *testing.T) {
	t.Parallel()
	nodes := natstest.StartCluster(t, 3)
	nc := connect(t, natstest.URLs(nodes...))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// When each new leader of the bucket's stream is elected.
	elections := make(chan time.Time, 100)
	if _, err := nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED."+bucketStream, func(*nats.Msg) { elections <- time.Now() }); err != nil {
		t.Fatal(err)
	}
	sopts := &cluster.Options{Replicas: 3}
	var rs []*replica
	for i := range 3 {
		rs = append(rs, newReplica(t, fmt.Sprintf("r%d", i+1), preferring(nodes, i), sopts, nil, inOrder...))
	}
	const sessions = 6
	var mu sync.Mutex
	var accepted [][2]time.Time // when each answer was sent, and when it was taken
	var calls, unavailable, resumed int
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for si := range sessions {
		wg.Go(func() {
			s := askuser.StringSession(fmt.Sprintf("leader-%d", si))
			asker, answerer := rs[si%3], rs[(si+1)%3]
			dev := answerer.devices.Connect(s)
			defer dev.Close()
			for round := 0; ; round++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("s%d-q%d", si, round)
				token := "token " + id
				ch := dispatch(asker, s, id, deployArgs)
				for {
					res, asked := awaitAsk(t, dev, id, ch)
					if asked {
						break
					}
					if !unavailableAsk(res) {
						t.Errorf("%s ended before its ask reached the device: %+v", id, res)
						return
					}
					mu.Lock()
					resumed++
					mu.Unlock()
					ch = dispatch(asker, s, id, deployArgs)
				}
				sent := time.Now()
				n, err := answerUntilTaken(dev, answerEvent(s, id, "", token))
				// After a refusal for unavailability, the first try may have been
				// recorded after all: not pending then means it was.
				if err != nil && !(n > 0 && errors.Is(err, wire.ErrNotPending)) {
					t.Errorf("%s: the answer was refused: %v (after %d refusals as unavailable)", id, err, n)
					return
				}
				mu.Lock()
				accepted = append(accepted, [2]time.Time{sent, time.Now()})
				unavailable += n
				mu.Unlock()
				res := result(t, ch)
				for unavailableAsk(res) { // the call gave up meanwhile: resumed, it has the answer
					res = result(t, dispatch(asker, s, id, deployArgs))
				}
				if res.Outcome != askuser.Answered || *res.Answers[0].CustomInput != token {
					t.Errorf("%s: the model got %+v", id, res)
					return
				}
				mu.Lock()
				calls++
				mu.Unlock()
				time.Sleep(50 * time.Millisecond) // a person's pace, well, and room for the tests beside
			}
		})
	}
	progress := func() int { mu.Lock(); defer mu.Unlock(); return len(accepted) }
	// The first answer sent after at, taken: how long after at.
	acceptedAfter := func(at time.Time) (time.Duration, bool) {
		mu.Lock()
		defer mu.Unlock()
		first, ok := time.Duration(0), false
		for _, a := range accepted {
			if a[0].After(at) && (!ok || a[1].Sub(at) < first) {
				first, ok = a[1].Sub(at), true
			}
		}
		return first, ok
	}
	var stalls, electedIn []time.Duration
	for run := 0; run < *crashRuns && !t.Failed(); run++ {
		before := progress()
		waitFor(t, "progress", func() bool { return progress() >= before+30 || t.Failed() })
		leader := natstest.StreamLeader(t, nodes, js, bucketStream)
		// A node that also leads the meta group takes with it the placing of new
		// consumers (a watch whose consumer was on it waits for that election too).
		also := ""
		if natstest.MetaLeader(t, nodes) == leader {
			also = ", also the meta leader"
		}
		for len(elections) > 0 {
			<-elections
		}
		var snaps []int // each replica's snapshots so far: which watches start again
		for _, r := range rs {
			snaps = append(snaps, r.store.Snapshots())
		}
		killedAt := time.Now()
		leader.Kill()
		var stall time.Duration
		waitFor(t, "an answer sent after the kill and accepted", func() bool {
			var ok bool
			stall, ok = acceptedAfter(killedAt)
			return ok || t.Failed()
		})
		var elected time.Duration
		select {
		case at := <-elections:
			elected = at.Sub(killedAt)
		case <-time.After(failsafe):
			t.Errorf("no election was announced")
		}
		restarted := 0
		for i, r := range rs {
			if r.store.Snapshots() > snaps[i] {
				restarted++
			}
		}
		stalls, electedIn = append(stalls, stall), append(electedIn, elected)
		t.Logf("run %d: killed the stream's leader %s%s; a new leader was elected %v after the kill, and the first answer sent after it was accepted %v after it; %d of 3 watches had started again by then",
			run+1, leader.Name, also, elected.Round(time.Millisecond), stall.Round(time.Millisecond), restarted)
		if stall > stallBound {
			t.Errorf("the first answer sent after the leader's kill was accepted %v after it, more than %v", stall, stallBound)
		}
		leader.Start()
	}
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d calls answered, none lost or doubled; %d answers refused as unavailable and sent again, %d asks resumed; from the kill to the new leader's election: %s; to the first answer sent after it accepted: %s",
		calls, unavailable, resumed, summary(electedIn), summary(stalls))
}

// A NATS node is killed under a replica's watch: the replica's own connection is to
// another node, so nothing tells it but the consumer's missing heartbeats. A question
// asked on that replica is answered from another; the replica's device is told, and its
// waiting call returns, within lostConsumerBound of the answer. A replica connected to
// the killed node reconnects elsewhere; its device is told too.
func testFollowerKilledUnderWatch(t *testing.T) {
	t.Parallel()
	nodes := natstest.StartCluster(t, 3)
	js := controlJS(t, nodes)
	sopts := &cluster.Options{Replicas: 3}
	openStore(t, natstest.URLs(nodes...), sopts) // the bucket, to find its leader
	var lateWatch, lateReconnect []time.Duration
	for run := 0; run < *crashRuns && !t.Failed(); run++ {
		// The node to kill: neither the stream's leader nor the meta leader, so that
		// only the watch's consumer goes with it.
		leader := natstest.StreamLeader(t, nodes, js, bucketStream)
		meta := natstest.MetaLeader(t, nodes)
		var victim, other *natstest.Node
		for _, n := range nodes {
			switch {
			case victim == nil && n != leader && n != meta:
				victim = n
			case other == nil && n != victim:
				other = n
			}
		}
		if victim == nil || other == nil {
			t.Fatalf("no node to kill: the stream leader is %s, the meta leader %s", leader.Name, meta.Name)
		}
		iv, io := slices.Index(nodes, victim), slices.Index(nodes, other)
		watcher := newReplica(t, fmt.Sprintf("watcher-%d", run), preferring(nodes, io), sopts, nil, inOrder...)
		reconnecting := newReplica(t, fmt.Sprintf("reconnecting-%d", run), preferring(nodes, iv), sopts, nil, inOrder...)
		answerer := newReplica(t, fmt.Sprintf("answerer-%d", run), preferring(nodes, io), sopts, nil, inOrder...)
		// The watcher's consumer on the victim: start its watch again until it is.
		for tries := 0; ; tries++ {
			if on, err := natstest.ConsumerLeader(nodes, js, bucketStream, watcher.store.WatchConsumer()); on == victim {
				break
			} else if tries == 50 {
				t.Fatalf("the watch's consumer never landed on %s (%v)", victim.Name, err)
			}
			n := watcher.store.Snapshots()
			watcher.store.RestartWatch()
			waitFor(t, "the watch started again", func() bool { return watcher.store.Snapshots() > n })
		}
		s := askuser.StringSession(fmt.Sprintf("watched-%d", run))
		wd, rd, ad := watcher.devices.Connect(s), reconnecting.devices.Connect(s), answerer.devices.Connect(s)
		ch := dispatch(watcher, s, "q", deployArgs)
		for _, d := range []*askusertest.Device{wd, rd, ad} {
			recv(t, d, wire.EventAsk)
		}
		victim.Kill()
		if _, err := answerUntilTaken(ad, answerEvent(s, "q", "Yes", "")); err != nil {
			t.Fatal(err)
		}
		answeredAt := time.Now()
		// When each device is told of the end, after the answer.
		told := func(d *askusertest.Device) chan time.Duration {
			ch := make(chan time.Duration, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), failsafe)
				defer cancel()
				for {
					ev, err := d.Recv(ctx)
					if err != nil || ev.Type == wire.EventResolved {
						ch <- time.Since(answeredAt)
						return
					}
				}
			}()
			return ch
		}
		wTold, rTold := told(wd), told(rd)
		res := result(t, ch)
		callLate := time.Since(answeredAt)
		if res.Outcome != askuser.Answered || res.Answers[0].SelectedLabels[0] != "Yes" {
			t.Fatalf("the watcher's call got %+v", res)
		}
		w, r := <-wTold, <-rTold
		lateWatch, lateReconnect = append(lateWatch, max(callLate, w)), append(lateReconnect, r)
		t.Logf("run %d: killed %s under the watch (the stream leader %s, the meta leader %s); after the answer, the watcher's call returned in %v, its device was told in %v, the reconnecting replica's device in %v",
			run+1, victim.Name, leader.Name, meta.Name, callLate.Round(time.Millisecond), w.Round(time.Millisecond), r.Round(time.Millisecond))
		if late := max(callLate, w, r); late > lostConsumerBound {
			t.Errorf("the replicas learnt of the answer %v after it, more than %v", late, lostConsumerBound)
		}
		victim.Start()
		for _, r := range []*replica{watcher, reconnecting, answerer} {
			r.close()
		}
	}
	t.Logf("a follower killed under a watch, after the answer: the watcher's call and device told in %s; the reconnecting replica's device in %s", summary(lateWatch), summary(lateReconnect))
}

// Guarantee 5: with two of three nodes killed there is no quorum. A device's answer is
// refused within one RequestTimeout (plus scheduling), whichever node survives, with an
// error that says to try again (wrapping ErrUnavailable); asking fails as Undelivered;
// the question stays pending, and once quorum is back the same answer is taken and
// reaches the call.
func testQuorumLost(t *testing.T) {
	for _, survivorLeads := range []bool{true, false} {
		name := "the survivor follows"
		if survivorLeads {
			name = "the survivor leads"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nodes := natstest.StartCluster(t, 3)
			js := controlJS(t, nodes)
			const timeout = 2 * time.Second
			sopts := &cluster.Options{Replicas: 3, RequestTimeout: timeout}
			openStore(t, natstest.URLs(nodes...), sopts) // the bucket, to find its leader
			leader := natstest.StreamLeader(t, nodes, js, bucketStream)
			survivor := leader
			if !survivorLeads {
				survivor = nodes[(slices.Index(nodes, leader)+1)%3]
			}
			is := slices.Index(nodes, survivor)
			asker := newReplica(t, "asker", preferring(nodes, is), sopts, nil, inOrder...)
			answerer := newReplica(t, "answerer", preferring(nodes, is), sopts, nil, inOrder...)
			s := askuser.StringSession("quorum")
			dev := answerer.devices.Connect(s)
			ch := dispatch(asker, s, "q", deployArgs)
			recv(t, dev, wire.EventAsk)
			for _, n := range nodes {
				if n != survivor {
					n.Kill()
				}
			}
			// Several tries, as the survivor goes from leading without quorum to
			// stepping down: each refused within one timeout.
			var took []time.Duration
			for range 3 {
				start := time.Now()
				err := dev.Send(context.Background(), answerEvent(s, "q", "Yes", ""))
				d := time.Since(start)
				took = append(took, d)
				if !errors.Is(err, cluster.ErrUnavailable) {
					t.Fatalf("without quorum the answer got %v after %v", err, d)
				}
				if d > timeout+time.Second {
					t.Errorf("without quorum the answer was refused after %v, more than the request timeout %v", d, timeout)
				}
			}
			t.Logf("without quorum (%s), the device is told %s; refused after %s", name, wire.ErrorEvent(s, "q", cluster.ErrUnavailable).Data, summary(took))
			if res := result(t, dispatch(asker, s, "new", deployArgs)); !unavailableAsk(res) {
				t.Fatalf("asking without quorum: %+v", res)
			}
			for _, n := range nodes {
				n.Start()
			}
			// A refused try may still be written once the quorum is back (a write that
			// timed out is not known to have failed): not pending then, and the call
			// has that answer.
			_, err := answerUntilTaken(dev, answerEvent(s, "q", "Yes", ""))
			if err != nil && !errors.Is(err, wire.ErrNotPending) {
				t.Fatalf("with quorum back: %v", err)
			}
			res := result(t, ch)
			for unavailableAsk(res) { // its Put timed out, taken or not: resumed, it has the answer
				res = result(t, dispatch(asker, s, "q", deployArgs))
			}
			if res.Outcome != askuser.Answered || res.Answers[0].SelectedLabels[0] != "Yes" {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

// Guarantee 6: the only server a replica knows is killed while a question it waits for
// is answered elsewhere; when the server is back, the replica reconnects, its watch
// starts again from a snapshot, its waiting call ends with the answer, and its device is
// told of that end and of a cancel made meanwhile.
func testReplicaServerKilled(t *testing.T) {
	t.Parallel()
	nodes := natstest.StartCluster(t, 3)
	sopts := &cluster.Options{Replicas: 3}
	r1 := newReplica(t, "r1", preferring(nodes, 0), sopts, nil, inOrder...)
	// Only this node, not even the others it would learn of: it cannot fail over.
	r2 := newReplica(t, "r2", nodes[2].URL(), sopts, nil, append(crashConn, nats.IgnoreDiscoveredServers())...)
	s := askuser.StringSession("cut")
	d1 := r1.devices.Connect(s)
	d2 := r2.devices.Connect(s)
	first := dispatch(r1, s, "q1", deployArgs)
	recv(t, d1, wire.EventAsk)
	recv(t, d2, wire.EventAsk)
	// The same call, waiting on r2 too.
	jd, sig := joiner(t, r2)
	joined := make(chan askuser.Result, 1)
	go func() {
		joined <- jd.Dispatch(context.Background(), askuser.ToolCall{Session: s, ID: "q1", Arguments: []byte(deployArgs)})
	}()
	<-sig.put
	second := dispatch(r1, s, "q2", otherArgs)
	recv(t, d1, wire.EventAsk)
	recv(t, d2, wire.EventAsk)

	nodes[2].Kill() // r2 is cut off
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
	nodes[2].Start()
	res := result(t, joined)
	if res.Outcome != askuser.Answered || res.Answers[0].SelectedLabels[0] != "No" {
		t.Fatalf("r2 after reconnecting: %+v", res)
	}
	ends := map[string]askuser.Outcome{}
	for len(ends) < 2 {
		r := resolvedOf(t, recv(t, d2, wire.EventResolved))
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
		if err == nil && ev.Type == wire.EventAsk && ev.RequestID() == id {
			return askuser.Result{}, true
		}
	}
	t.Fatalf("%s: neither its ask nor its end came", id)
	return askuser.Result{}, false
}
