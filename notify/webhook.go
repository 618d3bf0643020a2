package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// SignatureHeader is the header that carries a webhook's signature.
const SignatureHeader = "Askuser-Signature"

// Webhook is a [Notifier] that POSTs each notice as JSON to URL, signed as
// Stripe signs its webhooks: the header Askuser-Signature: t=UNIX_SECONDS,v1=HEX carries
// the HMAC-SHA256, keyed with Secret, of t + "." + body. It tries again, with a backoff,
// until the receiver answers 2xx, the request ends or expires, or the dispatcher closes;
// each attempt is bounded by AttemptTimeout, and it gives up quietly. A Webhook may be
// used concurrently; its fields must not change once it is in use.
//
// The body is {"type", "sessionId", "requestId", "title", "url", "expiresAt",
// "actions"}: type is "ask_user_questions" or "tool_approval"; url is the answer link
// (with Links; absent otherwise); actions, for an approval that offers them, is
// [{"decision": "approve", "url": ...}, {"decision": "deny", "url": ...}], the action
// links, which act only on a POST. An escalation step's notice also has "to", and
// "people": the same links made for each user the step names, which act as them
// ([Notice.Users], [Links.AnswerAs]).
type Webhook struct {
	// URL receives the notices.
	URL string
	// Secret keys the signature; at least 32 bytes.
	Secret []byte
	// Links makes the answer and action links; nil sends notices without links.
	Links *Links
	// Client sends the requests. Default: an http.Client of its own.
	Client *http.Client
	// AttemptTimeout bounds each attempt. Default 10 seconds.
	AttemptTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts, which doubles from
	// the first to the second, with jitter. Defaults 1 second and 1 minute.
	MinBackoff, MaxBackoff time.Duration
}

// Body is the JSON a [Webhook] posts.
type Body struct {
	Type      string         `json:"type"`
	SessionID wire.SessionID `json:"sessionId"`
	RequestID string         `json:"requestId"`
	Title     string         `json:"title"`
	URL       string         `json:"url,omitempty"`
	ExpiresAt time.Time      `json:"expiresAt"`
	Actions   []Action       `json:"actions,omitempty"`
	// To is [Notice.To]: who an escalation step's notice is for; absent otherwise.
	To []string `json:"to,omitempty"`
	// People are links of each user of [Notice.Users], which act as them (with Links;
	// absent otherwise): for the receiver to send each person their own. URL and
	// Actions, links of no person, cannot decide an approval whose host named approvers.
	People []PersonLinks `json:"people,omitempty"`
}

// PersonLinks are the links of one person, in a [Body]: the answer link and the action
// links, as Body's own, that act as User.
type PersonLinks struct {
	User    string   `json:"user"`
	URL     string   `json:"url"`
	Actions []Action `json:"actions,omitempty"`
}

// Action is a link that decides an approval, in a [Body].
type Action struct {
	Decision string `json:"decision"`
	URL      string `json:"url"`
}

// BodyOf is the body the webhook posts for n.
func (w *Webhook) BodyOf(n Notice) Body {
	b := Body{Type: wire.EventAsk, SessionID: n.Session, RequestID: n.RequestID, Title: n.Title, ExpiresAt: n.ExpiresAt.UTC(), To: n.To}
	if n.Kind == store.KindApproval {
		b.Type = wire.EventApproval
	}
	if w.Links == nil {
		return b
	}
	b.URL, b.Actions = w.links(n, "")
	for _, u := range n.Users {
		if url, actions := w.links(n, u); url != "" {
			b.People = append(b.People, PersonLinks{User: u, URL: url, Actions: actions})
		}
	}
	return b
}

// links returns the answer link and action links of n, acting as user (none: "").
func (w *Webhook) links(n Notice, user string) (answer string, actions []Action) {
	c := Claims{Session: n.Session, RequestID: n.RequestID, ExpiresAt: n.ExpiresAt, User: user}
	answer = w.Links.link(c)
	for _, d := range []string{wire.DecisionApprove, wire.DecisionDeny} {
		if !slices.Contains(n.Decisions, d) {
			continue
		}
		c.Decision = d
		if u := w.Links.link(c); u != "" {
			actions = append(actions, Action{Decision: d, URL: u})
		}
	}
	return answer, actions
}

// Notify posts n, trying again until it is taken or ctx ends; it implements
// [Notifier].
func (w *Webhook) Notify(ctx context.Context, n Notice) error {
	return w.Send(ctx, w.BodyOf(n))
}

// Send posts b as Notify does: for a notifier that also shows the body's links
// elsewhere, so that it shows the very links it posts (each BodyOf makes new ones).
func (w *Webhook) Send(ctx context.Context, b Body) error {
	body, err := json.Marshal(b)
	if err != nil {
		return err
	}
	client := w.Client
	if client == nil {
		client = http.DefaultClient
	}
	attempt := w.AttemptTimeout
	if attempt <= 0 {
		attempt = 10 * time.Second
	}
	lo, hi := w.MinBackoff, w.MaxBackoff
	if lo <= 0 {
		lo = time.Second
	}
	if hi < lo {
		hi = max(lo, time.Minute)
	}
	wait := lo
	for {
		err = w.post(ctx, client, attempt, body)
		if err == nil {
			return nil
		}
		jittered := wait/2 + rand.N(wait/2+1)
		select {
		case <-ctx.Done():
			return fmt.Errorf("notify: giving up: %w (last attempt: %w)", context.Cause(ctx), err)
		case <-time.After(jittered):
		}
		wait = min(2*wait, hi)
	}
}

// post makes one attempt.
func (w *Webhook) post(ctx context.Context, client *http.Client, timeout time.Duration, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(w.Secret, time.Now(), body))
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("notify: the receiver answered %s", resp.Status)
	}
	return nil
}

// Sign returns the Askuser-Signature header of body sent at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, []byte(ts+"."+string(body))))
}

// ErrBadSignature is the error of a webhook whose signature does not check.
var ErrBadSignature = errors.New("notify: the webhook's signature does not check")

// Verify checks the Askuser-Signature header of a webhook's body, as a receiver does: the
// HMAC must be body's under secret, and its time within tolerance of now, so that an
// old delivery cannot be replayed. It returns an error wrapping ErrBadSignature when not.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: no time", ErrBadSignature)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: sent at %s, outside the tolerance of %s", ErrBadSignature, time.Unix(sec, 0).UTC().Format(time.RFC3339), tolerance)
	}
	want := mac(secret, []byte(ts+"."+string(body)))
	for _, s := range sigs {
		if got, err := hex.DecodeString(s); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no v1 signature matches", ErrBadSignature)
}
