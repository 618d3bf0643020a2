package cluster

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// stored is a record as the bucket holds it, in JSON. Rev is written only in an ended
// record: a pending one's Rev is the revision of the entry itself (the KV Create), and the
// ended record, written over it, keeps that number.
type stored struct {
	Session askuser.SessionID `json:"session"`
	Ask     wire.AskData      `json:"ask"`
	// Approval is an approval's request, with the scope of its grant, which devices are
	// not shown; absent for a question set.
	Approval *storedApproval  `json:"approval,omitempty"`
	AskedAt  time.Time        `json:"askedAt"`
	Rev      uint64           `json:"rev,omitempty"`
	Outcome  string           `json:"outcome,omitempty"`
	Answers  []askuser.Answer `json:"answers,omitempty"`
	// Decision is how an ended approval was decided.
	Decision *storedDecision `json:"decision,omitempty"`
	// Carrier is the trace context of the call that made the request.
	Carrier map[string]string `json:"carrier,omitempty"`
	// Nonce is unique to the Put, Update or End that wrote the record, so that a write
	// that timed out and was tried again can tell whether its first try was written.
	Nonce string `json:"nonce,omitempty"`
	// Tally is an approval's who may decide, and the approvals so far (store.Tally).
	Tally *storedTally `json:"tally,omitempty"`
}

type storedTally struct {
	Approvers storedApprovers `json:"approvers"`
	Requester string          `json:"requester,omitempty"`
	Approvals []storedStep    `json:"approvals,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Escalated int             `json:"escalated,omitempty"`
}

type storedApprovers struct {
	Users          []string           `json:"users,omitempty"`
	Groups         []string           `json:"groups,omitempty"`
	Quorum         int                `json:"quorum,omitempty"`
	SeparateDuties bool               `json:"separateDuties,omitempty"`
	Escalate       []storedEscalation `json:"escalate,omitempty"`
}

// storedEscalation is a store.Escalation; After in nanoseconds.
type storedEscalation struct {
	After  time.Duration `json:"after"`
	Users  []string      `json:"users,omitempty"`
	Groups []string      `json:"groups,omitempty"`
}

type storedStep struct {
	By        string          `json:"by,omitempty"`
	Via       string          `json:"via,omitempty"`
	At        time.Time       `json:"at"`
	Digest    string          `json:"digest"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Counted   bool            `json:"counted,omitempty"`
}

type storedApproval struct {
	wire.ApprovalData
	Scope string `json:"scope,omitempty"`
}

type storedDecision struct {
	Decision  string          `json:"decision,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Grant     *storedGrant    `json:"grant,omitempty"`
	By        string          `json:"by,omitempty"`
	Via       string          `json:"via,omitempty"`
	At        time.Time       `json:"at"`
}

// storedGrant is a grant as the bucket holds it, in a decision or on its own.
type storedGrant struct {
	Session askuser.SessionID `json:"session"`
	ID      string            `json:"id"`
	Tool    string            `json:"tool"`
	Scope   string            `json:"scope,omitempty"`
	Covers  string            `json:"covers,omitempty"`
	By      string            `json:"by,omitempty"`
	At      time.Time         `json:"at"`
}

func storeGrant(g *store.Grant) *storedGrant {
	if g == nil {
		return nil
	}
	return &storedGrant{Session: g.Session, ID: g.ID, Tool: g.Tool, Scope: g.Scope, Covers: g.Covers, By: g.By, At: g.At}
}

func (g *storedGrant) grant() *store.Grant {
	if g == nil {
		return nil
	}
	return &store.Grant{Session: g.Session, ID: g.ID, Tool: g.Tool, Scope: g.Scope, Covers: g.Covers, By: g.By, At: g.At}
}

func encodeRecord(rec store.Record, nonce string) ([]byte, error) {
	s := stored{Session: rec.Session, Ask: rec.Ask, AskedAt: rec.AskedAt, Answers: rec.Answers, Carrier: rec.Carrier, Nonce: nonce}
	if a := rec.Approval; a != nil {
		s.Approval = &storedApproval{ApprovalData: *a, Scope: a.Scope}
	}
	if t := rec.Tally; t != nil {
		a := t.Approvers
		st := &storedTally{Approvers: storedApprovers{Users: a.Users, Groups: a.Groups, Quorum: a.Quorum, SeparateDuties: a.SeparateDuties}, Requester: t.Requester, Arguments: t.Arguments, Escalated: t.Escalated}
		for _, e := range a.Escalate {
			st.Approvers.Escalate = append(st.Approvers.Escalate, storedEscalation(e))
		}
		for _, x := range t.Approvals {
			st.Approvals = append(st.Approvals, storedStep{By: x.By, Via: x.Via, At: x.At, Digest: x.Digest, Arguments: x.Arguments, Counted: x.Counted})
		}
		s.Tally = st
	}
	s.Rev = rec.Rev // 0 in a Put: the revision of the entry it makes
	if d := rec.Decision; d != nil {
		s.Decision = &storedDecision{Decision: d.Decision, Reason: d.Reason, Arguments: d.Arguments, Grant: storeGrant(d.Grant), By: d.By, Via: d.Via, At: d.At}
	}
	if rec.Outcome != 0 {
		o, err := rec.Outcome.MarshalText()
		if err != nil {
			return nil, err
		}
		s.Outcome = string(o)
	}
	return json.Marshal(s)
}

// unknownOutcome stands for an outcome written by a newer version of the library.
const unknownOutcome askuser.Outcome = 1 << 16

// decodeRecord reads an entry's value; rev is the entry's revision: the Rev of a
// pending record that Put wrote, and the Tally.Version of one that an Update wrote (with
// the Rev in it). It also returns the nonce of the write.
func decodeRecord(b []byte, rev uint64) (store.Record, string, error) {
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return store.Record{}, "", fmt.Errorf("cluster: a record in the bucket does not decode: %w", err)
	}
	rec := store.Record{Session: s.Session, Ask: s.Ask, Rev: rev, AskedAt: s.AskedAt, Answers: s.Answers, Carrier: s.Carrier}
	if s.Rev != 0 {
		rec.Rev = s.Rev
	}
	if st := s.Tally; st != nil {
		a := st.Approvers
		t := &store.Tally{Approvers: store.Approvers{Users: a.Users, Groups: a.Groups, Quorum: a.Quorum, SeparateDuties: a.SeparateDuties}, Requester: st.Requester, Arguments: st.Arguments, Escalated: st.Escalated}
		for _, e := range a.Escalate {
			t.Approvers.Escalate = append(t.Approvers.Escalate, store.Escalation(e))
		}
		if rev != rec.Rev {
			t.Version = rev // written by an Update
		}
		for _, x := range st.Approvals {
			t.Approvals = append(t.Approvals, store.Approval{By: x.By, Via: x.Via, At: x.At, Digest: x.Digest, Arguments: x.Arguments, Counted: x.Counted})
		}
		rec.Tally = t
	}
	if a := s.Approval; a != nil {
		rec.Approval = &a.ApprovalData
		rec.Approval.Scope = a.Scope
	}
	if d := s.Decision; d != nil {
		rec.Decision = &store.Decision{Decision: d.Decision, Reason: d.Reason, Arguments: d.Arguments, Grant: d.Grant.grant(), By: d.By, Via: d.Via, At: d.At}
	}
	if s.Outcome != "" {
		if err := rec.Outcome.UnmarshalText([]byte(s.Outcome)); err != nil {
			// Ended by a newer version with an outcome this one does not know: still
			// ended, and the dispatcher renders an outcome it does not know as one.
			rec.Outcome = unknownOutcome
		}
	}
	return rec, s.Nonce, nil
}
