package cluster_test

import (
	"testing"

	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/store"
	"github.com/nats-io/nats.go/jetstream"
)

// The conformance suite of store.Store, against one store used twice, and against two
// stores on one bucket through two connections (two replicas).
func TestStoreContract(t *testing.T) {
	checkLeaks(t)
	n := startNode(t)
	opts := &cluster.Options{Storage: jetstream.MemoryStorage}
	t.Run("one store", func(t *testing.T) {
		askusertest.TestStore(t, func(t *testing.T) (store.Store, store.Store) {
			st := openStore(t, n.url(), opts)
			return st, st
		})
	})
	t.Run("two replicas", func(t *testing.T) {
		askusertest.TestStore(t, func(t *testing.T) (store.Store, store.Store) {
			return openStore(t, n.url(), opts), openStore(t, n.url(), opts)
		})
	})
}

// The same suite on a three-node NATS cluster with R3 storage, where reads go to the
// stream's leader.
func TestStoreContractR3(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster")
	}
	checkLeaks(t)
	nodes := startCluster(t, 3)
	opts := &cluster.Options{Replicas: 3}
	askusertest.TestStore(t, func(t *testing.T) (store.Store, store.Store) {
		return openStore(t, nodes[0].url(), opts), openStore(t, nodes[2].url(), opts)
	})
}
