package cluster

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/askuser-go/askuser"
)

// stored is a record as the bucket holds it, in JSON. Rev is written only in an ended
// record: a pending one's Rev is the revision of the entry itself (the KV Create), and the
// ended record, written over it, keeps that number.
type stored struct {
	Session askuser.SessionID `json:"session"`
	Ask     askuser.AskData   `json:"ask"`
	AskedAt time.Time         `json:"askedAt"`
	Rev     uint64            `json:"rev,omitempty"`
	Outcome string            `json:"outcome,omitempty"`
	Answers []askuser.Answer  `json:"answers,omitempty"`
	// Nonce is unique to the Put or End that wrote the record, so that a write that
	// timed out and was tried again can tell whether its first try was written.
	Nonce string `json:"nonce,omitempty"`
}

func encodeRecord(rec askuser.Record, nonce string) ([]byte, error) {
	s := stored{Session: rec.Session, Ask: rec.Ask, AskedAt: rec.AskedAt, Answers: rec.Answers, Nonce: nonce}
	if rec.Outcome != 0 {
		s.Rev = rec.Rev
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

// decodeRecord reads an entry's value; rev is the entry's revision, the Rev of a pending
// record. It also returns the nonce of the write.
func decodeRecord(b []byte, rev uint64) (askuser.Record, string, error) {
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return askuser.Record{}, "", fmt.Errorf("cluster: a record in the bucket does not decode: %w", err)
	}
	rec := askuser.Record{Session: s.Session, Ask: s.Ask, Rev: rev, AskedAt: s.AskedAt, Answers: s.Answers}
	if s.Outcome != "" {
		rec.Rev = s.Rev
		if err := rec.Outcome.UnmarshalText([]byte(s.Outcome)); err != nil {
			// Ended by a newer version with an outcome this one does not know: still
			// ended, and the dispatcher renders an outcome it does not know as one.
			rec.Outcome = unknownOutcome
		}
	}
	return rec, s.Nonce, nil
}
