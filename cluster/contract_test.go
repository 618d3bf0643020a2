package cluster_test

import (
	"testing"

	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/nats-io/nats.go/jetstream"
)

// TestReplicasContract: two replicas, each a store, a cluster Transport and a dispatcher,
// keep what a shared store needs of the transport (askusertest.TestReplicas).
func TestReplicasContract(t *testing.T) {
	checkLeaks(t)
	n := startNode(t)
	opts := &cluster.Options{Storage: jetstream.MemoryStorage}
	askusertest.TestReplicas(t, func(t *testing.T) (askusertest.Replica, askusertest.Replica) {
		a, b := newReplica(t, "a", n.url(), opts, nil), newReplica(t, "b", n.url(), opts, nil)
		return askusertest.Replica{Dispatcher: a.d, Devices: a.devices}, askusertest.Replica{Dispatcher: b.d, Devices: b.devices}
	})
}
