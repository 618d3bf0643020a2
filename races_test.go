package askuser

// Races between the ways a question ends and the events devices are sent, driven by a
// store and a transport whose steps can be held back. Internal: the store wraps the
// memory store.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

type ctxKey struct{}

// afterPut, as a context key, holds a gate that Put waits for after recording.
type afterPut struct{}

var errUnreachable = errors.New("store unreachable")

// hookStore wraps the memory store: Put blocks while the ctx carries a gate, End can fail
// or block after succeeding.
type hookStore struct {
	*memStore
	putEntered chan struct{}
	mu         sync.Mutex
	failEnd    bool
	endGate    chan struct{} // when set, a winning End blocks until it is closed
	endEntered chan struct{}
}

func newHookStore() *hookStore {
	return &hookStore{memStore: newMemStore(), putEntered: make(chan struct{}, 16), endEntered: make(chan struct{}, 16)}
}

func (s *hookStore) Put(ctx context.Context, rec store.Record) (store.Record, bool, error) {
	if g, ok := ctx.Value(ctxKey{}).(chan struct{}); ok {
		s.putEntered <- struct{}{}
		<-g
	}
	rec, created, err := s.memStore.Put(ctx, rec)
	if g, ok := ctx.Value(afterPut{}).(chan struct{}); ok {
		s.putEntered <- struct{}{}
		<-g
	}
	return rec, created, err
}

func (s *hookStore) End(ctx context.Context, rec store.Record) (bool, error) {
	s.mu.Lock()
	fail, gate := s.failEnd, s.endGate
	s.mu.Unlock()
	if fail {
		return false, errUnreachable
	}
	ok, err := s.memStore.End(ctx, rec)
	if ok && gate != nil {
		s.endEntered <- struct{}{}
		<-gate
	}
	return ok, err
}

// recTransport records every event it is given, in order; an ask of a gated session
// blocks until the gate is closed.
type recTransport struct {
	mu       sync.Mutex
	log      []string
	askGate  chan struct{}
	askEnter chan struct{}
}

func (t *recTransport) Send(ctx context.Context, ev wire.Event) error {
	t.mu.Lock()
	g := t.askGate
	t.mu.Unlock()
	if ev.Type == wire.EventAsk && g != nil {
		t.askEnter <- struct{}{}
		<-g
	}
	t.mu.Lock()
	t.log = append(t.log, ev.Type+":"+ev.RequestID())
	t.mu.Unlock()
	return nil
}

func (t *recTransport) events() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.log...)
}

const oneQ = `{"questions":[` + Q1 + `]}`
const otherQ = `{"questions":[{"question":"Which DB?","header":"DB","options":[{"label":"PG","description":"x"},{"label":"My","description":"y"}],"multiSelect":false}]}`

func answerEv(session SessionID, id string) wire.Event {
	ev, err := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: id, Answers: []Answer{{Question: "Which framework?", SelectedLabels: []string{"Vue"}}}})
	if err != nil {
		panic(err)
	}
	return ev
}

func dispatchAsyncI(ctx context.Context, d *Dispatcher, s SessionID, id, args string) <-chan Result {
	ch := make(chan Result, 1)
	go func() { ch <- d.Dispatch(ctx, ToolCall{Session: s, ID: id, Arguments: json.RawMessage(args)}) }()
	return ch
}

func waitPending(t *testing.T, d *Dispatcher, s SessionID) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if d.waiting(s) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("never pending")
}

// TestStoreFailureAtTimeoutEndsTheCall: when the store cannot record the timeout, the
// call still returns, with the outcome and the store's error, instead of waiting for an
// end that nobody will deliver.
func TestStoreFailureAtTimeoutEndsTheCall(t *testing.T) {
	st := newHookStore()
	d := New(&recTransport{}, &Options{Store: st, Timeout: 50 * time.Millisecond})
	defer d.Close()
	s := IntSession(1)
	st.mu.Lock()
	st.failEnd = true
	st.mu.Unlock()
	select {
	case r := <-dispatchAsyncI(context.Background(), d, s, "x", oneQ):
		if r.Outcome != TimedOut || !errors.Is(r.Err, ErrTimeout) || !errors.Is(r.Err, errUnreachable) {
			t.Fatalf("got %v, %v; want TimedOut with the store's error", r.Outcome, r.Err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Dispatch still waiting 5s after its 50ms timeout, whose End failed")
	}
}

// cancelWhileRecording has caller A ask question x and wait, then caller B call with the
// same id and args, its Put held back at gate (a context key of hookStore: ctxKey{}
// before recording, afterPut{} after); then A's context ends, and B's Put goes on. It
// returns both calls' results.
func cancelWhileRecording(t *testing.T, gate any, args string) (d *Dispatcher, tr *recTransport, s SessionID, a, b <-chan Result) {
	st := newHookStore()
	tr = &recTransport{}
	d = New(tr, &Options{Store: st})
	t.Cleanup(func() { d.Close() })
	s = IntSession(1)
	ctxA, cancelA := context.WithCancel(context.Background())
	a = dispatchAsyncI(ctxA, d, s, "x", oneQ)
	waitPending(t, d, s)
	g := make(chan struct{})
	b = dispatchAsyncI(context.WithValue(context.Background(), gate, g), d, s, "x", args)
	<-st.putEntered
	cancelA()
	time.Sleep(20 * time.Millisecond) // A deciding whether it is the last caller
	close(g)
	return d, tr, s, a, b
}

// TestCancelWithACallerStillRecording: the last caller waiting for a question cancels
// while a second caller of the same id, with other questions, is still recording them.
// The second is refused (the id is taken by a pending question), and the first question
// must then end, not be left pending with nobody waiting.
func TestCancelWithACallerStillRecording(t *testing.T) {
	d, tr, s, a, b := cancelWhileRecording(t, ctxKey{}, otherQ)
	if r := <-b; r.Outcome != Invalid {
		t.Fatalf("B, whose questions differ: %v", r.Outcome)
	}
	if r := <-a; r.Outcome != Cancelled {
		t.Fatalf("A: %v", r.Outcome)
	}
	if d.waiting(s) {
		t.Error("the question is still pending, with no caller waiting for it")
	}
	if err := d.Deliver(context.Background(), answerEv(s, "x")); !errors.Is(err, wire.ErrNotPending) {
		t.Errorf("an answer to it got %v, want ErrNotPending", err)
	}
	want := []string{wire.EventAsk + ":x", wire.EventResolved + ":x"}
	if got := tr.events(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// TestCancelLeavesAJoinerWaiting: a caller that has just joined a question (same id,
// same questions; recorded, not yet waiting) when its only other caller cancels keeps
// waiting for it; it never gets the other caller's Cancelled.
func TestCancelLeavesAJoinerWaiting(t *testing.T) {
	d, _, s, a, b := cancelWhileRecording(t, afterPut{}, oneQ)
	if r := <-a; r.Outcome != Cancelled {
		t.Fatalf("A: %v", r.Outcome)
	}
	select {
	case r := <-b:
		t.Fatalf("B, still wanting its answer, returned %v", r.Outcome)
	case <-time.After(20 * time.Millisecond):
	}
	if err := d.Deliver(context.Background(), answerEv(s, "x")); err != nil {
		t.Fatal(err)
	}
	if r := <-b; r.Outcome != Answered {
		t.Fatalf("B: %v", r.Outcome)
	}
}

// TestEndDuringTheAskIsSentAfterIt: a device that joined and was shown a question from
// Pending answers it while its ask is still being sent. HandleEvent must not wait for
// the Send (a transport may end a question from inside Send), and devices must be told
// of the end after the ask.
func TestEndDuringTheAskIsSentAfterIt(t *testing.T) {
	tr := &recTransport{askEnter: make(chan struct{}, 1)}
	askGate := make(chan struct{})
	tr.askGate = askGate
	d := New(tr, nil)
	defer d.Close()
	s := IntSession(1)
	a := dispatchAsyncI(context.Background(), d, s, "x", oneQ)
	<-tr.askEnter
	done := make(chan error, 1)
	go func() { done <- d.Deliver(context.Background(), answerEv(s, "x")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("HandleEvent waited for the ask's Send")
	}
	tr.mu.Lock()
	tr.askGate = nil
	tr.mu.Unlock()
	close(askGate)
	if r := <-a; r.Outcome != Answered {
		t.Fatalf("got %v", r.Outcome)
	}
	want := []string{wire.EventAsk + ":x", wire.EventResolved + ":x"}
	if got := tr.events(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// TestReusedIDFollowsTheOldResolution: an id asked again right after its question ended
// (the memory store forgets ended questions at once) is asked after the old question's
// resolution has gone out: a transport keying panels by request id would otherwise close
// the new one on the old resolution.
func TestReusedIDFollowsTheOldResolution(t *testing.T) {
	st := newHookStore()
	tr := &recTransport{}
	d := New(tr, &Options{Store: st})
	defer d.Close()
	s := IntSession(1)
	a := dispatchAsyncI(context.Background(), d, s, "x", oneQ)
	waitPending(t, d, s)

	g := make(chan struct{})
	st.mu.Lock()
	st.endGate = g
	st.mu.Unlock()
	errc := make(chan error, 1)
	go func() { errc <- d.Deliver(context.Background(), answerEv(s, "x")) }()
	<-st.endEntered // ended in the store; its resolution not yet sent
	st.mu.Lock()
	st.endGate = nil
	st.mu.Unlock()

	c := dispatchAsyncI(context.Background(), d, s, "x", oneQ)
	time.Sleep(20 * time.Millisecond) // give the second call time to overtake, if it can
	close(g)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if r := <-a; r.Outcome != Answered {
		t.Fatalf("A: %v", r.Outcome)
	}
	waitPending(t, d, s)
	d.CancelSession(s)
	if r := <-c; r.Outcome != Cancelled {
		t.Fatalf("C: %v", r.Outcome)
	}
	want := []string{wire.EventAsk + ":x", wire.EventResolved + ":x", wire.EventAsk + ":x", wire.EventResolved + ":x"}
	if got := tr.events(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// TestNoAskAfterClose: Close waits for a call recording its question in a shared store,
// so that no ask goes out after Close has returned.
func TestNoAskAfterClose(t *testing.T) {
	st := newHookStore()
	tr := &recTransport{}
	d := New(tr, &Options{Store: st})
	s := IntSession(1)
	gate := make(chan struct{})
	ch := dispatchAsyncI(context.WithValue(context.Background(), ctxKey{}, gate), d, s, "x", oneQ)
	<-st.putEntered
	closed := make(chan struct{})
	go func() { d.Close(); close(closed) }()
	time.Sleep(20 * time.Millisecond)
	close(gate)
	<-closed
	n := len(tr.events())
	r := <-ch
	if r.Outcome != Shutdown {
		t.Errorf("got %v, want Shutdown", r.Outcome)
	}
	if got := tr.events(); len(got) > n {
		t.Errorf("sent after Close returned: %v", got[n:])
	}
}

// checkAlternate fails t unless the events of question x are asks and resolutions in
// turn, starting with an ask and ending with a resolution.
func checkAlternate(t *testing.T, round int, ev []string) {
	t.Helper()
	for j, e := range ev {
		want := wire.EventAsk + ":x"
		if j%2 == 1 {
			want = wire.EventResolved + ":x"
		}
		if e != want {
			t.Fatalf("round %d: events %v", round, ev)
		}
	}
	if len(ev)%2 != 0 {
		t.Fatalf("round %d: a question left unresolved: %v", round, ev)
	}
}

// TestEventOrderUnderCancelStorm: two callers of one id while the session is cancelled
// over and over; every device must see ask and resolution alternate, starting with an
// ask. Runs many short rounds with the default store.
func TestEventOrderUnderCancelStorm(t *testing.T) {
	s := IntSession(1)
	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	for i := range rounds {
		tr := &recTransport{}
		d := New(tr, nil)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 2 {
			wg.Go(func() {
				<-start
				d.Dispatch(context.Background(), ToolCall{Session: s, ID: "x", Arguments: json.RawMessage(oneQ)})
			})
		}
		stop := make(chan struct{})
		cancelled := make(chan struct{})
		go func() {
			defer close(cancelled)
			<-start
			for {
				select {
				case <-stop:
					return
				default:
					d.CancelSession(s)
				}
			}
		}()
		close(start)
		wg.Wait()
		close(stop)
		<-cancelled
		d.Close()
		checkAlternate(t, i, tr.events())
	}
}

// gatedEndStore wraps the memory store, standing for a shared store (Options.Store): when
// a gate is armed, the next End blocks until the gate is closed and then fails, as a
// store that timed out would, changing nothing.
type gatedEndStore struct {
	*memStore
	mu      sync.Mutex
	gate    chan struct{}
	entered chan struct{}
}

func (s *gatedEndStore) End(ctx context.Context, rec store.Record) (bool, error) {
	s.mu.Lock()
	g := s.gate
	s.gate = nil
	s.mu.Unlock()
	if g != nil {
		s.entered <- struct{}{}
		<-g
		return false, errUnreachable
	}
	return s.memStore.End(ctx, rec)
}

// checkNothingAfterClose fails t if question x of session s is no longer pending in the
// shared store st, or if tr was sent anything beyond its first n events: a closed
// dispatcher leaves a shared store's questions to the others, and sends nothing.
func checkNothingAfterClose(t *testing.T, st *memStore, tr *recTransport, s SessionID, n int) {
	t.Helper()
	if _, err := st.Get(context.Background(), s, "x"); err != nil {
		t.Errorf("after Close, the shared store's question was ended: %v", err)
	}
	if got := tr.events(); len(got) > n {
		t.Errorf("events sent after Close returned: %v", got[n:])
	}
}

// lockWaiters returns how many callers wait for k to be let go.
func lockWaiters(d *Dispatcher, k key) int {
	d.keys.mu.Lock()
	defer d.keys.mu.Unlock()
	if s := d.keys.m[k]; s != nil {
		return s.waiters
	}
	return 0
}

// TestCancellerEndsNothingAfterClose: Close with a shared store leaves the questions
// pending there. A caller whose ctx ended just before Close, waiting for its question's
// key (held by an answer whose End is slow and then fails), gets Shutdown from Close and
// must not then end the question as Cancelled (Close emptied the table: it is "alone").
func TestCancellerEndsNothingAfterClose(t *testing.T) {
	st := &gatedEndStore{memStore: newMemStore(), entered: make(chan struct{}, 1)}
	tr := &recTransport{}
	d := New(tr, &Options{Store: st})
	s := IntSession(1)
	ctxA, cancelA := context.WithCancel(context.Background())
	a := dispatchAsyncI(ctxA, d, s, "x", oneQ)
	waitPending(t, d, s)

	gate := make(chan struct{})
	st.mu.Lock()
	st.gate = gate
	st.mu.Unlock()
	herr := make(chan error, 1)
	go func() { herr <- d.Deliver(context.Background(), answerEv(s, "x")) }()
	<-st.entered // the answer holds the key, its End on its way

	cancelA()
	k := key{s, "x"}
	var r Result
	returned := false
	for deadline := time.Now().Add(5 * time.Second); lockWaiters(d, k) == 0; time.Sleep(time.Millisecond) {
		select {
		case r = <-a:
			returned = true
		default:
		}
		if returned {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A neither returned nor waits for the key")
		}
	}
	d.Close()
	nAfterClose := len(tr.events())
	close(gate)
	if err := <-herr; !errors.Is(err, errUnreachable) {
		t.Fatalf("HandleEvent: %v", err)
	}
	if !returned {
		r = <-a
	}
	t.Logf("A returned %v", r.Outcome)
	if r.Outcome != Shutdown {
		return // A cancelled before Close: its question may end as Cancelled
	}
	checkNothingAfterClose(t, st.memStore, tr, s, nAfterClose)
}

// TestDisconnectedAfterCloseEndsNothing: with DisconnectGrace 0, a disconnection the
// transport (which Close does not close) reports after Close ends nothing.
func TestDisconnectedAfterCloseEndsNothing(t *testing.T) {
	st := newHookStore()
	tr := &recTransport{}
	d := New(tr, &Options{Store: st, FailOnDisconnect: true})
	s := IntSession(1)
	a := dispatchAsyncI(context.Background(), d, s, "x", oneQ)
	waitPending(t, d, s)
	d.Close()
	if r := <-a; r.Outcome != Shutdown {
		t.Fatalf("A: %v", r.Outcome)
	}
	n := len(tr.events())
	d.disconnected(s) // the transport, not closed by Close, sees the last device go
	checkNothingAfterClose(t, st.memStore, tr, s, n)
}

// TestGraceTimerAfterCloseEndsNothing: a disconnect grace timer that fired just before
// Close (its callback waiting for d.mu, held a moment by the test to force that order)
// ends nothing after Close has returned.
func TestGraceTimerAfterCloseEndsNothing(t *testing.T) {
	st := newHookStore()
	tr := &recTransport{}
	d := New(tr, &Options{Store: st, FailOnDisconnect: true, DisconnectGrace: 10 * time.Millisecond})
	s := IntSession(1)
	a := dispatchAsyncI(context.Background(), d, s, "x", oneQ)
	waitPending(t, d, s)
	d.disconnected(s) // grace timer armed, fires in 10ms

	d.mu.Lock()
	closed := make(chan struct{})
	go func() { d.Close(); close(closed) }() // queued on d.mu first
	time.Sleep(50 * time.Millisecond)        // the timer fires; its callback queues on d.mu after Close
	d.mu.Unlock()
	<-closed
	if r := <-a; r.Outcome != Shutdown {
		t.Fatalf("A: %v", r.Outcome)
	}
	n := len(tr.events())
	time.Sleep(50 * time.Millisecond)
	checkNothingAfterClose(t, st.memStore, tr, s, n)
}

// outageStore wraps the memory store as a shared store would behave while unreachable:
// once down, Put retries until its caller's ctx ends (as cluster.Store.Put does when
// the ctx has a deadline of its own), and fails then.
type outageStore struct {
	*memStore
	mu      sync.Mutex
	down    bool
	putting chan struct{}
}

func (s *outageStore) Put(ctx context.Context, rec store.Record) (store.Record, bool, error) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		s.putting <- struct{}{}
		<-ctx.Done()
		return store.Record{}, false, ctx.Err()
	}
	return s.memStore.Put(ctx, rec)
}

// outageWhileAsking has caller A ask question x and wait; then the store goes down and
// caller B, with a 10-minute deadline, asks id (x again, or another), its Put waiting for
// the store until its ctx ends (as cluster.Store.Put does when the ctx has a deadline of
// its own). It returns A's context's cancel and both calls' results.
func outageWhileAsking(t *testing.T, id string) (d *Dispatcher, cancelA func(), a, b <-chan Result) {
	st := &outageStore{memStore: newMemStore(), putting: make(chan struct{}, 1)}
	d = New(&recTransport{}, &Options{Store: st})
	t.Cleanup(func() { d.Close() })
	s := IntSession(1)
	ctxA, cancelA := context.WithCancel(context.Background())
	a = dispatchAsyncI(ctxA, d, s, "x", oneQ)
	waitPending(t, d, s)
	st.mu.Lock()
	st.down = true
	st.mu.Unlock()
	ctxB, cancelB := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancelB)
	b = dispatchAsyncI(ctxB, d, s, id, oneQ)
	<-st.putting // B holds its key, its Put waiting for the store
	return d, cancelA, a, b
}

// returns fails t unless ch yields a result of outcome want within 2 s.
func returns(t *testing.T, ch <-chan Result, want Outcome, who string) {
	t.Helper()
	select {
	case r := <-ch:
		if r.Outcome != want {
			t.Errorf("%s returned %v, want %v", who, r.Outcome, want)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("%s has not returned after 2 s", who)
	}
}

// TestCancelDoesNotWaitForAnotherCallersPut: caller A waits for question x; caller B
// (the same tool call retried by a run, say) calls x again while the store is
// unreachable, and holds x's key for as long as its Put takes. A's ctx ends: A returns
// at once, leaving to B whether x ends.
func TestCancelDoesNotWaitForAnotherCallersPut(t *testing.T) {
	_, cancelA, a, _ := outageWhileAsking(t, "x")
	cancelA()
	returns(t, a, Cancelled, "A, whose ctx ended,")
}

// TestCloseDoesNotWaitForASlowPut: the same, B asking another question, and Close
// instead of a cancel: A returns at once as Shutdown, and B's Put is cancelled, not
// waited for.
func TestCloseDoesNotWaitForASlowPut(t *testing.T) {
	d, _, a, b := outageWhileAsking(t, "y")
	go d.Close()
	returns(t, a, Shutdown, "A, after Close,")
	returns(t, b, Shutdown, "B, whose Put Close cancelled,")
}

// answeringTransport logs events; on an ask it sometimes answers from inside Send.
type answeringTransport struct {
	mu  sync.Mutex
	log []string
	d   *Dispatcher
	rnd func() int
}

func (t *answeringTransport) Send(ctx context.Context, ev wire.Event) error {
	t.mu.Lock()
	t.log = append(t.log, ev.Type+":"+ev.RequestID())
	t.mu.Unlock()
	if ev.Type == wire.EventAsk && t.rnd()%3 == 0 {
		_ = t.d.Deliver(ctx, answerEv(ev.SessionID, ev.RequestID()))
	}
	if ev.Type == wire.EventResolved && t.rnd()%5 == 0 {
		_ = t.d.Deliver(ctx, answerEv(ev.SessionID, ev.RequestID()))
	}
	if t.rnd()%4 == 0 {
		t.d.disconnected(ev.SessionID)
	}
	if t.rnd()%3 == 0 {
		time.Sleep(time.Duration(t.rnd()%100) * time.Microsecond)
	}
	return nil
}

type slowStore struct {
	*memStore
	rnd func() int
}

func (s *slowStore) Put(ctx context.Context, rec store.Record) (store.Record, bool, error) {
	time.Sleep(time.Duration(s.rnd()%100) * time.Microsecond)
	r, c, err := s.memStore.Put(ctx, rec)
	time.Sleep(time.Duration(s.rnd()%100) * time.Microsecond)
	return r, c, err
}

func (s *slowStore) End(ctx context.Context, rec store.Record) (bool, error) {
	time.Sleep(time.Duration(s.rnd()%100) * time.Microsecond)
	ok, err := s.memStore.End(ctx, rec)
	time.Sleep(time.Duration(s.rnd()%100) * time.Microsecond)
	return ok, err
}

// TestEndingsUnderStress: seeded rounds of six callers of one id, half of them
// cancelled at random, with a transport that answers and disconnects from inside Send,
// answers and disconnections from outside, and (every other round) a store with random
// delays. No caller hangs, a live caller never gets Cancelled, nothing is left pending,
// asks and resolutions alternate, and the key locks and the call table are left empty.
func TestEndingsUnderStress(t *testing.T) {
	s := IntSession(1)
	rounds := 100
	if testing.Short() {
		rounds = 20
	}
	for round := 0; round < rounds; round++ {
		var rmu sync.Mutex
		r := rand.New(rand.NewPCG(uint64(round), 7))
		rnd := func() int { rmu.Lock(); defer rmu.Unlock(); return r.IntN(1000) }
		tr := &answeringTransport{rnd: rnd}
		var opts *Options
		if round%2 == 1 {
			opts = &Options{Store: &slowStore{newMemStore(), rnd}, FailOnDisconnect: true}
		} else {
			opts = &Options{FailOnDisconnect: true}
		}
		d := New(tr, opts)
		tr.d = d
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var bwg sync.WaitGroup
		bwg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				switch rnd() % 4 {
				case 0:
					_ = d.Deliver(context.Background(), answerEv(s, "x"))
				case 1:
					d.disconnected(s)
				}
				time.Sleep(time.Duration(rnd()%50) * time.Microsecond)
			}
		})
		type res struct {
			cancelled bool
			r         Result
		}
		out := make(chan res, 8)
		for i := 0; i < 6; i++ {
			cancel := rnd()%2 == 0
			delay := time.Duration(rnd()%300) * time.Microsecond
			wg.Go(func() {
				ctx, c := context.WithCancel(context.Background())
				defer c()
				if cancel {
					go func() { time.Sleep(delay); c() }()
				}
				rr := d.Dispatch(ctx, ToolCall{Session: s, ID: "x", Arguments: json.RawMessage(oneQ)})
				out <- res{cancel, rr}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			close(stop)
			t.Fatalf("round %d: callers hang", round)
		}
		close(stop)
		bwg.Wait()
		close(out)
		for x := range out {
			if !x.cancelled && x.r.Outcome == Cancelled {
				t.Errorf("round %d: a caller with a live ctx got Cancelled", round)
			}
		}
		d.keys.mu.Lock()
		nk := len(d.keys.m)
		d.keys.mu.Unlock()
		d.calls.mu.Lock()
		nc, nu := len(d.calls.m), d.calls.unsettled
		d.calls.mu.Unlock()
		if nk != 0 || nc != 0 || nu != 0 {
			t.Errorf("round %d: leftover key states %d, waiters %d, unsettled %d", round, nk, nc, nu)
		}
		if d.waiting(s) {
			t.Errorf("round %d: pending with no caller", round)
		}
		d.Close()
		tr.mu.Lock()
		ev := append([]string(nil), tr.log...)
		tr.mu.Unlock()
		checkAlternate(t, round, ev)
	}
}
