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

	"github.com/askuser-go/askuser"
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
	fs.DurationVar(&f.After, "notify-after", askuser.DefaultNotifyAfter, "how long a request waits unseen before the notice")
	fs.StringVar(&f.Secret, "notify-secret", "", "the secret that signs the webhooks and the links, at least 32 bytes (default: random per run)")
	fs.StringVar(&f.PublicURL, "public-url", "", "what links start with (default: the listening address)")
}

// Apply sets opts' Links (always: the link pages are served) and, with -notify-webhook,
// its Notifier, for a demo listening on listening (host:port). Each notice's links are
// written to logw, so that a person can open one on a phone in the same network.
func (f *NotifyFlags) Apply(opts *Options, listening string, logw io.Writer) error {
	secret := []byte(f.Secret)
	if f.Secret == "" {
		var b [32]byte
		_, _ = rand.Read(b[:])
		secret = []byte(hex.EncodeToString(b[:]))
	}
	if len(secret) < 32 {
		return fmt.Errorf("-notify-secret must be at least 32 bytes, not %d", len(secret))
	}
	base := f.PublicURL
	if base == "" {
		base = "http://" + listening
	}
	opts.Links = &notify.Links{Secrets: [][]byte{secret}, BaseURL: strings.TrimSuffix(base, "/") + "/askuser/links"}
	if f.Webhook == "" {
		return nil
	}
	opts.Notifier = &loggingNotifier{out: logw, hook: &notify.Webhook{URL: f.Webhook, Secret: secret, Links: opts.Links}}
	opts.NotifyAfter = f.After
	return nil
}

// loggingNotifier writes each notice's links, then posts the webhook.
type loggingNotifier struct {
	mu   sync.Mutex
	out  io.Writer
	hook *notify.Webhook
}

func (n *loggingNotifier) Notify(ctx context.Context, x askuser.Notice) error {
	b := n.hook.BodyOf(x)
	n.mu.Lock()
	fmt.Fprintf(n.out, "notify: %s %q waits in session %s\n  answer: %s\n", b.Type, x.Title, x.Session, b.URL)
	for _, a := range b.Actions {
		fmt.Fprintf(n.out, "  %s: %s\n", a.Decision, a.URL)
	}
	n.mu.Unlock()
	return n.hook.Send(ctx, b)
}
