package askuser

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/store"
)

// failingUpdates is the memory store whose first fails Updates fail.
type failingUpdates struct {
	*memStore
	mu    sync.Mutex
	fails int
}

func (s *failingUpdates) Update(ctx context.Context, rec store.Record) (store.Record, bool, error) {
	s.mu.Lock()
	fail := s.fails > 0
	s.fails--
	s.mu.Unlock()
	if fail {
		return store.Record{}, false, errUnreachable
	}
	return s.memStore.Update(ctx, rec)
}

// notified counts the notices.
type notified struct {
	mu sync.Mutex
	n  []notify.Notice
}

func (n *notified) Notify(_ context.Context, x notify.Notice) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.n = append(n.n, x)
	return nil
}

func (n *notified) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.n)
}

// TestEscalationStoreFails: a step whose Update fails tries again storeRetry later, and
// fires then, once.
func TestEscalationStoreFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &failingUpdates{memStore: newMemStore(), fails: 2}
		var n notified
		d := New(&recTransport{}, &Options{Store: st, Notifier: &n, NotifyAfter: time.Hour, Timeout: time.Hour, Policy: &Policy{Ask: []Rule{{Tool: "drop",
			Approvers: &Approvers{Users: []string{"ann"}, Escalate: []store.Escalation{{After: time.Minute, Users: []string{"lead"}}}}}}}})
		defer d.Close()
		go d.Approve(context.Background(), ToolCall{Session: IntSession(1), ID: "e", Name: "drop", Arguments: json.RawMessage(`{}`)}, nil)
		time.Sleep(time.Minute + 2*storeRetry - time.Millisecond)
		synctest.Wait()
		if c := n.count(); c != 0 {
			t.Fatalf("%d notices while the store fails; want none", c)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if c := n.count(); c != 1 {
			t.Fatalf("%d notices once the store works; want 1", c)
		}
		if rec, err := st.Get(context.Background(), IntSession(1), "e"); err != nil || rec.Tally.Escalated != 1 {
			t.Fatalf("record %+v, %v; want the step recorded", rec.Tally, err)
		}
	})
}
