package askuser

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/askuser-go/askuser/observe"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// Approvers and quorums: an approval whose [Approvers] need more than one approval (or
// whose requester's own does not count) records each approval in the store with
// [store.Store.Update], a compare-and-set, so that every dispatcher sharing the store
// counts the same ones, and ends once the last one needed is recorded. A denial ends it
// at once, as without approvers (gate.go); an edit records the edited arguments, with a
// new digest, and the count starts again on them, the editor's approval first.

// mayDecide reports whether the person user, in groups, may decide an approval of t:
// one of its approvers, or of the people its escalation steps fired so far added.
func mayDecide(t *store.Tally, user string, groups []string) bool {
	a := &t.Approvers
	if len(a.Users) == 0 && len(a.Groups) == 0 {
		return user != "" || !counting(a) // anyone of the session; counted people are named
	}
	if named(a.Users, a.Groups, user, groups) {
		return true
	}
	for _, e := range a.Escalate[:min(t.Escalated, len(a.Escalate))] {
		if named(e.Users, e.Groups, user, groups) {
			return true
		}
	}
	return false
}

// named reports whether user, in groups, is among users or in one of groups'.
func named(users, groups []string, user string, in []string) bool {
	if user != "" && slices.Contains(users, user) {
		return true
	}
	for _, g := range in {
		if slices.Contains(groups, g) {
			return true
		}
	}
	return false
}

// counting reports whether an approval of a is counted rather than ended by the first
// approval.
func counting(a *Approvers) bool {
	return a.Quorum > 1 || a.SeparateDuties
}

// approvedBy returns who has approved rec's arguments as they are now, each once, in
// the order they approved: the approvals that count toward its quorum.
func approvedBy(rec store.Record) []string {
	var out []string
	for _, a := range rec.Tally.Approvals {
		if a.Counted && a.Digest == rec.Approval.Digest && !slices.Contains(out, a.By) {
			out = append(out, a.By)
		}
	}
	return out
}

// quorumMet reports whether rec has the approvals it needs.
func quorumMet(rec store.Record) bool {
	return len(approvedBy(rec)) >= max(rec.Tally.Approvers.Quorum, 1)
}

// maxUpdateTries bounds how often a decision reads the approval again when another
// dispatcher changed it meanwhile.
const maxUpdateTries = 16

// decideCounted takes a device's decision dec (data as it came) on rec, an approval
// whose approvals are counted. A denial ends it; an approval or an edit is recorded,
// and ends it when it is the last one needed. The same person approving the same
// arguments again changes nothing, and is not an error.
func (d *Dispatcher) decideCounted(ctx context.Context, rec store.Record, data wire.ApprovalResultData, dec store.Decision) error {
	if data.Digest == "" && dec.Decision != wire.DecisionDeny {
		return &wire.AnswerError{RequestID: data.RequestID, Problems: []string{"digest: missing; an approval that needs several approvals binds each to the arguments it saw: send the approval's digest"}}
	}
	for try := 0; ; try++ {
		if quorumMet(rec) {
			// Recorded, and not ended: its dispatcher stopped in between. It ends now.
			d.endApproved(ctx, rec)
			return wire.ErrNotPending
		}
		if dec.Decision == wire.DecisionDeny {
			rec.Outcome, rec.Decision = Denied, &dec
			return d.endDecided(ctx, rec)
		}
		next, changed := withApproval(rec, dec)
		if !changed {
			// Approved again by the same person: it counts once. The devices are told
			// again, so that the one that sent it hears back.
			d.sendProgress(ctx, rec, false)
			return nil
		}
		upd, ok, err := d.store.Update(ctx, next)
		if err != nil {
			return fmt.Errorf("askuser: recording the approval: %w", err)
		}
		if ok {
			d.progressed(ctx, upd, dec)
			if quorumMet(upd) {
				if !d.endApproved(ctx, upd) && !d.endedApproved(ctx, upd) {
					return wire.ErrNotPending
				}
				return nil
			}
			d.sendProgress(ctx, upd, dec.Decision == wire.DecisionEdit)
			return nil
		}
		// Changed or ended meanwhile: read it again, and decide on what it is now.
		cur, err := d.store.Get(ctx, rec.Session, rec.RequestID())
		switch {
		case errors.Is(err, wire.ErrNotPending) || err == nil && (cur.Outcome != 0 || cur.Rev != rec.Rev || cur.Approval == nil || cur.Tally == nil):
			return wire.ErrNotPending
		case err != nil:
			return fmt.Errorf("askuser: reading the approval: %w", err)
		case cur.Approval.Digest != rec.Approval.Digest:
			return fmt.Errorf("%w: the arguments were edited meanwhile (the digest differs)", wire.ErrNotPending)
		case try == maxUpdateTries:
			return fmt.Errorf("askuser: recording the approval: changed %d times meanwhile; send it again", try)
		}
		rec = cur
	}
}

// withApproval returns rec with dec, an approval or an edit, recorded, and false when
// it changes nothing: the same person approving the same arguments again.
func withApproval(rec store.Record, dec store.Decision) (store.Record, bool) {
	t := *rec.Tally
	step := store.Approval{By: dec.By, Via: dec.Via, At: dec.At, Digest: rec.Approval.Digest, Counted: !t.Approvers.SeparateDuties || dec.By != t.Requester}
	a := cloneApproval(*rec.Approval)
	if dec.Decision == wire.DecisionEdit {
		if t.Arguments == nil {
			t.Arguments = rec.Approval.Arguments
		}
		a.Arguments, step.Arguments = dec.Arguments, dec.Arguments
		if a.ArgumentsInvalid && !slices.Contains(a.Decisions, wire.DecisionApprove) {
			a.Decisions = append([]string{wire.DecisionApprove}, a.Decisions...)
		}
		a.ArgumentsInvalid = false
		canonical, _ := canonicalArguments(dec.Arguments)
		a.Digest = approvalDigest(rec.Session, &a, canonical)
		step.Digest = a.Digest
	} else {
		for _, x := range t.Approvals {
			if x.By == step.By && x.Digest == step.Digest {
				return rec, false
			}
		}
	}
	t.Approvals = append(slices.Clone(t.Approvals), step)
	rec.Tally = &t
	rec.Approval = &a
	if a.Approvers == nil {
		a.Approvers = &wire.ApproversData{}
	}
	a.Approvers.Approved = approvedBy(rec)
	return rec, true
}

// endApproved ends rec, whose quorum is met, as approved (edited, when an edit set its
// arguments), and reports whether this end was the one.
func (d *Dispatcher) endApproved(ctx context.Context, rec store.Record) bool {
	last := rec.Tally.Approvals[len(rec.Tally.Approvals)-1]
	dec := store.Decision{Decision: wire.DecisionApprove, By: last.By, Via: last.Via, At: time.Now()}
	rec.Outcome = Approved
	if rec.Tally.Arguments != nil {
		rec.Outcome, dec.Decision, dec.Arguments = Edited, wire.DecisionEdit, rec.Approval.Arguments
	}
	rec.Decision = &dec
	return d.endDecided(ctx, rec) == nil
}

// endedApproved reports whether rec's request, which another end has just ended, ended
// approved: a decision that completed its quorum may see another dispatcher, or another
// device's decision that read the quorum met, end it first; the approval still counted.
func (d *Dispatcher) endedApproved(ctx context.Context, rec store.Record) bool {
	cur, err := d.lookup(ctx, rec.Session, rec.RequestID())
	return err == nil && cur.Rev == rec.Rev && (cur.Outcome == Approved || cur.Outcome == Edited)
}

// endDecided ends rec with the decision it holds, as a device's decision does.
func (d *Dispatcher) endDecided(ctx context.Context, rec store.Record) error {
	won, err := d.end(ctx, rec, nil)
	if err != nil {
		return fmt.Errorf("askuser: recording the decision: %w", err)
	}
	if !won {
		return wire.ErrNotPending
	}
	return nil
}

// sendProgress tells the session's devices who has approved rec so far, and its
// arguments when an edit changed them.
func (d *Dispatcher) sendProgress(ctx context.Context, rec store.Record, edited bool) {
	data := wire.ApprovalProgressData{RequestID: rec.Approval.RequestID, Approved: rec.Approval.Approvers.Approved, Digest: rec.Approval.Digest}
	if data.Approved == nil {
		data.Approved = []string{}
	}
	if edited {
		data.Arguments = rec.Approval.Arguments
	}
	if ev, err := wire.NewEvent(wire.EventApprovalProgress, rec.Session, data); err == nil {
		_ = d.t.Send(ctx, ev)
	}
}

// progressed tells the observer of one approval recorded toward rec's quorum: an
// [observe.Progressed] observation whose Audit is that step's.
func (d *Dispatcher) progressed(ctx context.Context, rec store.Record, dec store.Decision) {
	if d.obs == nil {
		return
	}
	a := rec.Approval
	d.observe(ctx, observe.Observation{Event: observe.Progressed, Session: rec.Session, RequestID: a.RequestID, Kind: store.KindApproval, Carrier: rec.Carrier, Audit: &observe.Audit{
		Session: rec.Session, RequestID: a.RequestID, Tool: a.Tool, Arguments: modelArguments(rec), Description: a.Description,
		Decision: dec.Decision, Edited: dec.Arguments, AskedAt: rec.AskedAt, DecidedAt: dec.At, By: dec.By, Via: dec.Via,
		Approvals: approvalsOf(rec),
	}})
}

// modelArguments returns the arguments of rec's approval as the model wrote them.
func modelArguments(rec store.Record) []byte {
	if rec.Tally != nil && rec.Tally.Arguments != nil {
		return rec.Tally.Arguments
	}
	return rec.Approval.Arguments
}

// approvalsOf returns the approvals recorded of rec's approval; nil without approvers.
func approvalsOf(rec store.Record) []store.Approval {
	if rec.Tally == nil {
		return nil
	}
	return rec.Tally.Approvals
}
