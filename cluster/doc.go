// Package cluster runs askuser across the replicas of a host on NATS JetStream: a
// question asked on any replica reaches the session's devices on every replica, the
// first valid answer wins wherever it comes from, and a question outlives the replica
// that asked it, so that a run resumed elsewhere with the same tool-call id gets the
// answer instead of asking twice.
//
// Each replica opens a [Store] on the same key-value bucket and a [Transport] in front of
// its own devices (a wshub.Hub):
//
//	st, err := cluster.NewStore(ctx, nc, &cluster.Options{Replicas: 3})
//	hub := wshub.New(&wshub.Options{Authorize: authorize})
//	tr, err := cluster.NewTransport(st, hub)
//	d := askuser.New(tr, &askuser.Options{Store: st}) // binds d, tr and hub: devices' answers
//	// go to this replica's dispatcher through the transport, which also shows joining
//	// devices every question
//
// A question set is one key of the bucket, "<session>.<request id>": the session as "n"
// and its digits or "s" and its escaped text (the numeric session 123 is "n123", the
// string "123" is "s123"), the request id as "r" and its escaped text; each byte other
// than a letter, a digit or '-' is written "_XX". Asking is a KV Create; answering,
// declining, timing out and cancelling are one compare-and-set write on the question's
// revision, so exactly one wins across replicas. See docs/CLUSTER.md for the design, the
// guarantees and their tests, the failure modes and operations.
package cluster
