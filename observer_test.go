package askuser_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// recordingObserver records what it is told, and gives each call a carrier naming it.
type recordingObserver struct {
	mu    sync.Mutex
	calls []observe.CallInfo
	ends  []observe.CallEnd
	seen  []observe.Observation
}

type callKey struct{}

func (o *recordingObserver) Begin(ctx context.Context, c observe.CallInfo) (context.Context, func(observe.CallEnd)) {
	o.mu.Lock()
	o.calls = append(o.calls, c)
	o.mu.Unlock()
	return context.WithValue(ctx, callKey{}, c.ID), func(e observe.CallEnd) {
		o.mu.Lock()
		o.ends = append(o.ends, e)
		o.mu.Unlock()
	}
}

func (o *recordingObserver) Observe(_ context.Context, x observe.Observation) {
	o.mu.Lock()
	o.seen = append(o.seen, x)
	o.mu.Unlock()
}

func (o *recordingObserver) Carrier(ctx context.Context) map[string]string {
	id, _ := ctx.Value(callKey{}).(string)
	return map[string]string{"call": id}
}

func (o *recordingObserver) what() []observe.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []observe.Event
	for _, x := range o.seen {
		out = append(out, x.Event)
	}
	return out
}

// TestObserver: every call begins and ends once with its outcome; the observer is told
// of the ask, the end, the decision and the notice, with the carrier of the call that
// made the request, which the store keeps with it.
func TestObserver(t *testing.T) {
	obs := &recordingObserver{}
	d, mt := newTestDispatcher(&Options{Observer: obs, Policy: demoPolicy(), Timeout: time.Hour, Notifier: &recordingNotifier{}, NotifyAfter: time.Millisecond})
	defer d.Close()
	s := IntSession(1)
	ch := dispatchAsync(context.Background(), d, s, "q1", oneQuestion)
	for !slices.Contains(obs.what(), observe.Notified) {
		time.Sleep(time.Millisecond)
	}
	dev := mt.Connect(s)
	recv[wire.AskData](t, dev, wire.EventAsk)
	require.NoError(t, dev.Send(context.Background(), answerEvent(s, "q1", "Vue")))
	<-ch
	tool := wrap(d, func(context.Context, ToolCall) (string, error) { return "ran", nil })
	out, err := tool(context.Background(), ToolCall{Session: s, ID: "t1", Name: "list_files", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, "ran", out)
	r := d.Approve(context.Background(), ToolCall{Session: s, ID: "t2", Name: "drop_database", Arguments: json.RawMessage(`{}`)}, nil)
	require.Equal(t, Denied, r.Outcome)

	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Equal(t, []observe.CallInfo{
		{Kind: store.KindQuestion, Session: s, ID: "q1", Tool: ToolName, Arguments: json.RawMessage(oneQuestion)},
		{Kind: store.KindApproval, Session: s, ID: "t1", Tool: "list_files", Arguments: json.RawMessage(`{}`)},
		{Kind: store.KindApproval, Session: s, ID: "t2", Tool: "drop_database", Arguments: json.RawMessage(`{}`)},
	}, obs.calls)
	require.Len(t, obs.ends, 3)
	assert.Equal(t, "q1", obs.ends[0].RequestID)
	assert.Equal(t, Answered, obs.ends[0].Outcome)
	assert.Contains(t, obs.ends[0].Content, `"selectedLabels":["Vue"]`)
	assert.Equal(t, observe.CallEnd{Outcome: Approved, Content: "ran"}, obs.ends[1])
	assert.Equal(t, Denied, obs.ends[2].Outcome)
	assert.True(t, obs.ends[2].IsError)
	var whats []observe.Event
	for _, x := range obs.seen {
		whats = append(whats, x.Event)
		if x.RequestID == "q1" {
			assert.Equal(t, map[string]string{"call": "q1"}, x.Carrier, "%v carries the call's trace", x.Event)
		}
	}
	assert.Equal(t, []observe.Event{observe.Asked, observe.Notified, observe.Ended, observe.Decided, observe.Decided}, whats)
	assert.Equal(t, "list_files", obs.seen[3].Audit.Tool)
}

// TestObserverToolPanics: a gated tool that panics still ends its call for the observer
// (an error, saying the tool did not return), and the panic goes on to the caller.
func TestObserverToolPanics(t *testing.T) {
	obs := &recordingObserver{}
	d, _ := newTestDispatcher(&Options{Observer: obs, Policy: demoPolicy()})
	defer d.Close()
	tool := wrap(d, func(context.Context, ToolCall) (string, error) { panic("disk on fire") })
	func() {
		defer func() { assert.Equal(t, "disk on fire", recover()) }()
		_, _ = tool(context.Background(), ToolCall{Session: IntSession(1), ID: "t1", Name: "list_files", Arguments: json.RawMessage(`{}`)})
		t.Error("the panic did not reach the caller")
	}()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	require.Len(t, obs.ends, 1)
	assert.Equal(t, Approved, obs.ends[0].Outcome)
	assert.True(t, obs.ends[0].IsError)
	require.Error(t, obs.ends[0].Err)
	assert.Contains(t, obs.ends[0].Err.Error(), `tool "list_files" did not return`)
}

// TestObserverPolicyPanics: a call whose host code panics before any tool runs (here the
// policy's Describe) ends for the observer too, as an error, and the panic goes on.
func TestObserverPolicyPanics(t *testing.T) {
	obs := &recordingObserver{}
	p := demoPolicy()
	p.Describe = func(context.Context, ToolCall) *ApprovalOptions { panic("no description") }
	d, _ := newTestDispatcher(&Options{Observer: obs, Policy: p})
	defer d.Close()
	func() {
		defer func() { assert.Equal(t, "no description", recover()) }()
		d.Approve(context.Background(), ToolCall{Session: IntSession(1), ID: "t1", Name: "list_files", Arguments: json.RawMessage(`{}`)}, nil)
		t.Error("the panic did not reach the caller")
	}()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	require.Len(t, obs.ends, 1)
	assert.True(t, obs.ends[0].IsError)
	require.Error(t, obs.ends[0].Err)
	assert.Contains(t, obs.ends[0].Err.Error(), "the call did not return")
}

// TestLogger: observe.Log logs each request's life at debug, decisions at info and
// refused device events at warn, with the metrics' attribute names.
func TestLogger(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d, mt := newTestDispatcher(&Options{Observer: observe.Log(log), Policy: demoPolicy(), Timeout: time.Hour})
	defer d.Close()
	s := IntSession(1)
	dev := mt.Connect(s)
	ch := dispatchAsync(context.Background(), d, s, "q1", oneQuestion)
	recv[wire.AskData](t, dev, wire.EventAsk)
	require.Error(t, d.Deliver(context.Background(), answerEvent(s, "q1", "Angular")))
	require.NoError(t, dev.Send(context.Background(), answerEvent(s, "q1", "Vue")))
	<-ch
	d.Approve(context.Background(), ToolCall{Session: s, Name: "list_files", Arguments: json.RawMessage(`{}`)}, nil)
	out := buf.String()
	for _, want := range []string{
		`level=DEBUG msg="askuser: request asked" askuser.request.kind=question askuser.session=1 askuser.request.id=q1`,
		`level=WARN msg="askuser: device event refused" askuser.refusal.code=invalid_answer askuser.session=1 askuser.request.id=q1`,
		`level=DEBUG msg="askuser: request ended" askuser.request.kind=question askuser.session=1 askuser.request.id=q1 askuser.outcome=answered`,
		`level=INFO msg="askuser: tool call decided" askuser.request.kind=approval askuser.session=1 askuser.request.id="" askuser.tool=list_files askuser.outcome=approved askuser.decision="" askuser.rule=list_files`,
	} {
		assert.Contains(t, out, want)
	}
}

// syncBuffer is a strings.Builder safe for a logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
