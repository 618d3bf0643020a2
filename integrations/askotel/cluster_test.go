package askotel_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/wire"
)

// TestEndedOnAnotherReplica: a question asked on one replica and answered on another,
// on a real embedded NATS server: the replica that ended it records its end as a span of
// its own, linked (not parented) to the span of the call that asked, whose trace context
// the store kept with the request.
func TestEndedOnAnotherReplica(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	tel := newTelemetry(t)
	type replica struct {
		d       *askuser.Dispatcher
		devices *askusertest.Transport
	}
	open := func() replica {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st, err := cluster.NewStore(ctx, nc, &cluster.Options{Storage: jetstream.MemoryStorage})
		if err != nil {
			t.Fatal(err)
		}
		devices := askusertest.NewTransport()
		tr, err := cluster.NewTransport(st, devices)
		if err != nil {
			t.Fatal(err)
		}
		d := askuser.New(tr, &askuser.Options{Store: st, Observer: tel.another(t)}) // each replica its own
		devices.Bind(tr)
		t.Cleanup(func() { d.Close(); tr.Close(); devices.Close(); st.Close() })
		return replica{d, devices}
	}
	a, b := open(), open()
	s := askuser.StringSession("linked")
	dev := b.devices.Connect(s)
	res := make(chan askuser.Result, 1)
	go func() {
		res <- a.d.Dispatch(context.Background(), askuser.ToolCall{Session: s, ID: "toolu_linked", Name: askuser.ToolName, Arguments: json.RawMessage(question)})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		ev, err := dev.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == wire.EventAsk {
			break
		}
	}
	if err := dev.Send(ctx, answer(s, "toolu_linked", "Yes")); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.Outcome != askuser.Answered {
		t.Fatalf("outcome %v", r.Outcome)
	}
	asked := tel.span(t, "execute_tool ask_user_questions", "toolu_linked")
	ended := tel.span(t, "askuser.end", "toolu_linked")
	if ended.Parent().IsValid() {
		t.Errorf("the end on the other replica has a parent %v; want a link only", ended.Parent())
	}
	links := ended.Links()
	if len(links) != 1 || links[0].SpanContext.SpanID() != asked.SpanContext().SpanID() || links[0].SpanContext.TraceID() != asked.SpanContext().TraceID() {
		t.Fatalf("the end's links %+v; want the asking span %v", links, asked.SpanContext())
	}
	if o, _ := attr(ended, "askuser.outcome"); o != "answered" {
		t.Errorf("the end's outcome %q", o)
	}
}
