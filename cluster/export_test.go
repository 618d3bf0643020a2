package cluster

// Internals the external tests reach.

// WatchConsumer returns the name of the consumer of the store's current watch.
func (s *Store) WatchConsumer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.consumer
}

// Snapshots returns how many snapshots the store's watch has taken.
func (s *Store) Snapshots() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// RestartWatch makes the store's watch start again, from a fresh snapshot, on a new
// consumer.
func (s *Store) RestartWatch() { s.kick() }
