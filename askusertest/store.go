package askusertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
)

// TestStore runs the contract of [askuser.Store] against a store. open returns two stores
// that share their records: two connections of a shared store (two replicas, say), or the
// same store twice for one that is not shared. Each subtest calls open once; sessions are
// unique per call, so stores that keep records across calls need no cleaning.
func TestStore(t *testing.T, open func(t *testing.T) (a, b askuser.Store)) {
	var seq int
	var mu sync.Mutex
	session := func() askuser.SessionID {
		mu.Lock()
		defer mu.Unlock()
		seq++
		return askuser.StringSession(fmt.Sprintf("storetest-%d-%d", time.Now().UnixNano(), seq))
	}
	ctx := context.Background()
	rec := func(s askuser.SessionID, id string) askuser.Record {
		return askuser.Record{
			Session: s,
			Ask: askuser.AskData{RequestID: id, ExpiresAt: time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond), Questions: []askuser.Question{{
				Question: "Deploy now?", Header: "Deploy",
				Options: []askuser.Option{{Label: "Yes", Description: "Ship it"}, {Label: "No", Description: "Wait", Preview: "# later"}},
			}}},
			AskedAt: time.Now().Truncate(time.Millisecond),
		}
	}

	t.Run("put and get", func(t *testing.T) {
		a, b := open(t)
		s := session()
		got, created, err := a.Put(ctx, rec(s, "r1"))
		if err != nil || !created || got.Rev == 0 || got.Outcome != 0 {
			t.Fatalf("Put = %+v, %v, %v; want a pending record with a Rev, created", got, created, err)
		}
		again, created, err := b.Put(ctx, rec(s, "r1"))
		if err != nil || created || again.Rev != got.Rev {
			t.Fatalf("second Put = rev %d, created %v, %v; want the first, rev %d", again.Rev, created, err, got.Rev)
		}
		read, err := b.Get(ctx, s, "r1")
		if err != nil || read.Rev != got.Rev || read.Ask.Questions[0].Options[1].Preview != "# later" || !read.Ask.ExpiresAt.Equal(got.Ask.ExpiresAt) {
			t.Fatalf("Get = %+v, %v; want what was put", read, err)
		}
		if _, err := a.Get(ctx, s, "nope"); !errors.Is(err, askuser.ErrNotPending) {
			t.Fatalf("Get of an unknown id: %v, want ErrNotPending", err)
		}
		if _, err := a.Get(ctx, session(), "r1"); !errors.Is(err, askuser.ErrNotPending) {
			t.Fatalf("Get in another session: %v, want ErrNotPending", err)
		}
	})

	t.Run("first end wins", func(t *testing.T) {
		a, b := open(t)
		s := session()
		r, _, err := a.Put(ctx, rec(s, "r1"))
		if err != nil {
			t.Fatal(err)
		}
		stale := r
		stale.Rev++
		stale.Outcome = askuser.Cancelled
		if ok, err := b.End(ctx, stale); ok || err != nil {
			t.Fatalf("End of another revision = %v, %v; want false", ok, err)
		}
		const n = 8
		wins := make(chan askuser.Outcome, n)
		var wg sync.WaitGroup
		for i := range n {
			store := a
			if i%2 == 1 {
				store = b
			}
			end := r
			end.Outcome = askuser.Outcome(1 + i%7) // answered, declined, timeout, ...
			if end.Outcome == askuser.Answered {
				end.Answers = []askuser.Answer{{Question: "Deploy now?", SelectedLabels: []string{"Yes"}}}
			}
			wg.Go(func() {
				ok, err := store.End(ctx, end)
				if err != nil {
					t.Errorf("End: %v", err)
				}
				if ok {
					wins <- end.Outcome
				}
			})
		}
		wg.Wait()
		close(wins)
		var won []askuser.Outcome
		for o := range wins {
			won = append(won, o)
		}
		if len(won) != 1 {
			t.Fatalf("%d Ends won (%v), want exactly one", len(won), won)
		}
		if pending, err := a.Pending(ctx, s); err != nil || len(pending) != 0 {
			t.Fatalf("Pending after the end = %v, %v", pending, err)
		}
		if got, err := b.Get(ctx, s, "r1"); err == nil {
			if got.Outcome != won[0] || got.Rev != r.Rev {
				t.Fatalf("a kept ended record says %v (rev %d), want %v (rev %d)", got.Outcome, got.Rev, won[0], r.Rev)
			}
			if won[0] == askuser.Answered && (len(got.Answers) != 1 || got.Answers[0].SelectedLabels[0] != "Yes") {
				t.Fatalf("kept answers %+v", got.Answers)
			}
		} else if !errors.Is(err, askuser.ErrNotPending) {
			t.Fatal(err)
		}
		if ok, _ := a.End(ctx, r); ok {
			t.Fatal("an End after the end won")
		}
		// The id again: a new question, or the ended one still kept; never pending twice.
		again, created, err := b.Put(ctx, rec(s, "r1"))
		if err != nil {
			t.Fatal(err)
		}
		if created == (again.Rev == r.Rev) || !created && again.Outcome == 0 {
			t.Fatalf("Put after the end = rev %d (was %d), created %v, outcome %v", again.Rev, r.Rev, created, again.Outcome)
		}
	})

	t.Run("pending in order, per session", func(t *testing.T) {
		a, b := open(t)
		s1, s2 := session(), session()
		for i := range 5 {
			if _, _, err := a.Put(ctx, rec(s1, fmt.Sprintf("q%d", i))); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := b.Put(ctx, rec(s2, "other")); err != nil {
			t.Fatal(err)
		}
		r2, err := a.Get(ctx, s1, "q2")
		if err != nil {
			t.Fatal(err)
		}
		r2.Outcome = askuser.Declined
		if ok, err := b.End(ctx, r2); !ok || err != nil {
			t.Fatalf("End = %v, %v", ok, err)
		}
		var ids []string
		list, err := b.Pending(ctx, s1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			ids = append(ids, r.Ask.RequestID)
			if r.Outcome != 0 || r.Session != s1 {
				t.Fatalf("Pending listed %+v", r)
			}
		}
		if fmt.Sprint(ids) != "[q0 q1 q3 q4]" {
			t.Fatalf("Pending = %v, want [q0 q1 q3 q4], oldest first", ids)
		}
		if list, _ := a.Pending(ctx, session()); len(list) != 0 {
			t.Fatalf("Pending of an empty session = %v", list)
		}
	})

	t.Run("watch", func(t *testing.T) {
		a, b := open(t)
		if a == b {
			t.Skip("one store: its dispatcher learns of its ends itself")
		}
		seen := make(chan askuser.Record, 16)
		stop := b.Watch(func(r askuser.Record) { seen <- r })
		defer stop()
		s := session()
		r, _, err := a.Put(ctx, rec(s, "w1"))
		if err != nil {
			t.Fatal(err)
		}
		r.Outcome = askuser.TimedOut
		if ok, err := a.End(ctx, r); !ok || err != nil {
			t.Fatalf("End = %v, %v", ok, err)
		}
		deadline := time.After(10 * time.Second)
		for {
			select {
			case got := <-seen:
				if got.Session == s && got.Ask.RequestID == "w1" && got.Rev == r.Rev && got.Outcome == askuser.TimedOut {
					return
				}
			case <-deadline:
				t.Fatal("the other store's Watch never reported the end")
			}
		}
	})
}
