package askuser_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// recordingNotifier records the notices it gets, and whether each one's context ended.
type recordingNotifier struct {
	mu      sync.Mutex
	notices []notify.Notice
	ended   []bool
	block   bool // wait for the context to end, as a notifier that retries does
}

func (n *recordingNotifier) Notify(ctx context.Context, x notify.Notice) error {
	n.mu.Lock()
	i := len(n.notices)
	n.notices = append(n.notices, x)
	n.ended = append(n.ended, false)
	n.mu.Unlock()
	if n.block {
		<-ctx.Done()
		n.mu.Lock()
		n.ended[i] = true
		n.mu.Unlock()
	}
	return nil
}

func (n *recordingNotifier) got() ([]notify.Notice, []bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]notify.Notice(nil), n.notices...), append([]bool(nil), n.ended...)
}

// TestNotifier: a request no device has seen for NotifyAfter is given to the notifier
// once, with what it is about; its context ends when the request does. A request seen
// by a device, or ended first, is not.
func TestNotifier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &recordingNotifier{block: true}
		d, mt := newTestDispatcher(&Options{Notifier: n, NotifyAfter: 10 * time.Second, Timeout: time.Hour, Policy: demoPolicy()})
		defer d.Close()
		unseen, seen, quick := IntSession(1), IntSession(2), IntSession(3)

		q := dispatchAsync(context.Background(), d, unseen, "q1", oneQuestion)
		a := approveAsync(context.Background(), d, unseen, "a1", "delete_branch", `{"name":"x"}`)
		dev := mt.Connect(seen)
		qs := dispatchAsync(context.Background(), d, seen, "q2", oneQuestion)
		qq := dispatchAsync(context.Background(), d, quick, "q3", oneQuestion)
		synctest.Wait()
		time.Sleep(5 * time.Second)
		d.CancelSession(quick) // ended before its time
		<-qq
		time.Sleep(5*time.Second + time.Millisecond)
		synctest.Wait()

		notices, ended := n.got()
		require.Len(t, notices, 2, "the two unseen requests, once each")
		byID := map[string]notify.Notice{}
		for _, x := range notices {
			byID[x.RequestID] = x
		}
		assert.Equal(t, notify.Notice{Kind: store.KindQuestion, Session: unseen, RequestID: "q1", Title: "Which framework?", ExpiresAt: byID["q1"].ExpiresAt}, byID["q1"])
		assert.Equal(t, notify.Notice{Kind: store.KindApproval, Session: unseen, RequestID: "a1", Title: "delete_branch", Decisions: []string{"approve", "deny", "edit", "always"}, ExpiresAt: byID["a1"].ExpiresAt}, byID["a1"])
		assert.Equal(t, []bool{false, false}, ended)

		// The request ends: its notifier's context ends with it.
		d.CancelSession(unseen)
		<-q
		<-a
		synctest.Wait()
		_, ended = n.got()
		assert.Equal(t, []bool{true, true}, ended)

		time.Sleep(time.Minute)
		synctest.Wait()
		notices, _ = n.got()
		assert.Len(t, notices, 2, "nothing more, ever")
		dev.Close()
		d.CancelSession(seen)
		<-qs
	})
}

// TestNotifierNamesApprovers: the notice of an approval with approvers, gone unseen,
// names its approvers' users, whom a notifier gives links of their own: a link of no
// person cannot decide it.
func TestNotifierNamesApprovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &recordingNotifier{}
		d, _ := newTestDispatcher(&Options{Notifier: n, NotifyAfter: 10 * time.Second, Timeout: time.Hour})
		defer d.Close()
		res := make(chan ApprovalResult, 1)
		go func() {
			res <- d.Approve(context.Background(), ToolCall{Session: IntSession(1), ID: "a1", Name: "restart"},
				&ApprovalOptions{Approvers: &Approvers{Users: []string{"lead", "ann"}, Groups: []string{"dba"}}})
		}()
		time.Sleep(11 * time.Second)
		synctest.Wait()
		notices, _ := n.got()
		require.Len(t, notices, 1)
		assert.Equal(t, []string{"lead", "ann"}, notices[0].Users)
		assert.Nil(t, notices[0].To, "the notice of a request gone unseen is for whoever the session belongs to")
		d.CancelSession(IntSession(1))
		<-res
	})
}

// TestNotifierStoppedByClose: Close ends a notifier still trying, and waits for it.
func TestNotifierStoppedByClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &recordingNotifier{block: true}
		d, _ := newTestDispatcher(&Options{Notifier: n, NotifyAfter: time.Second, Timeout: time.Hour})
		ch := dispatchAsync(context.Background(), d, IntSession(1), "q", oneQuestion)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		require.NoError(t, d.Close())
		assert.Equal(t, Shutdown, (<-ch).Outcome)
		_, ended := n.got()
		assert.Equal(t, []bool{true}, ended)
	})
}

// TestNotifierFailureLosesNothing: a notifier that fails leaves the request as it is.
func TestNotifierFailureLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, mt := newTestDispatcher(&Options{Notifier: failingNotifier{}, NotifyAfter: time.Second, Timeout: time.Hour})
		defer d.Close()
		s := IntSession(1)
		ch := dispatchAsync(context.Background(), d, s, "q", oneQuestion)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		dev := mt.Connect(s)
		recv[wire.AskData](t, dev, wire.EventAsk)
		require.NoError(t, dev.Send(context.Background(), answerEvent(s, "q", "Vue")))
		assert.Equal(t, Answered, (<-ch).Outcome)
	})
}

type failingNotifier struct{}

func (failingNotifier) Notify(context.Context, notify.Notice) error {
	return errors.New("the webhook is down")
}

// TestNotifierWaitsWhileWatched: while a device shows the request, the notice waits;
// once it has gone a whole NotifyAfter unseen after the device left, it comes.
func TestNotifierWaitsWhileWatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &recordingNotifier{}
		d, mt := newTestDispatcher(&Options{Notifier: n, NotifyAfter: 10 * time.Second, Timeout: time.Hour})
		defer d.Close()
		s := IntSession(1)
		dev := mt.Connect(s)
		ch := dispatchAsync(context.Background(), d, s, "q", oneQuestion)
		time.Sleep(35 * time.Second) // watched all along
		synctest.Wait()
		notices, _ := n.got()
		require.Empty(t, notices)
		dev.Close()
		time.Sleep(15 * time.Second) // the check after it left still saw it since the last
		synctest.Wait()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		notices, _ = n.got()
		require.Len(t, notices, 1)
		d.CancelSession(s)
		<-ch
	})
}
