package askuser

// Races between the ways a question ends and the events devices are sent, driven by a
// store and a transport whose steps can be held back. Internal: the store wraps the
// memory store.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

type ctxKey struct{}

// afterPut, as a context key, holds a gate that Put waits for after recording.
type afterPut struct{}

var errUnreachable = errors.New("store unreachable")

// hookStore wraps the memory store: Put blocks while the ctx carries a gate, End can fail
// or block after succeeding.
type hookStore struct {
	*memoryStore
	putEntered chan struct{}
	mu         sync.Mutex
	failEnd    bool
	endGate    chan struct{} // when set, a winning End blocks until it is closed
	endEntered chan struct{}
}

func newHookStore() *hookStore {
	return &hookStore{memoryStore: newMemoryStore(), putEntered: make(chan struct{}, 16), endEntered: make(chan struct{}, 16)}
}

func (s *hookStore) Put(ctx context.Context, rec Record) (Record, bool, error) {
	if g, ok := ctx.Value(ctxKey{}).(chan struct{}); ok {
		s.putEntered <- struct{}{}
		<-g
	}
	rec, created, err := s.memoryStore.Put(ctx, rec)
	if g, ok := ctx.Value(afterPut{}).(chan struct{}); ok {
		s.putEntered <- struct{}{}
		<-g
	}
	return rec, created, err
}

func (s *hookStore) End(ctx context.Context, rec Record) (bool, error) {
	s.mu.Lock()
	fail, gate := s.failEnd, s.endGate
	s.mu.Unlock()
	if fail {
		return false, errUnreachable
	}
	ok, err := s.memoryStore.End(ctx, rec)
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

func (t *recTransport) Send(ctx context.Context, ev Event) error {
	t.mu.Lock()
	g := t.askGate
	t.mu.Unlock()
	if ev.Type == EventAsk && g != nil {
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

func answerEv(session SessionID, id string) Event {
	ev, err := NewEvent(EventResult, session, ResultData{RequestID: id, Answers: []Answer{{Question: "Which framework?", SelectedLabels: []string{"Vue"}}}})
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
		if d.Waiting(s) {
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
	if d.Waiting(s) {
		t.Error("the question is still pending, with no caller waiting for it")
	}
	if err := d.HandleEvent(context.Background(), answerEv(s, "x")); !errors.Is(err, ErrNotPending) {
		t.Errorf("an answer to it got %v, want ErrNotPending", err)
	}
	want := []string{EventAsk + ":x", EventResolved + ":x"}
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
	if err := d.HandleEvent(context.Background(), answerEv(s, "x")); err != nil {
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
	go func() { done <- d.HandleEvent(context.Background(), answerEv(s, "x")) }()
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
	want := []string{EventAsk + ":x", EventResolved + ":x"}
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
	go func() { errc <- d.HandleEvent(context.Background(), answerEv(s, "x")) }()
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
	want := []string{EventAsk + ":x", EventResolved + ":x", EventAsk + ":x", EventResolved + ":x"}
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
		ev := tr.events()
		for j, e := range ev {
			want := EventAsk + ":x"
			if j%2 == 1 {
				want = EventResolved + ":x"
			}
			if e != want {
				t.Fatalf("round %d: events %v", i, ev)
			}
		}
		if len(ev)%2 != 0 {
			t.Fatalf("round %d: a question left unresolved: %v", i, ev)
		}
	}
}
