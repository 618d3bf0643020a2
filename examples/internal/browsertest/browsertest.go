// Package browsertest is the person's browser in the tests of the examples that replay
// a recorded LLM exchange: headless Chromium on the example's page, answering the
// question on the panel and deciding the approval on its card, as a person would.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askuser-go/askuser/examples/internal/exampletest"
)

// stepTimeout bounds one step in the browser (a page load, a wait for a card), far
// above what a loaded machine needs.
const stepTimeout = 20 * time.Second

// Device is an [exampletest.Replay]'s Browser: it opens the page at url in a new
// headless Chromium, waits for the panel of the question asked under r.CallID, and
// answers with the first option of the first question, or declines. When r.Approval is
// set, it then waits for the card of that approval, checks that the card names its
// tool and shows its arguments and that it is the only card, opens the editor, replaces
// the arguments with r.Approval.Edit, runs the call, and waits for the card to go. The
// browser stays open until the test ends, so that the example closes the page's
// connection as it would a person's. It fails t when Chromium is missing (never a
// skip) or the page does not show what it should.
func Device(_ context.Context, t *testing.T, url string, r exampletest.Replay) {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(Browser(t))
	t.Cleanup(cancelTab)
	// The tab opens with its first action, and closes when that action's context ends:
	// it is opened with its own context, before any step with a timeout.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(tab, stepTimeout)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v; the page shows:\n%s", what, err, shows(tab))
		}
	}
	eval := func(what, expr string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(tab, stepTimeout)
		defer cancel()
		v, err := chromedp.Run(sctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}

	panel := `[data-testid="panel"][data-request-id=` + quote(r.CallID) + `]`
	do("opening the page and waiting for the question", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(panel)))
	if r.Decline {
		do("declining", chromedp.Click(chromedp.CSS(panel+` [data-testid="decline"]`)))
	} else {
		do("answering with the first option",
			chromedp.Click(chromedp.CSS(panel+` [data-testid="question"][data-index="0"] [data-testid="option"][data-index="0"]`)),
			chromedp.Click(chromedp.CSS(panel+` [data-testid="submit"]`)))
	}
	do("the question's panel closing", chromedp.WaitNotPresent(chromedp.CSS(panel)))
	if r.Approval == nil {
		return
	}

	card := `[data-testid="approval"][data-request-id=` + quote(r.Approval.CallID) + `]`
	do("waiting for the approval's card", chromedp.WaitVisible(chromedp.CSS(card)))
	text := func(testid string) string {
		return eval("reading the card", `document.querySelector(`+quote(card+` [data-testid="`+testid+`"]`)+`).textContent`)
	}
	if tool := text("approval-tool"); !strings.Contains(tool, r.Approval.Tool) {
		t.Errorf("the card names the tool %q, want %q", tool, r.Approval.Tool)
	}
	if args := text("approval-arguments"); !strings.Contains(args, r.Approval.Shows) {
		t.Errorf("the card shows the arguments %q, want them to show %q", args, r.Approval.Shows)
	}
	if n := eval("counting the cards", `String(document.querySelectorAll('[data-testid="approval"]').length)`); n != "1" {
		t.Errorf("the page shows %s approval cards, want %s's alone", n, r.Approval.CallID)
	}
	do("editing the call", chromedp.Click(chromedp.CSS(card+` [data-testid="edit"]`)), chromedp.WaitVisible(chromedp.CSS(card+` [data-testid="edit-input"]`)))
	do("typing the edit", chromedp.Evaluate[chromedp.Void](`(() => {
		const e = document.querySelector(`+quote(card+` [data-testid="edit-input"]`)+`);
		e.focus(); e.value = `+quote(string(r.Approval.Edit))+`; e.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))
	do("running the edited call", chromedp.Click(chromedp.CSS(card+` [data-testid="edit-confirm"]`)), chromedp.WaitNotPresent(chromedp.CSS(card)))
}

// Browser starts a headless Chromium for the test, closed when the test ends, and
// returns its context: chromedp.NewContext of it opens a tab. It fails t when there is
// no Chromium ($E2E_CHROME, or chromium or Chrome on PATH): never a skip.
func Browser(t *testing.T) context.Context {
	t.Helper()
	chrome, err := findChrome()
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(1200, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("starting Chromium (%s): %v", chrome, err)
	}
	return browser
}

// shows is the text the page in tab shows, for a failure's message.
func shows(tab context.Context) string {
	ctx, cancel := context.WithTimeout(tab, 5*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return text
}

// quote is s as a JavaScript (and CSS) string literal.
func quote(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

// findChrome is the Chromium to run: $E2E_CHROME, or the first on PATH.
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
