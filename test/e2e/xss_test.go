package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The hostile-text harness: public XSS payloads, read from the shared data beside the
// repository, put where a page shows model text, with a tab that records whatever the
// page then does that it must not: a dialog, a write of top.__pwn (the payloads' stand-in
// for alert), a request that leaves the page's own server, a CSP violation.

// xssPayload is one line of shared/xss/xss-payloads.jsonl.
type xssPayload struct {
	ID    string `json:"id"`
	Class string `json:"class"`
	P     string `json:"p"`
}

// sharedDir is the read-only shared data: $ASKUSER_SHARED, by default ../shared from the
// repository's root. It fails the test when the data is missing, and skips it when
// ASKUSER_SHARED=none.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ASKUSER_SHARED")
	if dir == "none" {
		t.Skip("ASKUSER_SHARED=none: no shared data")
	}
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared") // from test/e2e/, the repository's ../shared
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the shared data is missing (%v): set ASKUSER_SHARED to its directory, or to none", err)
	}
	return dir
}

// xssPayloads reads the payloads, with {{C}} (the attacker's server) made canary's URL.
func xssPayloads(t *testing.T, canary string) []xssPayload {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedDir(t), "xss", "xss-payloads.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []xssPayload
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var p xssPayload
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("xss-payloads.jsonl: %v", err)
		}
		p.P = strings.ReplaceAll(p.P, "{{C}}", canary)
		out = append(out, p)
	}
	if err := sc.Err(); err != nil || len(out) < 100 {
		t.Fatalf("xss-payloads.jsonl: %d payloads (%v)", len(out), err)
	}
	return out
}

// canary is a server that no page may reach: the payloads' attacker.
type canary struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits []string
}

func newCanary(t *testing.T) *canary {
	c := &canary{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.hits = append(c.hits, r.URL.String())
		c.mu.Unlock()
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *canary) taken() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hits
	c.hits = nil
	return h
}

// guard watches a tab for what hostile text must never make a page do. Every request the
// tab makes is intercepted: those to own (a URL prefix) go on, any other is recorded and
// failed.
type guard struct {
	mu      sync.Mutex
	own     []string
	dialogs []string
	foreign []string
}

// hostileGuardScript runs before each page's own scripts: the dialogs write top.__pwn as
// the adapted payloads do, and CSP violations are kept.
const hostileGuardScript = `(() => {
	for (const f of ["alert", "confirm", "prompt", "print"]) window[f] = function () { top.__pwn = top.__pwn || f; };
	window.__csp = [];
	document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));
})()`

func (tb *tab) guard(own string) *guard {
	tb.t.Helper()
	g := &guard{own: []string{own}}
	paused := chromedp.Events(tb.ctx, fetch.RequestPaused)
	dialogs := chromedp.Events(tb.ctx, page.JavascriptDialogOpening)
	go func() {
		for e, err := range paused {
			if err != nil {
				return
			}
			g.mu.Lock()
			ok := slices.ContainsFunc(g.own, func(p string) bool { return strings.HasPrefix(e.Request.URL, p) })
			if !ok {
				g.foreign = append(g.foreign, e.Request.URL)
			}
			g.mu.Unlock()
			if ok {
				_, _ = chromedp.Call(tb.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
				continue
			}
			_, _ = chromedp.Call(tb.ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		}
	}()
	go func() {
		for e, err := range dialogs {
			if err != nil {
				return
			}
			g.mu.Lock()
			g.dialogs = append(g.dialogs, string(e.Type)+": "+e.Message)
			g.mu.Unlock()
			_, _ = chromedp.Call(tb.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	if _, err := chromedp.Call(tb.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		tb.t.Fatalf("intercepting requests: %v", err)
	}
	tb.beforeLoad(hostileGuardScript)
	return g
}

// allow lets the tab's requests to another URL prefix go on.
func (g *guard) allow(own string) {
	g.mu.Lock()
	g.own = append(g.own, own)
	g.mu.Unlock()
}

// taken returns and forgets the dialogs opened and the foreign requests made so far.
func (g *guard) taken() (dialogs, foreign []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	dialogs, foreign = g.dialogs, g.foreign
	g.dialogs, g.foreign = nil, nil
	return dialogs, foreign
}

// withoutCSP serves h without its Content-Security-Policy, so that a test of hostile text
// shows what the page itself does with it, not what the policy would stop.
func withoutCSP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(cspStripper{w}, r)
	})
}

type cspStripper struct{ http.ResponseWriter }

func (s cspStripper) WriteHeader(code int) {
	s.Header().Del("Content-Security-Policy")
	s.ResponseWriter.WriteHeader(code)
}

func (s cspStripper) Write(b []byte) (int, error) {
	s.Header().Del("Content-Security-Policy")
	return s.ResponseWriter.Write(b)
}

// The panel's rules for model text, written again as the tests' oracle (text.js's
// clean, jsontext.js's quoteJSON).

// bidiControl reports the characters the panel drops from shown text: embeddings,
// overrides and isolates.
func bidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// hiddenChar reports the characters the panel escapes in JSON strings.
func hiddenChar(r rune) bool {
	return r == 0xAD || r == 0x61C || r >= 0x200B && r <= 0x200F || r >= 0x2028 && r <= 0x202E ||
		r >= 0x2060 && r <= 0x2069 || r == 0xFEFF
}

// shownText is s as the panel shows model text.
func shownText(s string) string {
	return strings.Map(func(r rune) rune {
		if bidiControl(r) {
			return -1
		}
		return r
	}, s)
}

// shownJSONString is s as the panel shows a JSON string: JSON.stringify's escapes, and
// the hidden characters escaped too.
func shownJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || hiddenChar(r):
			b.WriteString(`\u` + jsonHex(r))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func jsonHex(r rune) string {
	const hex = "0123456789abcdef"
	return string([]byte{hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15]})
}
