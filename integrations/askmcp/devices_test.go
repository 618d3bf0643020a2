package askmcp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// devices is the person's side of a dispatcher in these tests: an wire.Transport
// that records every event sent to a session's devices, from which a test answers
// with Dispatcher.HandleEvent as a device would. It is the only device these tests
// need; wshub_test.go has real browser-panel connections.
type devices struct {
	mu     sync.Mutex
	events []wire.Event
	wake   chan struct{}
}

func newDevices() *devices { return &devices{wake: make(chan struct{}, 1)} }

func (t *devices) Send(_ context.Context, ev wire.Event) error {
	t.mu.Lock()
	t.events = append(t.events, ev)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
	return nil
}

// count returns how many events were sent.
func (t *devices) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.events)
}

// next waits for the next event of the given type after the first `after` events, and
// returns it with its index.
func (t *devices) next(tb testing.TB, typ string, after int) (wire.Event, int) {
	tb.Helper()
	deadline := time.After(10 * time.Second)
	for {
		t.mu.Lock()
		for i := after; i < len(t.events); i++ {
			if t.events[i].Type == typ {
				ev := t.events[i]
				t.mu.Unlock()
				return ev, i + 1
			}
		}
		t.mu.Unlock()
		select {
		case <-t.wake:
		case <-deadline:
			tb.Fatalf("no %s event", typ)
		}
	}
}

// firstAsk waits for the first question asked, for examples, which have no testing.TB.
func (t *devices) firstAsk() wire.AskData {
	for {
		t.mu.Lock()
		for _, ev := range t.events {
			if ev.Type == wire.EventAsk {
				t.mu.Unlock()
				var a wire.AskData
				_ = json.Unmarshal(ev.Data, &a)
				return a
			}
		}
		t.mu.Unlock()
		<-t.wake
	}
}

// ask waits for the next question asked, after the first `after` events.
func (t *devices) ask(tb testing.TB, after int) (wire.AskData, int) {
	tb.Helper()
	ev, n := t.next(tb, wire.EventAsk, after)
	var a wire.AskData
	if err := json.Unmarshal(ev.Data, &a); err != nil {
		tb.Fatal(err)
	}
	return a, n
}

// resolved waits for the next resolution, after the first `after` events.
func (t *devices) resolved(tb testing.TB, after int) (wire.ResolvedData, int) {
	tb.Helper()
	ev, n := t.next(tb, wire.EventResolved, after)
	var r wire.ResolvedData
	if err := json.Unmarshal(ev.Data, &r); err != nil {
		tb.Fatal(err)
	}
	return r, n
}

// answer sends a device's answers (or a decline, with no answers) for a question.
func answer(tb testing.TB, d *askuser.Dispatcher, session askuser.SessionID, requestID string, answers ...askuser.Answer) error {
	tb.Helper()
	data := wire.ResultData{RequestID: requestID, Answers: answers, Declined: answers == nil}
	ev, err := wire.NewEvent(wire.EventResult, session, data)
	if err != nil {
		tb.Fatal(err)
	}
	return d.Deliver(context.Background(), ev)
}

func pick(question string, labels ...string) askuser.Answer {
	if labels == nil {
		labels = []string{}
	}
	return askuser.Answer{Question: question, SelectedLabels: labels}
}

func typed(question, text string) askuser.Answer {
	return askuser.Answer{Question: question, SelectedLabels: []string{}, CustomInput: &text}
}
