package cluster

// Internals the external tests reach.

// WatchConsumer returns the name of the consumer of the store's current watch.
func (s *Store) WatchConsumer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.feed.consumer
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

// StarveWatch makes the consumer of the store's current watch deliver nothing from now
// on, its heartbeats still coming: a consumer alive that gets nothing. A watch started
// again has a new consumer, fed as usual.
func (s *Store) StarveWatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feed.starved.Store(true)
}
