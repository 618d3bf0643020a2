package tui_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/tui"
	"github.com/askuser-go/askuser/wire"
)

// scriptedHost is a Conn whose host side the test plays by hand, for the replies a
// real host gives only in a race: a question that ended elsewhere just before this
// terminal's answer arrived (not_pending), or an outcome this version does not know.
type scriptedHost struct {
	toDevice   chan wire.Event
	fromDevice chan wire.Event
}

func (h *scriptedHost) Recv(ctx context.Context) (wire.Event, error) {
	select {
	case ev := <-h.toDevice:
		return ev, nil
	case <-ctx.Done():
		return wire.Event{}, ctx.Err()
	}
}

func (h *scriptedHost) Send(ctx context.Context, ev wire.Event) error {
	select {
	case h.fromDevice <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lockedBuffer is an Output that the test reads while Run writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func TestNotPendingAndUnknownOutcome(t *testing.T) {
	host := &scriptedHost{toDevice: make(chan wire.Event), fromDevice: make(chan wire.Event)}
	out := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	// The person types 1, and then nothing: the input stays open.
	in, typed := io.Pipe()
	go func() { _, _ = typed.Write([]byte("1\n")) }()
	done := make(chan error, 1)
	go func() {
		done <- tui.Run(ctx, host, &tui.Options{Accessible: true, Input: in, Output: out})
	}()
	defer func() {
		cancel()
		<-done
		_ = typed.Close() // a pipe cannot be cancelled: its reader ends when it closes
	}()
	session := askuser.IntSession(7)
	send := func(typ string, data any) {
		t.Helper()
		ev, err := wire.NewEvent(typ, session, data)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case host.toDevice <- ev:
		case <-time.After(waitTimeout):
			t.Fatalf("the terminal did not take %s", typ)
		}
	}
	var ask wire.AskData
	if err := json.Unmarshal([]byte(`{"requestId":"r1","questions":`+singleArgs[len(`{"questions":`):len(singleArgs)-1]+`}`), &ask); err != nil {
		t.Fatal(err)
	}

	// The answer arrives after the question ended elsewhere.
	send(wire.EventAsk, ask)
	select {
	case ev := <-host.fromDevice:
		var r wire.ResultData
		if err := json.Unmarshal(ev.Data, &r); err != nil || r.RequestID != "r1" || len(r.Answers) != 1 ||
			r.Answers[0].SelectedLabels[0] != "Vue 3 (Recommended)" || ev.SessionID != session {
			t.Fatalf("the terminal sent %s %s", ev.Type, ev.Data)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the terminal sent no answer")
	}
	send(wire.EventError, wire.ErrorData{RequestID: "r1", Code: "not_pending", Message: "no such pending question"})
	eventually(t, "the not_pending note", func() bool {
		return strings.Contains(out.String(), "This question had already ended on another device.")
	})

	// A resolution with an outcome this version does not know still ends the question.
	ask.RequestID = "r2"
	send(wire.EventAsk, ask)
	eventually(t, "the second question", func() bool { return strings.Count(out.String(), "Answer 1:") == 2 })
	send(wire.EventResolved, map[string]string{"requestId": "r2", "outcome": "exploded"})
	eventually(t, "the unknown outcome's note", func() bool { return strings.Contains(out.String(), "Ended (exploded).") })
}
