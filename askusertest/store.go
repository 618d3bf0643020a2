package askusertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// TestStore runs the contract of [store.Store] against a store: records of both kinds,
// question sets and approvals, and grants when the store is a [store.GrantStore]. open
// returns two stores that share their records: two connections of a shared store (two
// replicas, say), or the same store twice for one that is not shared. Each subtest calls open once; sessions are
// unique per call, so stores that keep records across calls need no cleaning.
func TestStore(t *testing.T, open func(t *testing.T) (a, b store.Store)) {
	var seq int
	var mu sync.Mutex
	session := func() askuser.SessionID {
		mu.Lock()
		defer mu.Unlock()
		seq++
		return askuser.StringSession(fmt.Sprintf("storetest-%d-%d", time.Now().UnixNano(), seq))
	}
	ctx := context.Background()
	rec := func(s askuser.SessionID, id string) store.Record {
		return store.Record{
			Session: s,
			Ask: wire.AskData{RequestID: id, ExpiresAt: time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond), Questions: []askuser.Question{{
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
		if _, err := a.Get(ctx, s, "nope"); !errors.Is(err, wire.ErrNotPending) {
			t.Fatalf("Get of an unknown id: %v, want ErrNotPending", err)
		}
		if _, err := a.Get(ctx, session(), "r1"); !errors.Is(err, wire.ErrNotPending) {
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
		} else if !errors.Is(err, wire.ErrNotPending) {
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
		seen := make(chan store.Record, 16)
		stop := b.Watch(func(r store.Record) { seen <- r })
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

	t.Run("approvals", func(t *testing.T) {
		a, b := open(t)
		s := session()
		approval := store.Record{
			Session: s,
			Approval: &wire.ApprovalData{
				RequestID: "a1", Tool: "delete_branch", Arguments: json.RawMessage(`{"name":"feature/x"}`),
				Description: "Deletes a branch", Decisions: []string{"approve", "deny", "edit", "always"},
				ArgumentsSchema: json.RawMessage(`{"type":"object"}`), Always: "every call of delete_branch in this session",
				Reasons: []string{"Not now"}, Scope: "feature branches", Digest: "d1",
				ExpiresAt: time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond),
			},
			AskedAt: time.Now().Truncate(time.Millisecond),
			Carrier: map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		}
		got, created, err := a.Put(ctx, approval)
		if err != nil || !created || got.Rev == 0 {
			t.Fatalf("Put of an approval = %+v, %v, %v", got, created, err)
		}
		// An approval and a question set share the session's ids.
		if other, created, err := b.Put(ctx, rec(s, "a1")); err != nil || created || other.Approval == nil {
			t.Fatalf("Put of a question set under an approval's id = %+v, %v, %v; want the approval", other, created, err)
		}
		read, err := b.Get(ctx, s, "a1")
		if err != nil || read.Approval == nil {
			t.Fatalf("Get = %+v, %v", read, err)
		}
		want := *approval.Approval
		if r := *read.Approval; r.Tool != want.Tool || string(r.Arguments) != string(want.Arguments) || r.Description != want.Description ||
			fmt.Sprint(r.Decisions) != fmt.Sprint(want.Decisions) || string(r.ArgumentsSchema) != string(want.ArgumentsSchema) ||
			r.Always != want.Always || fmt.Sprint(r.Reasons) != fmt.Sprint(want.Reasons) || r.Scope != want.Scope ||
			r.Digest != want.Digest || !r.ExpiresAt.Equal(want.ExpiresAt) || r.RequestID != "a1" {
			t.Fatalf("Get returned the approval %+v, want %+v", r, want)
		}
		if read.Carrier["traceparent"] != approval.Carrier["traceparent"] {
			t.Fatalf("Get returned the trace carrier %v, want %v", read.Carrier, approval.Carrier)
		}
		if list, err := a.Pending(ctx, s); err != nil || len(list) != 1 || list[0].Approval == nil {
			t.Fatalf("Pending = %+v, %v; want the approval", list, err)
		}
		end := read
		end.Outcome = askuser.Edited
		end.Decision = &store.Decision{Decision: wire.DecisionEdit, Arguments: json.RawMessage(`{"name":"feature/y"}`), By: "alice",
			At:    time.Now().Truncate(time.Millisecond),
			Grant: &store.Grant{Session: s, ID: "a1", Tool: "delete_branch", Scope: "feature branches", Covers: "c", By: "alice", At: time.Now().Truncate(time.Millisecond)}}
		if ok, err := b.End(ctx, end); !ok || err != nil {
			t.Fatalf("End = %v, %v", ok, err)
		}
		if kept, err := a.Get(ctx, s, "a1"); err == nil {
			d := kept.Decision
			if kept.Outcome != askuser.Edited || d == nil || d.Decision != wire.DecisionEdit || string(d.Arguments) != `{"name":"feature/y"}` ||
				d.By != "alice" || !d.At.Equal(end.Decision.At) || d.Grant == nil || !sameGrant(*d.Grant, *end.Decision.Grant) || kept.Approval == nil {
				t.Fatalf("the kept approval is %+v with %+v, want the decision recorded", kept, d)
			}
		} else if !errors.Is(err, wire.ErrNotPending) {
			t.Fatal(err)
		}
	})

	t.Run("update", func(t *testing.T) {
		a, b := open(t)
		s := session()
		at := time.Now().Truncate(time.Millisecond)
		approval := store.Record{
			Session: s,
			Approval: &wire.ApprovalData{
				RequestID: "q1", Tool: "drop_database", Arguments: json.RawMessage(`{"db":"prod"}`), Decisions: []string{"approve", "deny", "edit"},
				Digest: "d1", ExpiresAt: time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond),
				Approvers: &wire.ApproversData{Names: []string{"alice", "bob", "dba"}, Quorum: 2, Users: []string{"alice", "bob"}, Groups: []string{"dba"}},
			},
			AskedAt: at,
			Tally: &store.Tally{Approvers: store.Approvers{Users: []string{"alice", "bob"}, Groups: []string{"dba"}, Quorum: 2, SeparateDuties: true,
				Escalate: []store.Escalation{{After: time.Second, Users: []string{"lead"}}, {After: time.Minute, Groups: []string{"oncall"}}}}, Requester: "carol"},
		}
		got, _, err := a.Put(ctx, approval)
		if err != nil {
			t.Fatal(err)
		}
		read, err := b.Get(ctx, s, "q1")
		if err != nil || read.Tally == nil || fmt.Sprint(read.Tally.Approvers) != fmt.Sprint(approval.Tally.Approvers) || read.Tally.Requester != "carol" ||
			fmt.Sprint(*read.Approval.Approvers) != "{[alice bob dba] 2 [] [alice bob] [dba]}" || read.Tally.Version != 0 {
			t.Fatalf("Get = %+v, %v; want the approvers, their escalation, the requester and the version that Put recorded", read, err)
		}
		if _, ok, err := b.Update(ctx, func() store.Record { r := read; r.Session = session(); return r }()); ok || err != nil {
			t.Fatalf("Update of an unknown request = %v, %v; want false", ok, err)
		}
		step := func(r store.Record, by string) store.Record {
			t := *r.Tally
			t.Approvals = append(append([]store.Approval(nil), t.Approvals...), store.Approval{By: by, Via: "link", At: at, Digest: r.Approval.Digest, Counted: true})
			r.Tally = &t
			ap, who := *r.Approval, *r.Approval.Approvers
			who.Approved = append(append([]string(nil), who.Approved...), by)
			ap.Approvers = &who
			r.Approval = &ap
			return r
		}
		// Of the Updates made from one state, by both stores at once, exactly one wins.
		const n = 6
		wins := make(chan store.Record, n)
		var wg sync.WaitGroup
		for i := range n {
			st := a
			if i%2 == 1 {
				st = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				up, ok, err := st.Update(ctx, step(read, fmt.Sprintf("user%d", i)))
				if err != nil {
					t.Errorf("Update: %v", err)
				}
				if ok {
					wins <- up
				}
			}()
		}
		wg.Wait()
		close(wins)
		var won []store.Record
		for r := range wins {
			won = append(won, r)
		}
		if len(won) != 1 {
			t.Fatalf("%d Updates from one state won, want exactly 1", len(won))
		}
		up := won[0]
		if up.Rev != got.Rev || up.Tally.Version == 0 {
			t.Fatalf("Update returned Rev %d, Version %d; want the Rev %d kept and a new Version", up.Rev, up.Tally.Version, got.Rev)
		}
		if _, ok, err := a.Update(ctx, step(read, "late")); ok || err != nil {
			t.Fatalf("Update from a state updated meanwhile = %v, %v; want false", ok, err)
		}
		// An edit: new arguments, the model's kept, the editor's approval first; and an
		// escalation step fired.
		edit := step(up, "bob")
		edit.Tally.Arguments, edit.Tally.Escalated = up.Approval.Arguments, 1
		ap := *edit.Approval
		ap.Arguments, ap.Digest = json.RawMessage(`{"db":"staging"}`), "d2"
		edit.Approval = &ap
		steps := edit.Tally.Approvals
		steps[len(steps)-1].Arguments, steps[len(steps)-1].Digest = ap.Arguments, "d2"
		up2, ok, err := b.Update(ctx, edit)
		if !ok || err != nil {
			t.Fatalf("Update of the latest state = %v, %v; want true", ok, err)
		}
		now, err := a.Get(ctx, s, "q1")
		if err != nil || now.Rev != got.Rev || now.Tally == nil || now.Tally.Version != up2.Tally.Version || up2.Tally.Version == up.Tally.Version || len(now.Tally.Approvals) != 2 || string(now.Tally.Arguments) != `{"db":"prod"}` || now.Tally.Escalated != 1 ||
			string(now.Approval.Arguments) != `{"db":"staging"}` || now.Approval.Digest != "d2" || fmt.Sprint(*now.Approval.Approvers) != fmt.Sprint(*up2.Approval.Approvers) || len(now.Approval.Approvers.Approved) != 2 {
			t.Fatalf("Get after Updates = %+v, %v; want the last Update's record", now, err)
		}
		last := now.Tally.Approvals[1]
		if last.By != "bob" || last.Via != "link" || !last.At.Equal(at) || last.Digest != "d2" || !last.Counted || string(last.Arguments) != `{"db":"staging"}` {
			t.Fatalf("the recorded approval is %+v, want bob's edit", last)
		}
		if list, err := b.Pending(ctx, s); err != nil || len(list) != 1 || list[0].Tally == nil || list[0].Tally.Version != up2.Tally.Version || len(list[0].Tally.Approvals) != 2 {
			t.Fatalf("Pending = %+v, %v; want the updated approval", list, err)
		}
		// End names the request by its Rev, whatever the Updates since Put.
		end := got
		end.Outcome = askuser.TimedOut
		end.Decision = &store.Decision{At: at}
		if ok, err := a.End(ctx, end); !ok || err != nil {
			t.Fatalf("End of an updated request = %v, %v; want true", ok, err)
		}
		if _, ok, err := b.Update(ctx, step(now, "dave")); ok || err != nil {
			t.Fatalf("Update of an ended request = %v, %v; want false", ok, err)
		}
		if rec, err := b.Get(ctx, s, "q1"); err == nil && (rec.Outcome != askuser.TimedOut || rec.Rev != got.Rev) {
			t.Fatalf("after End, Get = %+v; want it ended as timed out", rec)
		}
	})

	t.Run("grants", func(t *testing.T) {
		a, b := open(t)
		ga, ok := a.(store.GrantStore)
		gb, _ := b.(store.GrantStore)
		if !ok || gb == nil {
			t.Skip("the store keeps no grants")
		}
		s, other := session(), session()
		at := time.Now().Truncate(time.Millisecond)
		g1 := store.Grant{Session: s, ID: "a1", Tool: "delete_branch", Scope: "feature", Covers: "feature branches", By: "alice", At: at}
		g2 := store.Grant{Session: s, ID: "a2", Tool: "send_email", At: at.Add(time.Second)}
		for _, g := range []store.Grant{g1, g2, {Session: other, ID: "a1", Tool: "x", At: at}} {
			if err := ga.PutGrant(ctx, g); err != nil {
				t.Fatal(err)
			}
		}
		if err := gb.PutGrant(ctx, g1); err != nil { // again: replaces, no second grant
			t.Fatal(err)
		}
		list, err := gb.Grants(ctx, s)
		if err != nil || len(list) != 2 || !sameGrant(list[0], g1) || !sameGrant(list[1], g2) {
			t.Fatalf("Grants = %+v, %v; want %+v and %+v, oldest first", list, err, g1, g2)
		}
		if ok, err := gb.RevokeGrant(ctx, s, "a1"); !ok || err != nil {
			t.Fatalf("RevokeGrant = %v, %v", ok, err)
		}
		if ok, err := ga.RevokeGrant(ctx, s, "a1"); ok || err != nil {
			t.Fatalf("RevokeGrant again = %v, %v; want false", ok, err)
		}
		if list, err := ga.Grants(ctx, s); err != nil || len(list) != 1 || !sameGrant(list[0], g2) {
			t.Fatalf("Grants after the revoke = %+v, %v", list, err)
		}
		if list, err := ga.Grants(ctx, other); err != nil || len(list) != 1 {
			t.Fatalf("another session's grants = %+v, %v", list, err)
		}
	})
}

// sameGrant reports whether a and b are the same grant, their times equal as instants.
func sameGrant(a, b store.Grant) bool {
	at, bt := a.At, b.At
	a.At, b.At = time.Time{}, time.Time{}
	return a == b && at.Equal(bt)
}
