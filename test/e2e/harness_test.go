package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The suite builds the demo (examples/web), runs it on free ports, and
// drives one headless Chromium with a tab per device. It needs Chromium: a missing one is
// a failure, never a skip.

const (
	// actionTimeout bounds one step of a test (a click, a wait for the panel).
	actionTimeout = 20 * time.Second
	// tabTimeout bounds everything one tab does.
	tabTimeout = 2 * time.Minute
)

var env struct {
	once sync.Once
	err  error

	dir     string // temporary files: the demo binary, Chromium's profile
	bin     string // the demo binary
	main    *demoServer
	noCSP   *demoServer
	browser context.Context
	stop    []func()
}

var sessionSeq atomic.Int64

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(env.stop) - 1; i >= 0; i-- {
		env.stop[i]()
	}
	if env.dir != "" {
		_ = os.RemoveAll(env.dir)
	}
	os.Exit(code)
}

// setup starts the demo servers and the browser once for the whole suite.
func setup(t *testing.T) {
	t.Helper()
	env.once.Do(func() { env.err = start() })
	if env.err != nil {
		t.Fatal(env.err)
	}
}

func start() error {
	chrome, err := findChrome()
	if err != nil {
		return err
	}
	env.dir, err = os.MkdirTemp("", "askuser-e2e-")
	if err != nil {
		return err
	}
	env.bin = filepath.Join(env.dir, "demo")
	if err := buildDemo(env.bin); err != nil {
		return err
	}
	if env.main, err = startDemo("127.0.0.1:0", "-timeout", "3m"); err != nil {
		return err
	}
	env.stop = append(env.stop, env.main.stop)
	if env.noCSP, err = startDemo("127.0.0.1:0", "-timeout", "3m", "-csp=false"); err != nil {
		return err
	}
	env.stop = append(env.stop, env.noCSP.stop)

	browser, stop, err := startBrowser(chrome, filepath.Join(env.dir, "profile"))
	env.stop = append(env.stop, stop)
	env.browser = browser
	return err
}

// startBrowser starts headless Chromium with its profile in dir; stop ends it.
func startBrowser(chrome, dir string) (browser context.Context, stop func(), err error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1200, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	stop = func() { cancelBrowser(); cancelAlloc() }
	if err := chromedp.Do(browser); err != nil {
		return nil, stop, fmt.Errorf("starting Chromium (%s): %w", chrome, err)
	}
	return browser, stop, nil
}

// findChrome returns the browser to drive: $E2E_CHROME, or chromium on the PATH.
func findChrome() (string, error) {
	if p := os.Getenv("E2E_CHROME"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: the end-to-end tests need a headless browser. " +
		"Install it (Debian/Ubuntu: apt-get install -y chromium) or set E2E_CHROME to a Chrome or Chromium binary")
}

func buildDemo(out string) error {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return err
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the go command is needed to build the demo: %w", err)
	}
	cmd := exec.Command(goCmd, "build", "-o", out, "./examples/web")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the demo: %v\n%s", err, b)
	}
	return nil
}

// demoServer is one running demo process.
type demoServer struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT/
	addr string
	done chan struct{}
}

// startDemo runs the demo binary on addr and waits until it says where it listens.
func startDemo(addr string, args ...string) (*demoServer, error) {
	cmd := exec.Command(env.bin, append([]string{"-addr", addr}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &demoServer{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				select {
				case found <- u:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case u := <-found:
		s.base = u
		s.addr = strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/")
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("the demo exited before listening (%v)", cmd.ProcessState)
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, errors.New("the demo did not print its address within 30s")
	}
}

// demoWithTimeout starts a demo of the test's own whose questions and approvals wait
// timeout (a Go duration), stopped when the test ends.
func demoWithTimeout(t *testing.T, timeout string) *demoServer {
	t.Helper()
	setup(t)
	srv, err := startDemo("127.0.0.1:0", "-timeout", timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.stop)
	return srv
}

// stop interrupts the demo and waits for it, killing it if it lingers.
func (s *demoServer) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// kill ends the demo at once, as a crash would: it tells nobody anything.
func (s *demoServer) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// proxy is a TCP relay in front of a demo, to cut the network between browser and
// server while both keep running.
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
}

func newProxy(target string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, target: target, conns: make(map[net.Conn]struct{})}
	go p.serve()
	return p, nil
}

// server describes the proxy as a demo address for tab.open.
func (p *proxy) server() *demoServer {
	return &demoServer{base: "http://" + p.ln.Addr().String() + "/", addr: p.ln.Addr().String()}
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.relay(c)
	}
}

func (p *proxy) relay(c net.Conn) {
	if !p.track(c) {
		_ = c.Close()
		return
	}
	u, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(u) {
		_ = c.Close()
		if u != nil {
			_ = u.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(u, c)
	go pipe(c, u)
	<-done
	_ = c.Close()
	_ = u.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, u)
	p.mu.Unlock()
}

func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// cut drops every connection and refuses new ones until restore.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		_ = c.Close()
	}
}

func (p *proxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.cut()
}

// tab is one browser tab: one device of a session.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu         sync.Mutex
	exceptions []string
}

// newTab opens a tab in the suite's browser. Its end checks that the page threw no
// exception and, under the page's Content-Security-Policy, that nothing was blocked:
// the panel must need no inline script or style.
func newTab(t *testing.T) *tab {
	t.Helper()
	setup(t)
	ctx, cancel := chromedp.NewContext(env.browser)
	ctx, cancelTimeout := context.WithTimeout(ctx, tabTimeout)
	tb := &tab{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1100, 900)); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.IsException() {
				tb.mu.Lock()
				tb.exceptions = append(tb.exceptions, m.String())
				tb.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		if ctx.Err() != nil {
			return
		}
		tb.mu.Lock()
		exc := tb.exceptions
		tb.mu.Unlock()
		if len(exc) > 0 {
			t.Errorf("the page threw: %q", exc)
		}
		violations, err := run(tb, chromedp.Evaluate[[]map[string]any](`(window.demo && window.demo.cspViolations) || []`))
		if err == nil && len(violations) > 0 {
			t.Errorf("Content-Security-Policy violations: %v", violations)
		}
	})
	return tb
}

// run runs one action with the step timeout and returns its value.
func run[T any](tb *tab, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(tb.ctx, actionTimeout)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// try runs steps with the step timeout and returns the error.
func (tb *tab) try(a chromedp.Action[chromedp.Void]) error {
	_, err := run(tb, a)
	return err
}

// do runs steps and fails the test on an error, saying what was being done.
func (tb *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := tb.try(chromedp.Steps(steps...)); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page and fails the test on an error.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	v, err := run(tb, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor waits until a JavaScript expression is truthy and returns its value.
func waitFor[T any](tb *tab, what, expr string) T {
	tb.t.Helper()
	v, err := run(tb, chromedp.Poll[T](expr,
		chromedp.WithPollingInterval(25*time.Millisecond),
		chromedp.WithPollingTimeout(actionTimeout)))
	if err != nil {
		tb.t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
	return v
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// newSession returns a fresh numeric session id.
func newSession() string {
	return fmt.Sprint(1000 + sessionSeq.Add(1))
}

// open loads the demo page of a session and waits until its socket is open.
func (tb *tab) open(s *demoServer, session string) {
	tb.t.Helper()
	tb.do("loading the demo page", chromedp.Navigate(s.base+"?session="+session))
	waitFor[bool](tb, "the connection", `document.querySelector("#conn").dataset.state === "open"`)
}

// say sends a message to the agent through the page's message box.
func (tb *tab) say(text string) {
	tb.t.Helper()
	tb.do("sending "+text, chromedp.SetValue(chromedp.CSS("#message"), text), chromedp.Click(chromedp.CSS("#send")))
}

// newestPanel waits for a question panel and returns the requestId of the newest.
func (tb *tab) newestPanel() string {
	tb.t.Helper()
	return waitFor[string](tb, "a question panel", `(() => {
		const ps = document.querySelectorAll('[data-testid="panel"]');
		return ps.length ? ps[ps.length - 1].dataset.requestId : false;
	})()`)
}

// sel returns a CSS selector inside the panel of requestId.
func sel(requestID string, inner string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`[data-testid="panel"][data-request-id=%s] %s`, js(requestID), inner))
}

// option selects option o of question q of a panel.
func option(requestID string, q, o int) chromedp.CSS {
	return sel(requestID, fmt.Sprintf(`[data-testid="question"][data-index="%d"] [data-testid="option"][data-index="%d"]`, q, o))
}

// other selects the Other box of question q of a panel.
func other(requestID string, q int) chromedp.CSS {
	return sel(requestID, fmt.Sprintf(`[data-testid="question"][data-index="%d"] [data-testid="other-input"]`, q))
}

// toolResult waits for the tool_result of a call and returns its content.
func (tb *tab) toolResult(requestID string) string {
	tb.t.Helper()
	return waitFor[string](tb, "the tool result of "+requestID, `(() => {
		const e = window.demo.events.find(e => e.type === "tool_result" && e.data.requestId === `+js(requestID)+`);
		return e ? e.data.content : false;
	})()`)
}

// panelGone waits until the panel of requestId is no longer in the page.
func (tb *tab) panelGone(requestID string) {
	tb.t.Helper()
	waitFor[bool](tb, "the panel to go", `!document.querySelector(`+js(`[data-testid="panel"][data-request-id=`+js(requestID)+`]`)+`)`)
	tb.settle() // see approvalGone
}

// state returns, for each question of a panel, which options are checked, whether
// Submit is enabled, and the Other texts. Submit stays focusable while it cannot send
// (so that a keyboard reaches it and it can say what is missing): aria-disabled is what
// says it is off.
type panelState struct {
	Checked [][]bool `json:"checked"`
	Other   []string `json:"other"`
	Submit  bool     `json:"submit"`
}

func (tb *tab) state(requestID string) panelState {
	tb.t.Helper()
	return eval[panelState](tb, `(() => {
		const p = document.querySelector(`+js(`[data-testid="panel"][data-request-id=`+js(requestID)+`]`)+`);
		const qs = [...p.querySelectorAll('[data-testid="question"]')];
		return {
			checked: qs.map(q => [...q.querySelectorAll('[data-testid="option-input"]')].map(i => i.checked)),
			other: qs.map(q => q.querySelector('[data-testid="other-input"]').value),
			submit: p.querySelector('[data-testid="submit"]').getAttribute("aria-disabled") === "false",
		};
	})()`)
}

// pageScreenshot writes the whole viewport to docs/screenshots/NAME.png when
// E2E_SCREENSHOTS=1.
func (tb *tab) pageScreenshot(name string) {
	tb.t.Helper()
	if os.Getenv("E2E_SCREENSHOTS") != "1" {
		return
	}
	png, err := run(tb, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	writeScreenshot(tb.t, name, png)
}

// screenshot writes the panels of the page to docs/screenshots/NAME.png when
// E2E_SCREENSHOTS=1: the question section, let out of its scrolling box to its full
// height for the picture, then put back.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	if os.Getenv("E2E_SCREENSHOTS") != "1" {
		return
	}
	eval[chromedp.Void](tb, `(() => {
		for (const [sel, style] of [
			["html", "height:auto"], ["body", "height:auto"], [".chat", "flex:none"],
			["#questions", "flex:none;max-height:none;overflow:visible;padding:14px;margin:0;background:" + getComputedStyle(document.body).backgroundColor],
		]) document.querySelector(sel).style.cssText = style;
		// The page is taller than the window now: headers and footers are not to stick.
		document.querySelectorAll(".askuser-head, .askuser-foot").forEach(e => e.style.position = "static");
		document.activeElement && document.activeElement.blur && document.activeElement.blur();
	})()`)
	png, err := run(tb, chromedp.Screenshot(chromedp.CSS("#questions")))
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	writeScreenshot(tb.t, name, png)
	eval[chromedp.Void](tb, `(() => {
		["html", "body", ".chat", "#questions"].forEach(s => document.querySelector(s).style.cssText = "");
		document.querySelectorAll(".askuser-head, .askuser-foot").forEach(e => e.style.position = "");
	})()`)
}

func writeScreenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	dir := filepath.Join("..", "..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// viewport sets the tab's viewport; mobile emulates a phone: a mobile layout viewport,
// touch, and two device pixels to the CSS pixel.
func (tb *tab) viewport(w, h int64, mobile bool) {
	tb.t.Helper()
	var opts []chromedp.EmulateViewportOption
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulateScale(2))
	}
	tb.do("setting the viewport", chromedp.EmulateViewport(w, h, opts...))
}

// colorScheme makes the page see prefers-color-scheme: scheme ("light" or "dark").
func (tb *tab) colorScheme(scheme string) {
	tb.t.Helper()
	if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		tb.t.Fatalf("emulating %s mode: %v", scheme, err)
	}
}

// browserLanguage makes the browser say its language is lang (navigator.language and
// Accept-Language).
func (tb *tab) browserLanguage(lang string) {
	tb.t.Helper()
	ua := eval[string](tb, `navigator.userAgent`)
	if _, err := chromedp.Call(tb.ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
		UserAgent: ua, AcceptLanguage: lang,
	}); err != nil {
		tb.t.Fatalf("setting the browser's language: %v", err)
	}
}

// beforeLoad runs script in every page the tab loads from now on, before the page's own.
func (tb *tab) beforeLoad(script string) {
	tb.t.Helper()
	if _, err := chromedp.Call(tb.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script}); err != nil {
		tb.t.Fatalf("adding a script: %v", err)
	}
}

// frames records the WebSocket messages of a tab, as they are on the wire.
type frames struct {
	mu             sync.Mutex
	sent, received []string
}

// recordFrames starts recording the tab's WebSocket messages.
func (tb *tab) recordFrames() *frames {
	tb.t.Helper()
	f := &frames{}
	sent := chromedp.Events(tb.ctx, network.WebSocketFrameSent)
	received := chromedp.Events(tb.ctx, network.WebSocketFrameReceived)
	go func() {
		for e, err := range sent {
			if err != nil {
				return
			}
			f.mu.Lock()
			f.sent = append(f.sent, string(e.Response.PayloadData))
			f.mu.Unlock()
		}
	}()
	go func() {
		for e, err := range received {
			if err != nil {
				return
			}
			f.mu.Lock()
			f.received = append(f.received, string(e.Response.PayloadData))
			f.mu.Unlock()
		}
	}()
	if _, err := chromedp.Call(tb.ctx, network.Enable, network.EnableParams{}); err != nil {
		tb.t.Fatalf("recording WebSocket messages: %v", err)
	}
	return f
}

// find waits until a recorded message (sent or received) has every one of parts, and
// returns it.
func (f *frames) find(t *testing.T, sent bool, parts ...string) string {
	t.Helper()
	deadline := time.Now().Add(actionTimeout)
	for {
		f.mu.Lock()
		list := f.received
		if sent {
			list = f.sent
		}
		for _, m := range list {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(m, p)
			}
			if ok {
				f.mu.Unlock()
				return m
			}
		}
		f.mu.Unlock()
		if time.Now().After(deadline) {
			f.mu.Lock()
			seen := len(list)
			last := ""
			if seen > 0 {
				last = list[seen-1]
			}
			f.mu.Unlock()
			t.Fatalf("no WebSocket message (sent %v) with %q; %d messages, the last: %.600s", sent, parts, seen, last)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// key presses a key in the page (kb constants or a single character).
func (tb *tab) key(keys ...string) {
	tb.t.Helper()
	for _, k := range keys {
		tb.do("pressing "+k, chromedp.KeyEvent(k))
	}
}

// focused describes the focused element: its data-testid, the index of its question and
// option when it is in one, and the request id of its panel.
type focusInfo struct {
	TestID   string `json:"testid"`
	Question int    `json:"question"`
	Option   int    `json:"option"`
	Panel    string `json:"panel"`
}

func (tb *tab) focused() focusInfo {
	tb.t.Helper()
	return eval[focusInfo](tb, `(() => {
		const a = document.activeElement;
		const q = a.closest('[data-testid="question"]');
		const o = a.closest('[data-testid="option"]');
		const p = a.closest('[data-testid="panel"]');
		return {testid: a.dataset.testid || a.tagName.toLowerCase(), question: q ? +q.dataset.index : -1,
			option: o ? +o.dataset.index : -1, panel: p ? p.dataset.requestId : ""};
	})()`)
}
