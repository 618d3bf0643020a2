package e2e

import (
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// Reaching a person whose tab is hidden: the title's count, the "Notify me" control,
// desktop notifications made while the page is hidden and closed when their request
// ends, and the visibility the page reports to the hub.

// hide makes the page hidden (or visible again), as switching tabs does, and tells it.
func (tb *tab) hide(hidden bool) {
	tb.t.Helper()
	state := "visible"
	if hidden {
		state = "hidden"
	}
	eval[bool](tb, `(() => {
		Object.defineProperty(document, "visibilityState", {configurable: true, get: () => `+js(state)+`});
		Object.defineProperty(document, "hidden", {configurable: true, get: () => `+js(state)+` === "hidden"});
		document.dispatchEvent(new Event("visibilitychange"));
		return true;
	})()`)
}

// recordNotifications makes the page's notifications recorded as they are made, closed
// and clicked, keeping them real.
func (tb *tab) recordNotifications() {
	tb.t.Helper()
	eval[bool](tb, `(() => {
		const Real = window.Notification;
		window.shown = [];
		window.byTag = {};
		class Recorded extends Real {
			constructor(title, opts) { super(title, opts); this.rec = {title, body: opts.body, tag: opts.tag, closed: false}; window.shown.push(this.rec); window.byTag[opts.tag] = this; }
			close() { this.rec.closed = true; super.close(); }
		}
		Object.defineProperty(Recorded, "permission", {get: () => Real.permission});
		Recorded.requestPermission = (cb) => Real.requestPermission(cb);
		window.Notification = Recorded;
		return true;
	})()`)
}

func TestTitleCountAndNotifications(t *testing.T) {
	tb := newTab(t)
	session := newSession()
	tb.open(env.main, session)
	origin := env.main.base[:len(env.main.base)-1]
	if _, err := chromedp.Call(tb.ctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "notifications"}, Setting: browser.PermissionSettingGranted, Origin: origin,
	}); err != nil {
		t.Fatalf("granting notifications: %v", err)
	}
	base := eval[string](tb, `document.title`)
	frames := tb.recordFrames()

	// The control asks for the permission only on a click, and remembers the choice.
	if !eval[bool](tb, `!document.querySelector('[data-testid="notify-me"]').hidden`) {
		t.Fatal(`"Notify me" is not offered`)
	}
	tb.do("clicking Notify me", chromedp.Click(chromedp.CSS(`[data-testid="notify-me"]`)))
	waitFor[bool](tb, "the choice shown", `document.querySelector('[data-testid="notify-state"]').textContent === "Notifications on" && document.querySelector('[data-testid="notify-me"]').hidden`)
	tb.open(env.main, session) // a reload: remembered
	waitFor[bool](tb, "the choice remembered", `document.querySelector('[data-testid="notify-state"]').textContent === "Notifications on"`)
	tb.recordNotifications()

	// Hidden: the hub is told, and a new request makes a notification.
	tb.hide(true)
	frames.find(t, true, `"type":"device_visibility"`, `"visible":false`)
	tb.say("/parallel") // a question and an approval at once
	q := tb.newestPanel()
	a := tb.newestApproval("")
	waitFor[bool](tb, "the title's count", `document.title === "(2) Waiting for you · " + `+js(base))
	shown := waitFor[[]any](tb, "two notifications", `window.shown.length === 2 && window.shown`)
	tags := map[string]bool{}
	for _, n := range shown {
		tags[n.(map[string]any)["tag"].(string)] = true
	}
	if !tags["askuser-"+q] || !tags["askuser-"+a] {
		t.Fatalf("notifications %v, want one for %s and one for %s", shown, q, a)
	}

	// Clicking the approval's notification focuses its card and closes it.
	eval[bool](tb, `(() => { window.byTag["askuser-`+a+`"].onclick(); return true; })()`)
	waitFor[bool](tb, "the focus on the clicked request", `(() => { const e = document.activeElement; return !!e && !!e.closest('[data-request-id]') && e.closest('[data-request-id]').dataset.requestId === `+js(a)+`; })()`)
	waitFor[bool](tb, "the clicked notification closed", `window.shown.find(n => n.tag === "askuser-`+a+`").closed`)

	// Another device ends the question: its notification closes, the count drops.
	other := newTab(t)
	other.open(env.main, session)
	other.do("answering on another device", chromedp.Click(option(q, 0, 1)), chromedp.Click(sel(q, `[data-testid="submit"]`)))
	waitFor[bool](tb, "the question's notification closed", `window.shown.find(n => n.tag === "askuser-`+q+`").closed`)
	waitFor[bool](tb, "the count down to one", `document.title === "(1) Waiting for you · " + `+js(base))
	other.do("approving on another device", chromedp.Click(asel(a, `[data-testid="approve"]`)))
	waitFor[bool](tb, "the title back", `document.title === `+js(base))

	// Shown again: the hub is told.
	tb.hide(false)
	frames.find(t, true, `"type":"device_visibility"`, `"visible":true`)
}
