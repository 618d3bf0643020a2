package tui_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// One headless Chromium serves the whole run, started by the first test that needs
// it and stopped by TestMain. A missing browser fails the test: it is never skipped.
var browser struct {
	once sync.Once
	ctx  context.Context
	err  error
	dir  string
	stop []func()
}

func startBrowser(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(func() {
		chrome, err := findChrome()
		if err != nil {
			browser.err = err
			return
		}
		if browser.dir, err = os.MkdirTemp("", "askuser-tui-chromium-"); err != nil {
			browser.err = err
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(chrome),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.UserDataDir(browser.dir),
			chromedp.WindowSize(1000, 800),
		)
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(alloc)
		browser.stop = append(browser.stop, cancelAlloc, cancel)
		if err := chromedp.Do(ctx); err != nil {
			browser.err = fmt.Errorf("starting Chromium (%s): %w", chrome, err)
			return
		}
		browser.ctx = ctx
	})
	if browser.err != nil {
		t.Fatal(browser.err)
	}
	return browser.ctx
}

func stopBrowser() {
	for i := len(browser.stop) - 1; i >= 0; i-- {
		browser.stop[i]()
	}
	if browser.dir != "" {
		_ = os.RemoveAll(browser.dir)
	}
}

// findChrome returns the browser to drive: $E2E_CHROME, or Chromium on the PATH.
func findChrome() (string, error) {
	if p := os.Getenv("E2E_CHROME"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: this test needs a headless browser. " +
		"Install it (Debian/Ubuntu: apt-get install -y chromium) or set E2E_CHROME to a Chrome or Chromium binary")
}

// TestBrowserAnswersWhileTerminalShows: the same question is open in the terminal and
// in a browser tab running the real panel; the browser answers, the dispatcher gets
// the browser's answer, and the terminal's form closes saying so.
func TestBrowserAnswersWhileTerminalShows(t *testing.T) {
	s := newServer(t, nil)
	session := newSession()
	tm := newTerm(t, s, session, nil)

	tab, cancelTab := chromedp.NewContext(startBrowser(t))
	defer cancelTab()
	tab, cancelTimeout := context.WithTimeout(tab, 2*waitTimeout)
	defer cancelTimeout()
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr,
			chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(waitTimeout))
	}
	do("opening the panel page", chromedp.Navigate(s.srv.URL+"/?session="+session),
		poll(`window.client && window.client.connected()`))

	ch := s.ask(session, "call_browser", singleArgs)
	tm.waitScreen("[Framework] Which framework should we use?", "enter submit")
	panel := `[data-testid="panel"][data-request-id="call_browser"]`
	do("waiting for the panel", poll(`!!document.querySelector('`+panel+`')`))
	do("answering in the browser",
		chromedp.Click(chromedp.CSS(panel+` [data-testid="option"][data-index="1"]`)),
		chromedp.Click(chromedp.CSS(panel+` [data-testid="submit"]`)))

	got := answers(t, s.result(ch))
	if len(got) != 1 || got[0].SelectedLabels[0] != "React" || got[0].CustomInput != nil {
		t.Fatalf("answers %+v, want the browser's React", got)
	}
	tm.waitScreen("Answered on another device.")
	tm.waitGone("enter submit")
	do("the panel clearing", poll(`!document.querySelector('`+panel+`')`))
}
