package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/store"
	"github.com/nats-io/nats.go/jetstream"
)

// Grants: what "always allow" decisions let run without asking, kept in a bucket of
// their own, "<Bucket>_grants" (stream KV_<Bucket>_grants), one key per grant,
// "<session>.<grant id>", so that every replica honours every grant and a revoke on any
// replica holds on all. A grant lasts GrantKeep after it was last written. Reads go to
// the stream's leader, as the questions' do: a grant kept by one replica is seen by the
// next call on another.

// DefaultGrantKeep is how long a grant is kept unless [Options.GrantKeep] says otherwise.
const DefaultGrantKeep = 24 * time.Hour

func (s *Store) grantStreamConfig() jetstream.StreamConfig {
	name := s.opts.Bucket + "_grants"
	return jetstream.StreamConfig{
		Name:              "KV_" + name,
		Description:       "askuser: the grants of always-allow decisions",
		Subjects:          []string{"$KV." + name + ".>"},
		MaxMsgsPerSubject: 1,
		MaxBytes:          -1,
		MaxMsgs:           -1,
		MaxMsgSize:        -1,
		MaxConsumers:      -1,
		MaxAge:            s.opts.GrantKeep,
		Storage:           s.opts.Storage,
		Replicas:          s.opts.Replicas,
		AllowRollup:       true,
		DenyDelete:        true,
		Duplicates:        2 * time.Minute,
		Discard:           jetstream.DiscardNew,
		AllowDirect:       s.opts.Replicas == 1, // see streamConfig
	}
}

// grantKV returns the grants' bucket, opening it (creating it, or updating its settings
// to the same) the first time it is needed; a failed open is tried again next time.
func (s *Store) grantKV(ctx context.Context) (jetstream.KeyValue, error) {
	s.grantMu.Lock()
	defer s.grantMu.Unlock()
	if s.grantBucket != nil {
		return s.grantBucket, nil
	}
	cfg := s.grantStreamConfig()
	err := s.retry(ctx, func(ctx context.Context) error {
		_, err := s.js.CreateOrUpdateStream(ctx, cfg)
		return err
	})
	var kv jetstream.KeyValue
	if err == nil {
		err = s.retry(ctx, func(ctx context.Context) error {
			kv, err = s.js.KeyValue(ctx, strings.TrimPrefix(cfg.Name, "KV_"))
			return err
		})
	}
	if err != nil {
		return nil, unavailable("opening the grants' bucket", err)
	}
	s.grantBucket = kv
	return kv, nil
}

// PutGrant keeps g on every replica, in place of a grant of the same session and ID; it
// implements [store.GrantStore].
func (s *Store) PutGrant(ctx context.Context, g store.Grant) error {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	kv, err := s.grantKV(ctx)
	if err != nil {
		return err
	}
	val, err := json.Marshal(storeGrant(&g))
	if err != nil {
		return err
	}
	key := recordKey(g.Session, g.ID)
	err = s.retry(ctx, func(ctx context.Context) error {
		_, err := kv.Put(ctx, key, val)
		return err
	})
	if err != nil {
		return unavailable("keeping the grant", err)
	}
	return nil
}

// Grants returns the session's grants, oldest first, read from the stream's leader; it
// implements [store.GrantStore].
func (s *Store) Grants(ctx context.Context, session askuser.SessionID) ([]store.Grant, error) {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	kv, err := s.grantKV(ctx)
	if err != nil {
		return nil, err
	}
	name := s.opts.Bucket + "_grants"
	prefix := "$KV." + name + "."
	var out []store.Grant
	err = s.retry(ctx, func(ctx context.Context) error {
		out = out[:0]
		st, err := s.js.Stream(ctx, "KV_"+name)
		if err != nil {
			return err
		}
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(prefix+sessionToken(session)+".*"))
		if err != nil {
			return err
		}
		for subject := range info.State.Subjects {
			e, err := kv.Get(ctx, strings.TrimPrefix(subject, prefix))
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				continue // revoked meanwhile
			}
			if err != nil {
				return err
			}
			var sg storedGrant
			if err := json.Unmarshal(e.Value(), &sg); err != nil {
				s.log.Warn("cluster: skipping a grant", "key", e.Key(), "err", err)
				continue
			}
			if sg.Session == session {
				out = append(out, *sg.grant())
			}
		}
		return nil
	})
	if err != nil {
		return nil, unavailable("listing the grants", err)
	}
	slices.SortFunc(out, func(a, b store.Grant) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// RevokeGrant removes the session's grant id on every replica, and reports whether there
// was one; it implements [store.GrantStore].
func (s *Store) RevokeGrant(ctx context.Context, session askuser.SessionID, id string) (bool, error) {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	kv, err := s.grantKV(ctx)
	if err != nil {
		return false, err
	}
	key := recordKey(session, id)
	var found bool
	err = s.retry(ctx, func(ctx context.Context) error {
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			found = false
			return nil
		}
		if err != nil {
			return err
		}
		var sg storedGrant
		if json.Unmarshal(e.Value(), &sg) != nil || sg.Session != session || sg.ID != id {
			found = false // another grant under the same hashed key
			return nil
		}
		err = kv.Purge(ctx, key, jetstream.LastRevision(e.Revision()))
		if isAPIError(err, jetstream.JSErrCodeStreamWrongLastSequence) {
			return errInFlight // written again meanwhile: read it again
		}
		found = err == nil
		return err
	})
	if err != nil {
		return false, unavailable(fmt.Sprintf("revoking the grant %q", id), err)
	}
	return found, nil
}
