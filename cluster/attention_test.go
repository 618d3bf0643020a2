package cluster_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/cluster"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
)

// notices records what a Notifier is given.
type notices struct {
	mu  sync.Mutex
	got []notify.Notice
}

func (n *notices) Notify(_ context.Context, x notify.Notice) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, x)
	return nil
}

func (n *notices) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.got)
}

// TestNoticeHonoursOtherReplicasDevices: a request made on one replica is not notified
// of while a device of another replica shows it; once that device's page is hidden, the
// notice comes once, from the replica that asked, and the other replica, whose device
// saw the request too, sends none.
func TestNoticeHonoursOtherReplicasDevices(t *testing.T) {
	checkLeaks(t)
	const after = 200 * time.Millisecond
	n := startNode(t)
	sopts := &cluster.Options{Storage: jetstream.MemoryStorage}
	asking := &notices{}
	a := newReplica(t, "asking", n.url(), sopts, &askuser.Options{Notifier: asking, NotifyAfter: after})

	// The other replica's devices are a real hub's.
	s := askuser.IntSession(77)
	watching := &notices{}
	st := openStore(t, n.url(), sopts)
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) { return []askuser.SessionID{s}, nil }})
	tr, err := cluster.NewTransport(st, hub)
	if err != nil {
		t.Fatal(err)
	}
	d := askuser.New(tr, &askuser.Options{Store: st, Notifier: watching, NotifyAfter: after})
	hub.Bind(tr)
	srv := httptest.NewServer(hub)
	t.Cleanup(func() { srv.Close(); d.Close(); _ = hub.Close(); _ = tr.Close() })

	// No deadline: the device stays connected for the whole test, however long its
	// waits (each bounded by failsafe) take.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	go func() { // the device reads what it is sent, as a panel does
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	}()
	visible := func(v bool) {
		t.Helper()
		ev, _ := wire.NewEvent(wire.EventVisibility, s, map[string]bool{"visible": v})
		msg, _ := ev.Encode()
		if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
			t.Fatal(err)
		}
	}
	visible(true)
	waitFor(t, "the asking replica to see the other's device", func() bool { return a.tr.Connected(s) })

	call := dispatch(a, s, "toolu_1", deployArgs)
	// Five times NotifyAfter, with the other replica's device showing the request: no notice.
	time.Sleep(5 * after)
	if got := asking.count() + watching.count(); got != 0 {
		t.Fatalf("%d notices while a device of another replica showed the request", got)
	}

	visible(false)
	waitFor(t, "the notice once no device shows the request", func() bool { return asking.count() == 1 })
	time.Sleep(3 * after) // room for a second notice, which must not come
	if asking.count() != 1 || watching.count() != 0 {
		t.Fatalf("notices: %d from the asking replica, %d from the other; want 1 and 0", asking.count(), watching.count())
	}
	asking.mu.Lock()
	got := asking.got[0]
	asking.mu.Unlock()
	if got.Session != s || got.RequestID != "toolu_1" || got.Kind != store.KindQuestion {
		t.Fatalf("notice %+v", got)
	}

	a.d.CancelSession(s)
	if res := result(t, call); res.Outcome != askuser.Cancelled {
		t.Fatalf("outcome %v", res.Outcome)
	}
}
