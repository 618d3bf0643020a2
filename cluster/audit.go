package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/askuser-go/askuser/store"
	"github.com/nats-io/nats.go/jetstream"
)

// The watch's audit: what its consumer cannot tell it, asked of the stream's leader.
//
// A watch learns of every change through its consumer, and of the consumer's loss
// through missed heartbeats. Two things escape that: a consumer that sends its
// heartbeats and nothing else (its server no longer gets the stream's writes, or got
// them without waking it), and the questions a snapshot could not settle (see
// reconcile). So every auditInterval, and at once when such a question is in doubt and
// the bucket's stream has elected a leader, the watch asks the leader, away from its own
// goroutine (a leader may take the whole request timeout not to answer):
//
//   - whether the stream holds a message after the last one the watch has handed on.
//     When two audits in a row find one, and the watch has handed on nothing between
//     them, it is behind for no reason it can see: it starts again, from a snapshot, on
//     a new consumer. A consumer that is merely slow hands something on.
//   - the last message of each key in doubt. A message later than the mirror's question
//     ends it, as in a snapshot. The question's own message means it is still pending
//     (its end will come through the watch). No message at all ends it once the key
//     would have been removed anyway: Keep after the question's expiry (a leader just
//     elected may not have applied the question's write yet).
//
// The audit runs in its own goroutine; its result is applied by the watch's goroutine,
// which alone changes the mirror, after checking that the mirror still holds each
// question as the audit saw it.

// auditInterval is how often a watch audits itself. A watch behind for no reason is
// started again two or three intervals after the message it lacks was written.
const auditInterval = 2 * time.Second

// errWatchBehind is why a watch that hands on nothing while the stream has more is
// started again.
var errWatchBehind = errors.New("cluster: the watch gets nothing, and the stream has more")

// audit is one watch's audit state, used by the watch's goroutine only.
type audit struct {
	seen   uint64            // the last stream sequence the watch has handed on
	doubts map[string]uint64 // the questions in doubt: key → the mirror's revision
	busy   bool              // an audit is under way; its result comes on done
	done   chan auditResult  // buffer 1
	owed   bool              // the last audit found a message after owedAt
	owedAt uint64
}

// auditResult is what the stream's leader told an audit.
type auditResult struct {
	after  uint64           // the audit asked for a message after this sequence
	told   bool             // the leader answered that
	next   uint64           // the first message after, when there is one (else 0)
	latest map[string]entry // the last message of each key in doubt the leader told of
	none   map[string]bool  // the keys in doubt of which the leader has no message
}

// startAudit starts an audit unless one is under way.
func (s *Store) startAudit(a *audit) {
	if a.busy {
		return
	}
	a.busy = true
	after, doubts := a.seen, maps.Clone(a.doubts)
	s.bg.Go(func() { a.done <- s.askLeader(after, doubts) })
}

// askLeader asks the stream's leader what an audit needs, within one request timeout,
// and stops at the first request the leader does not answer.
func (s *Store) askLeader(after uint64, doubts map[string]uint64) auditResult {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.RequestTimeout)
	defer cancel()
	r := auditResult{after: after, latest: make(map[string]entry), none: make(map[string]bool)}
	m, err := s.bucket.GetMsg(ctx, after+1, jetstream.WithGetMsgSubject(s.subjects+">"))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		r.told = true
	case err == nil:
		r.told, r.next = true, m.Sequence
	default:
		return r
	}
	for key := range doubts {
		m, err := s.bucket.GetLastMsgForSubject(ctx, s.subjects+key)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			r.none[key] = true
		case err == nil:
			r.latest[key] = entry{key: strings.TrimPrefix(m.Subject, s.subjects), value: m.Data, rev: m.Sequence, put: isPut(m.Header)}
		default:
			return r
		}
	}
	return r
}

// audited applies an audit's result: the questions it settled are handed on as ends, and
// a watch found behind twice in a row returns errWatchBehind, to be started again.
func (s *Store) audited(a *audit, r auditResult) error {
	a.busy = false
	var ch change
	var over []store.Record
	s.mu.Lock()
	for key, rev := range a.doubts {
		m := s.pending[key]
		if m == nil || m.rec.Rev != rev {
			delete(a.doubts, key) // the watch has seen it end
			continue
		}
		e, told := r.latest[key]
		later, _ := s.record(e) // zero for no message
		switch {
		case told && e.rev == lastRevision(m.rec): // pending: its end comes through the watch
			delete(a.doubts, key)
		case told && e.rev > lastRevision(m.rec) && updateOf(m, later):
			m.rec = later // still pending, updated
			delete(a.doubts, key)
		case told && e.rev > rev, r.none[key] && time.Now().After(m.rec.ExpiresAt().Add(s.opts.Keep)):
			s.removeLocked(m)
			rec, ended := overBy(m, later)
			over = append(over, rec)
			if ended {
				ch.ended = append(ch.ended, rec)
			}
			delete(a.doubts, key)
		}
	}
	sortByRev(over)
	for _, rec := range over {
		ch.events = append(ch.events, resolvedEvent(rec))
	}
	if len(over) > 0 {
		s.log.Info("cluster: the stream's leader settled questions the watch had missed", "ended", len(over))
	}
	s.handOnLocked(ch)
	if !r.told {
		return nil
	}
	behind := a.owed && a.owedAt == r.after && a.seen == r.after && r.next != 0
	a.owed, a.owedAt = r.next != 0, r.after
	if behind {
		return fmt.Errorf("%w: the watch has handed on up to %d, the stream holds %d", errWatchBehind, r.after, r.next)
	}
	return nil
}
