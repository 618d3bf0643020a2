package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/wire"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Two replicas of a host share their questions through NATS: the agent's run on the
// first asks, and a device connected to the second answers. (An embedded NATS server
// stands for the host's; askusertest's in-process devices stand for a wshub.Hub.)
func Example() {
	dir, _ := os.MkdirTemp("", "askuser-example-")
	defer os.RemoveAll(dir)
	ns, _ := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	ns.Start()
	defer ns.Shutdown()
	ns.ReadyForConnections(10 * time.Second)
	ctx := context.Background()

	replica := func() (*askuser.Dispatcher, *askusertest.Transport, func()) {
		nc, _ := nats.Connect(ns.ClientURL())
		st, err := cluster.NewStore(ctx, nc, nil) // the same bucket on every replica
		if err != nil {
			panic(err)
		}
		devices := askusertest.NewTransport() // this replica's devices: a wshub.Hub in a host
		tr, _ := cluster.NewTransport(st, devices)
		d := askuser.New(tr, &askuser.Options{Store: st})
		return d, devices, func() { d.Close(); tr.Close(); devices.Close(); st.Close(); nc.Close() }
	}
	d1, _, close1 := replica()
	defer close1()
	_, devices2, close2 := replica()
	defer close2()

	session := askuser.IntSession(42)
	phone := devices2.Connect(session)
	go func() {
		ev, _ := phone.Recv(ctx)
		fmt.Println("the phone, on replica 2, is asked:", ev.RequestID())
		answer, _ := wire.NewEvent(wire.EventResult, session, wire.ResultData{RequestID: ev.RequestID(), Answers: []askuser.Answer{
			{Question: "Deploy now?", SelectedLabels: []string{"Yes"}},
		}})
		_ = phone.Send(ctx, answer)
	}()

	res := d1.Dispatch(ctx, askuser.ToolCall{Session: session, ID: "toolu_01", Arguments: json.RawMessage(
		`{"questions":[{"question":"Deploy now?","header":"Deploy","multiSelect":false,"options":[{"label":"Yes","description":"Ship it"},{"label":"No","description":"Wait"}]}]}`)})
	fmt.Println("the run, on replica 1, gets:", res.Content)
	// Output:
	// the phone, on replica 2, is asked: toolu_01
	// the run, on replica 1, gets: {"answers":[{"question":"Deploy now?","selectedLabels":["Yes"],"customInput":null}]}
}
