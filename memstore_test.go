package askuser

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// len returns the number of pending requests.
func (s *memStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// TestMemStoreKeepsRecentEnds: an ended request can be looked up until it would have
// expired, and no more than maxRecent of them are kept.
func TestMemStoreKeepsRecentEnds(t *testing.T) {
	r := newMemStore()
	s := IntSession(1)
	put := func(id string, expires time.Time) store.Record {
		rec, _, err := r.Put(context.Background(), store.Record{Session: s, Ask: wire.AskData{RequestID: id, ExpiresAt: expires}})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	soon := time.Now().Add(time.Hour)
	rec := put("a", soon)
	rec.Outcome = Declined
	if ok, _ := r.End(context.Background(), rec); !ok {
		t.Fatal("End failed")
	}
	if got, ok := r.lookup(s, "a"); !ok || got.Outcome != Declined {
		t.Fatalf("lookup = %+v, %v; want the ended request", got, ok)
	}
	if _, err := r.Get(context.Background(), s, "a"); err != wire.ErrNotPending {
		t.Fatalf("Get of an ended request = %v; the store forgets it at once", err)
	}
	// Asked again under the same id: the new one, pending, is what lookup says.
	again := put("a", soon)
	if got, _ := r.lookup(s, "a"); got.Rev != again.Rev || got.Outcome != 0 {
		t.Fatalf("lookup after asking again = %+v", got)
	}
	for i := range maxRecent + 10 {
		rec := put(fmt.Sprint("n", i), soon)
		rec.Outcome = Cancelled
		r.End(context.Background(), rec)
	}
	if n := len(r.recent); n > maxRecent || len(r.ring) > maxRecent {
		t.Fatalf("%d ended requests kept (ring %d), want at most %d", n, len(r.ring), maxRecent)
	}
	if _, ok := r.lookup(s, "n0"); ok {
		t.Fatal("the oldest ended request is still kept")
	}
	if _, ok := r.lookup(s, fmt.Sprint("n", maxRecent+9)); !ok {
		t.Fatal("the newest ended request is not kept")
	}
	expired := put("old", time.Now().Add(-time.Second))
	expired.Outcome = TimedOut
	r.End(context.Background(), expired)
	if _, ok := r.lookup(s, "old"); ok {
		t.Fatal("an ended request past its expiry can still be looked up")
	}
}
