package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/askuser-go/askuser/notify"
)

// NotifyFlags are the demos' flags that reach a person who is not looking
// (docs/NOTIFY.md): -notify-webhook, -notify-after, -notify-secret and -public-url.
type NotifyFlags struct {
	Webhook   string
	After     time.Duration
	Secret    string
	PublicURL string
}

// Register adds the flags to fs.
func (f *NotifyFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Webhook, "notify-webhook", "", "POST a signed notice to this URL when a request waits unseen (off without it)")
	fs.DurationVar(&f.After, "notify-after", 10*time.Second, "how long a request waits unseen before the notice")
	fs.StringVar(&f.Secret, "notify-secret", "", "the secret that signs the webhooks and the links, at least 32 bytes (default: random per run)")
	fs.StringVar(&f.PublicURL, "public-url", "", "what links start with (default: the listening address)")
}

// Apply sets opts' Links (always: the link pages are served) and, with -notify-webhook,
// its Notifier, for a demo listening on listening (host:port). Each notice's links are
// written to logw, so that a person can open one on a phone in the same network.
func (f *NotifyFlags) Apply(opts *Options, listening string, logw io.Writer) error {
	links, notifier, err := f.Make(listening, logw)
	if err != nil {
		return err
	}
	opts.Links = links
	if notifier != nil {
		opts.Notifier, opts.NotifyAfter = notifier, f.After
	}
	return nil
}

// Make returns the answer links of a demo listening on listening (host:port), and, with
// -notify-webhook, the notifier that posts the webhook and writes each notice's links to
// logw (nil without it). The random secret made without -notify-secret is made once and
// kept in f, so that every replica of one process shares it: a link made on one is
// answered on any.
func (f *NotifyFlags) Make(listening string, logw io.Writer) (*notify.Links, notify.Notifier, error) {
	if f.Secret == "" {
		var b [32]byte
		_, _ = rand.Read(b[:])
		f.Secret = hex.EncodeToString(b[:])
	}
	secret := []byte(f.Secret)
	if len(secret) < 32 {
		return nil, nil, fmt.Errorf("-notify-secret must be at least 32 bytes, not %d", len(secret))
	}
	base := f.PublicURL
	if base == "" {
		base = "http://" + listening
	}
	links := &notify.Links{Secrets: [][]byte{secret}, BaseURL: strings.TrimSuffix(base, "/") + "/askuser/links"}
	if f.Webhook == "" {
		return links, nil, nil
	}
	return links, &loggingNotifier{out: logw, hook: &notify.Webhook{URL: f.Webhook, Secret: secret, Links: links}}, nil
}

// loggingNotifier writes each notice's links, then posts the webhook.
type loggingNotifier struct {
	mu   sync.Mutex
	out  io.Writer
	hook *notify.Webhook
}

func (n *loggingNotifier) Notify(ctx context.Context, x notify.Notice) error {
	b := n.hook.BodyOf(x)
	n.mu.Lock()
	fmt.Fprintf(n.out, "notify: %s %q waits in session %s\n  answer: %s\n", b.Type, x.Title, x.Session, b.URL)
	for _, a := range b.Actions {
		fmt.Fprintf(n.out, "  %s: %s\n", a.Decision, a.URL)
	}
	for _, p := range b.People {
		fmt.Fprintf(n.out, "  as %s: answer: %s\n", p.User, p.URL)
		for _, a := range p.Actions {
			fmt.Fprintf(n.out, "  as %s: %s: %s\n", p.User, a.Decision, a.URL)
		}
	}
	n.mu.Unlock()
	return n.hook.Send(ctx, b)
}
