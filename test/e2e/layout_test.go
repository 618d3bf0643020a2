package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// pageSize is what decides whether a page scrolls: its document's size and its window's.
type pageSize struct {
	ScrollW float64 `json:"scrollW"`
	ScrollH float64 `json:"scrollH"`
	InnerW  float64 `json:"innerW"`
	InnerH  float64 `json:"innerH"`
}

func (tb *tab) pageSize() pageSize {
	tb.t.Helper()
	return eval[pageSize](tb, `({scrollW: document.documentElement.scrollWidth, scrollH: document.documentElement.scrollHeight,
		innerW: innerWidth, innerH: innerHeight})`)
}

// focusVisibleJS says whether the focused control of a panel is seen whole: inside the
// question section's box and the window, clear of the composer, and clear of its panel's
// sticky header and footer unless it is in one of them. It returns {ok, detail}.
const focusVisibleJS = `(() => {
	const a = document.activeElement;
	const form = a && a.closest('[data-testid="panel"]');
	if (!form) return {ok: false, detail: "focus is not in a panel: " + (a && a.outerHTML.slice(0, 80))};
	const r = (n) => n.getBoundingClientRect();
	const qs = r(document.querySelector("#questions"));
	const comp = r(document.querySelector("#composer"));
	const head = r(form.querySelector(".askuser-head"));
	const foot = r(form.querySelector(".askuser-foot"));
	const box = r(a.closest(".askuser-option, .askuser-other, .askuser-preview-body") || a);
	const inBar = !!a.closest(".askuser-head, .askuser-foot");
	const top = inBar ? qs.top : Math.max(qs.top, head.bottom);
	const bottom = Math.min(inBar ? qs.bottom : Math.min(qs.bottom, foot.top), comp.top, innerHeight);
	const ok = box.height > 0 && box.top >= top - 1 && box.bottom <= bottom + 1;
	return {ok, detail: (a.dataset.testid || a.tagName) + " box " + Math.round(box.top) + ".." + Math.round(box.bottom) +
		", visible " + Math.round(top) + ".." + Math.round(bottom) + " (head ends " + Math.round(head.bottom) +
		", foot starts " + Math.round(foot.top) + ", composer starts " + Math.round(comp.top) + ")"};
})()`

// waitFocusVisible waits until the focused control is seen whole (the panel scrolls it in
// on the next frame), and fails saying where it is when it never is.
func (tb *tab) waitFocusVisible(what string) {
	tb.t.Helper()
	if _, err := run(tb, chromedp.Poll[bool](focusVisibleJS+".ok")); err != nil {
		d := eval[map[string]any](tb, focusVisibleJS)
		tb.t.Fatalf("%s: the focused control is not seen whole: %v", what, d["detail"])
	}
}

// TestSeveralQuestionsAtLaptopSize: at 1280×800 the page never scrolls (the panel scrolls in
// its own box), the title, countdown and progress stay at the top of that box and Submit and
// Decline at its bottom however it is scrolled, a Submit that cannot send says which
// question is unanswered and is still reached by Tab, and Enter (or Submit) goes to the
// first unanswered question.
func TestSeveralQuestionsAtLaptopSize(t *testing.T) {
	tb := newTab(t)
	tb.viewport(1280, 800, false)
	tb.open(env.main, newSession())
	tb.say("/help") // a transcript long enough to scroll
	tb.say("/several")
	id := tb.newestPanel()

	if s := tb.pageSize(); s.ScrollH > s.InnerH || s.ScrollW > s.InnerW {
		t.Fatalf("the page is %v×%v in a %v×%v window: it scrolls", s.ScrollW, s.ScrollH, s.InnerW, s.InnerH)
	}
	// The screen-reader announcer is positioned inside the panel's root, not the page.
	if !eval[bool](tb, `document.querySelector('[data-testid="announcer"]').offsetParent === document.querySelector('[data-testid="askuser-root"]')`) {
		t.Error("the announcer is positioned against something outside the panel")
	}
	if !eval[bool](tb, `(() => { const q = document.querySelector("#questions"); return q.scrollHeight > q.clientHeight; })()`) {
		t.Fatal("the three questions fit without scrolling at 1280×800; this test needs them not to")
	}

	bars := func(where string) {
		t.Helper()
		res := eval[map[string]any](tb, `(() => {
			const q = document.querySelector("#questions");
			q.scrollTop = `+where+` === "top" ? 0 : q.scrollHeight;
			const b = q.getBoundingClientRect();
			const p = document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`]');
			const seen = (sel) => { const r = p.querySelector(sel).getBoundingClientRect();
				return r.height > 0 && r.top >= b.top - 1 && r.bottom <= b.bottom + 1 && r.bottom <= innerHeight; };
			return {title: seen(".askuser-title"), countdown: seen('[data-testid="countdown"]'), progress: seen('[data-testid="progress"]'),
				submit: seen('[data-testid="submit"]'), decline: seen('[data-testid="decline"]'), hint: seen('[data-testid="hint"]'),
				scrolled: q.scrollTop};
		})()`)
		for _, k := range []string{"title", "countdown", "progress", "submit", "decline", "hint"} {
			if res[k] != true {
				t.Errorf("scrolled to the %s (%v px): %s is out of view", where, res["scrolled"], k)
			}
		}
	}
	bars(js("top"))
	bars(js("bottom"))

	hint := func() string {
		return eval[string](tb, `document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="hint"]').textContent`)
	}
	progress := func() string {
		return eval[string](tb, `document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="progress"]').textContent`)
	}
	if h, p := hint(), progress(); h != "Answer Database, Testing and Deploy to submit." || p != "0 of 3 answered" {
		t.Errorf("at first: hint %q, progress %q", h, p)
	}
	if !eval[bool](tb, `(() => { const s = document.querySelector('[data-testid="submit"]');
		return document.getElementById(s.getAttribute("aria-describedby")).dataset.testid === "hint"; })()`) {
		t.Error("Submit is not described by the hint")
	}
	tb.do("answering two of three", chromedp.Click(option(id, 0, 1)), chromedp.Click(option(id, 1, 2)))
	if h, p := hint(), progress(); h != "Answer Deploy to submit." || p != "2 of 3 answered" {
		t.Errorf("with Deploy unanswered: hint %q, progress %q", h, p)
	}
	tb.pageScreenshot("laptop")

	// Enter goes to the unanswered question, which is scrolled into view.
	tb.do("focusing the first question", chromedp.Focus(sel(id, `[data-testid="question"][data-index="0"] [data-testid="option-input"]:checked`)))
	tb.do("scrolling to the top", chromedp.Evaluate[chromedp.Void](`document.querySelector("#questions").scrollTop = 0`))
	tb.key(kb.Enter)
	if f := tb.focused(); f.Question != 2 || f.TestID != "option-input" {
		t.Fatalf("Enter with Deploy unanswered focused %+v, want Deploy's first option", f)
	}
	tb.waitFocusVisible("after Enter")
	if n := eval[int](tb, `window.demo.events.filter(e => e.type === "tool_result").length`); n != 0 {
		t.Fatal("an incomplete set was sent")
	}

	// Submit, though it cannot send yet, is reached by Tab, and pressing it does the same.
	tb.do("focusing Deploy's Other box", chromedp.Focus(other(id, 2)))
	tb.key(kb.Tab)
	if f := tb.focused(); f.TestID != "decline" {
		t.Fatalf("Tab from the last Other box focused %+v, want Decline", f)
	}
	tb.key(kb.Tab)
	if f := tb.focused(); f.TestID != "submit" || eval[string](tb, `document.activeElement.getAttribute("aria-disabled")`) != "true" {
		t.Fatalf("Tab from Decline focused %+v, want the Submit that cannot send yet", f)
	}
	tb.key(kb.Enter)
	if f := tb.focused(); f.Question != 2 {
		t.Fatalf("Submit with Deploy unanswered focused %+v, want Deploy", f)
	}
	tb.waitFocusVisible("after Submit")

	tb.do("answering Deploy and submitting", chromedp.Click(option(id, 2, 0)), chromedp.Click(sel(id, `[data-testid="submit"]`)))
	want := content(t,
		askuser.Answer{Question: "Which database should store the orders?", SelectedLabels: []string{"SQLite"}},
		askuser.Answer{Question: "Which kinds of tests should I write?", SelectedLabels: []string{"Visual regression"}},
		askuser.Answer{Question: "Where will it be deployed?", SelectedLabels: []string{"Kubernetes"}},
	)
	if got := tb.toolResult(id); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
}

// TestTabbingKeepsTheFocusInView walks the keyboard through a set of three questions at
// 1280×800 and checks that every control it lands on is seen whole: not under the sticky
// header or footer, not under the composer, not outside the window.
func TestTabbingKeepsTheFocusInView(t *testing.T) {
	tb := newTab(t)
	tb.viewport(1280, 800, false)
	tb.open(env.main, newSession())
	tb.say("/several")
	id := tb.newestPanel()
	tb.do("focusing the first option", chromedp.Focus(option(id, 0, 0)+` [data-testid="option-input"]`))
	seen := []string{}
	for i := 0; i < 20; i++ {
		f := tb.focused()
		seen = append(seen, fmt.Sprintf("%s:%d:%d", f.TestID, f.Question, f.Option))
		tb.waitFocusVisible("at " + strings.Join(seen, " → "))
		if f.TestID == "submit" {
			break
		}
		tb.key(kb.Tab)
	}
	want := "option-input:0:0 other-input:0:-1 option-input:1:0 option-input:1:1 option-input:1:2 other-input:1:-1 option-input:2:0 other-input:2:-1 decline:-1:-1 submit:-1:-1"
	if got := strings.Join(seen, " "); got != want {
		t.Errorf("Tab went %s\nwant         %s", got, want)
	}
	// And back up with Shift+Tab to the first option.
	for i := 0; i < 9; i++ {
		tb.do("shift-tab", chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
		tb.waitFocusVisible(fmt.Sprintf("after %d Shift+Tab", i+1))
	}
	if f := tb.focused(); f.Question != 0 || f.TestID != "option-input" {
		t.Errorf("Shift+Tab back ended at %+v", f)
	}
}

// TestKeyboardTour answers the whole tour from the keyboard: digits choose, Enter confirms
// (or goes to the unanswered question), and each new question takes the focus when the
// last one is answered, as the approval at the end does. Esc declines.
func TestKeyboardTour(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("start")
	first := tb.newestPanel()
	// The composer had the focus when the first question came: it is not taken from it.
	if f := tb.focused(); f.Panel != "" {
		t.Fatalf("the first question took the focus from the page: %+v", f)
	}
	tb.do("tabbing into the question", chromedp.Focus(option(first, 0, 0)+` [data-testid="option-input"]`))
	tb.key("2", kb.Enter)

	next := func(after string) string {
		t.Helper()
		id := waitFor[string](tb, "the next question", `(() => {
			const ps = [...document.querySelectorAll('[data-testid="panel"]')].filter(p => p.dataset.requestId !== `+js(after)+`);
			return ps.length ? ps[ps.length - 1].dataset.requestId : false;
		})()`)
		f := waitFor[focusInfo](tb, "the focus to move in", `(() => {
			const a = document.activeElement, p = a.closest('[data-testid="panel"]');
			return p && p.dataset.requestId === `+js(id)+` && {testid: a.dataset.testid, question: +a.closest('[data-testid="question"]').dataset.index, option: -1, panel: p.dataset.requestId};
		})()`)
		if f.TestID != "option-input" || f.Question != 0 {
			t.Fatalf("the new question's focus is %+v, want its first option", f)
		}
		return id
	}
	multi := next(first)
	tb.key("1", "4", kb.Enter)
	preview := next(multi)
	tb.key("3")
	if i := eval[string](tb, `document.querySelector('[data-testid="preview"]').dataset.optionIndex`); i != "2" {
		t.Errorf("the preview shows option %s after pressing 3", i)
	}
	tb.key(kb.Enter)
	several := next(preview)
	tb.key("2", kb.Enter)
	if f := tb.focused(); f.Question != 1 {
		t.Fatalf("Enter with two questions unanswered focused %+v, want the second question", f)
	}
	tb.key("1", "3", kb.Enter)
	if f := tb.focused(); f.Question != 2 {
		t.Fatalf("Enter focused %+v, want the third question", f)
	}
	tb.key("3", kb.Enter)

	for _, c := range []struct{ id, want string }{
		{first, content(t, askuser.Answer{Question: "Which framework should we use for the new module?", SelectedLabels: []string{"React"}})},
		{multi, content(t, askuser.Answer{Question: "Which features should the first release include?", SelectedLabels: []string{"Dark mode", "Offline mode"}})},
		{preview, content(t, askuser.Answer{Question: "Which layout should the dashboard use?", SelectedLabels: []string{"Split view"}})},
		{several, content(t,
			askuser.Answer{Question: "Which database should store the orders?", SelectedLabels: []string{"SQLite"}},
			askuser.Answer{Question: "Which kinds of tests should I write?", SelectedLabels: []string{"Unit tests", "Visual regression"}},
			askuser.Answer{Question: "Where will it be deployed?", SelectedLabels: []string{"Single VM"}})},
	} {
		if got := tb.toolResult(c.id); got != c.want {
			t.Errorf("tool result = %s\nwant          %s", got, c.want)
		}
	}
	// Then the approval of the branch to delete, which takes the focus (nothing has it):
	// Tab goes through its arguments to Approve, and Enter approves.
	approval := tb.newestApproval("")
	waitFor[bool](tb, "the approval to take the focus", `document.activeElement === `+cardJS(approval))
	tb.key(kb.Tab, kb.Tab)
	if f := tb.focused(); f.TestID != "approve" {
		t.Fatalf("two Tabs into the approval focused %+v, want Approve", f)
	}
	tb.key(kb.Enter)
	if got := tb.toolResult(approval); got != `{"deleted":"feature/old-login"}` {
		t.Errorf("the approval's tool result = %s", got)
	}
	waitFor[bool](tb, "the plan", `[...document.querySelectorAll("#transcript .agent .text")].some(e => e.textContent.startsWith("Thanks! Here is the plan"))`)

	// Esc declines.
	tb.say("/single")
	id := tb.newestPanel()
	tb.do("focusing the question", chromedp.Focus(option(id, 0, 0)+` [data-testid="option-input"]`))
	tb.key(kb.Escape)
	if got := tb.toolResult(id); got != `{"error": "User declined to answer"}` {
		t.Fatalf("after Esc the tool result is %s", got)
	}
}
