package observe_test

import (
	"context"
	"testing"

	"github.com/askuser-go/askuser/observe"
)

type ctxKey struct{}

// recorder records what it is told, under its name, in a shared log.
type recorder struct {
	name    string
	log     *[]string
	carrier map[string]string
}

func (r recorder) Begin(ctx context.Context, c observe.CallInfo) (context.Context, func(observe.CallEnd)) {
	*r.log = append(*r.log, r.name+" begin "+seen(ctx))
	return context.WithValue(ctx, ctxKey{}, r.name), func(e observe.CallEnd) { *r.log = append(*r.log, r.name+" end "+e.RequestID) }
}

func (r recorder) Observe(_ context.Context, o observe.Observation) {
	*r.log = append(*r.log, r.name+" "+o.Event.String())
}

func (r recorder) Carrier(context.Context) map[string]string { return r.carrier }

func seen(ctx context.Context) string {
	s, _ := ctx.Value(ctxKey{}).(string)
	return "after:" + s
}

// TestJoin: every observer is told, in order; each Begin gets the context the one before
// returned; the ends run in the reverse order; the first carrier wins; nil ones are left
// out, and Join of one is that one.
func TestJoin(t *testing.T) {
	var log []string
	a := recorder{name: "a", log: &log}
	b := recorder{name: "b", log: &log, carrier: map[string]string{"traceparent": "x"}}
	j := observe.Join(nil, a, nil, b)
	_, end := j.Begin(context.Background(), observe.CallInfo{})
	j.Observe(context.Background(), observe.Observation{Event: observe.Asked})
	end(observe.CallEnd{RequestID: "r1"})
	want := []string{"a begin after:", "b begin after:a", "a asked", "b asked", "b end r1", "a end r1"}
	if len(log) != len(want) {
		t.Fatalf("told %q, want %q", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("told %q, want %q", log, want)
		}
	}
	if c := j.Carrier(context.Background()); c["traceparent"] != "x" {
		t.Errorf("carrier %v, want b's", c)
	}
	if observe.Join() != nil || observe.Join(nil) != nil {
		t.Error("Join of no observer is not nil")
	}
	if o, ok := observe.Join(nil, a).(recorder); !ok || o.name != "a" {
		t.Errorf("Join of one observer is %#v, not that one", observe.Join(nil, a))
	}
	var hooksOnly observe.Hooks
	if _, end := observe.Join(hooksOnly, hooksOnly).Begin(context.Background(), observe.CallInfo{}); end != nil {
		t.Error("Join of observers that return no end function returns one")
	}
}

// TestEventString: every event has its name.
func TestEventString(t *testing.T) {
	for e, want := range map[observe.Event]string{observe.Asked: "asked", observe.Failed: "failed", observe.Progressed: "progressed", observe.Escalated: "escalated", 0: "Event(0)", 99: "Event(99)"} {
		if got := e.String(); got != want {
			t.Errorf("%d: %q, want %q", int(e), got, want)
		}
	}
}
