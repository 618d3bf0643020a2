// Package store is the seam for keeping pending requests outside one dispatcher, for
// those who write a store: [Store], which a store shared by the replicas of a host
// implements (the cluster module's is on NATS JetStream), the [Record] of a request it
// keeps, and the grants of "always" decisions ([GrantStore], [Grant]).
//
// A host that keeps requests in memory needs none of it: the dispatcher's default store
// is its own. askusertest.TestStore checks a Store against the contract, and
// askusertest.TestReplicas checks replicas sharing it.
package store
