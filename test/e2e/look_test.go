package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/chromedp/chromedp"
)

// TestPhoneBottomSheet: at 390×844 on a touch screen the page fits the screen in both
// directions, the questions are a sheet docked above the message box across the whole
// width, every control is at least 44 px tall, and text fields use 16 px text (below that
// iOS zooms in on focus).
func TestPhoneBottomSheet(t *testing.T) {
	tb := newTab(t)
	tb.viewport(390, 844, true)
	tb.open(env.main, newSession())
	tb.say("/several")
	id := tb.newestPanel()
	if s := tb.pageSize(); s.ScrollW > s.InnerW || s.ScrollH > s.InnerH || s.InnerW != 390 {
		t.Fatalf("the page is %v×%v on a %v×%v screen", s.ScrollW, s.ScrollH, s.InnerW, s.InnerH)
	}
	sheet := eval[map[string]float64](tb, `(() => {
		const q = document.querySelector("#questions").getBoundingClientRect();
		const c = document.querySelector("#composer").getBoundingClientRect();
		const cs = getComputedStyle(document.querySelector("#questions"));
		return {left: q.left, right: q.right, bottom: q.bottom, composerTop: c.top, radius: parseFloat(cs.borderTopLeftRadius),
			height: q.height, screen: innerHeight};
	})()`)
	if sheet["left"] > 0.5 || sheet["right"] < 389.5 || sheet["bottom"] > sheet["composerTop"]+0.5 || sheet["composerTop"]-sheet["bottom"] > 12 ||
		sheet["radius"] < 12 || sheet["height"] < sheet["screen"]/3 {
		t.Errorf("the questions are not a bottom sheet: %v", sheet)
	}
	small := eval[[]string](tb, `(() => {
		const out = [];
		const seen = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden"; };
		for (const e of document.querySelectorAll('button, a[href], textarea, input[type="text"], [data-testid="option"]')) {
			if (!seen(e)) continue;
			const r = e.getBoundingClientRect();
			if (r.height < 44 - 0.5) out.push((e.dataset.testid || e.id || e.tagName) + " is " + r.height.toFixed(1) + " px tall");
			if ((e.tagName === "BUTTON" || e.tagName === "A") && r.width < 44 - 0.5) out.push((e.dataset.testid || e.id || e.tagName) + " is " + r.width.toFixed(1) + " px wide");
		}
		for (const e of document.querySelectorAll('textarea, input[type="text"]')) {
			if (seen(e) && parseFloat(getComputedStyle(e).fontSize) < 16) out.push((e.dataset.testid || e.id) + " has " + getComputedStyle(e).fontSize + " text");
		}
		return out;
	})()`)
	if len(small) > 0 {
		t.Errorf("too small for a finger or for iOS: %s", strings.Join(small, "; "))
	}
	// Submit and Decline are in the sheet's view, whatever is scrolled.
	for _, where := range []string{"0", "q.scrollHeight"} {
		if !eval[bool](tb, `(() => {
			const q = document.querySelector("#questions"); q.scrollTop = `+where+`;
			const b = q.getBoundingClientRect(), s = document.querySelector('[data-testid="submit"]').getBoundingClientRect();
			return s.top >= b.top && s.bottom <= b.bottom + 1;
		})()`) {
			t.Errorf("scrolled to %s, Submit is out of the sheet's view", where)
		}
	}
	tb.do("scrolling the sheet to the top", chromedp.Evaluate[chromedp.Void](`document.querySelector("#questions").scrollTop = 0`))
	tb.pageScreenshot("phone")
	// A tap focuses its option, and the panel brings the focused option into view at the
	// next frame; a tap made before that frame would land where the sheet is about to
	// move from. So each tap waits two frames first, as no finger is faster than that.
	tap := func(c chromedp.CSS) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.Evaluate[chromedp.Void](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))`, chromedp.EvalAwaitPromise),
			chromedp.Click(c),
		)
	}
	tb.do("answering", tap(option(id, 0, 0)), tap(option(id, 1, 0)), tap(option(id, 2, 1)),
		chromedp.Click(sel(id, `[data-testid="submit"]`)))
	tb.panelGone(id)
}

// contrastJS lists every piece of text on the page (and every placeholder) whose contrast
// with what is behind it is below 4.5:1, computed from the colours the browser computed.
const contrastJS = `(() => {
	const parse = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
		const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
	const over = (top, bottom) => { const a = top[3]; return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat(1); };
	const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
	const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
	const background = (e) => { const layers = [];
		for (let n = e; n; n = n.parentElement) { const c = parse(getComputedStyle(n).backgroundColor); if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
		let bg = [255, 255, 255, 1]; for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg); return bg; };
	const opacity = (e) => { let o = 1; for (let n = e; n; n = n.parentElement) o *= parseFloat(getComputedStyle(n).opacity); return o; };
	const name = (e) => (e.dataset.testid || e.id || (e.className && String(e.className).split(" ")[0]) || e.tagName.toLowerCase());
	const low = [];
	let checked = 0;
	for (const e of document.querySelectorAll("body *")) {
		if (e.closest(".askuser-sr-only, .sr-only, script, style")) continue;
		const text = [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join("").trim();
		const r = e.getBoundingClientRect();
		if (!text || r.width === 0 || r.height === 0 || getComputedStyle(e).visibility === "hidden") continue;
		const fg = parse(getComputedStyle(e).color); const bg = background(e);
		fg[3] *= opacity(e);
		const c = ratio(over(fg, bg), bg);
		checked++;
		if (c < 4.5) low.push(name(e) + " " + JSON.stringify(text.slice(0, 30)) + ": " + c.toFixed(2));
	}
	for (const e of document.querySelectorAll("input[placeholder], textarea[placeholder]")) {
		if (e.value || e.getBoundingClientRect().width === 0) continue;
		const fg = parse(getComputedStyle(e, "::placeholder").color); const bg = background(e);
		const c = ratio(over(fg, bg), bg);
		checked++;
		if (c < 4.5) low.push(name(e) + " placeholder: " + c.toFixed(2));
	}
	return {low, checked};
})()`

type contrastReport struct {
	Low     []string `json:"low"`
	Checked int      `json:"checked"`
}

// checkContrast fails the test when a text of the page has a contrast below 4.5:1, or
// when too few texts were found to say anything.
func (tb *tab) checkContrast(scheme, when string) {
	tb.t.Helper()
	r := eval[contrastReport](tb, contrastJS)
	if r.Checked < 20 {
		tb.t.Fatalf("%s: only %d texts checked", when, r.Checked)
	}
	if len(r.Low) > 0 {
		tb.t.Errorf("%s, %s mode: contrast below 4.5:1:\n  %s", when, scheme, strings.Join(r.Low, "\n  "))
	}
}

// TestContrast: in light and in dark mode, every text of the demo page and the panel, in
// every state a question goes through (unanswered, answered and ready to send, ended), has
// a contrast of at least 4.5:1 with what is behind it.
func TestContrast(t *testing.T) {
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			tb := newTab(t)
			tb.colorScheme(scheme)
			tb.open(env.main, newSession())
			if got := eval[string](tb, `getComputedStyle(document.body).backgroundColor`); (scheme == "dark") != (got == "rgb(13, 17, 23)") {
				t.Fatalf("%s mode: the page's background is %s", scheme, got)
			}
			check := func(when string) { tb.checkContrast(scheme, when) }
			tb.say("/preview")
			id := tb.newestPanel()
			check("unanswered")
			tb.do("choosing", chromedp.Click(option(id, 0, 1)))
			if !tb.state(id).Submit {
				t.Fatal("Submit cannot send")
			}
			check("ready to send")
			if scheme == "dark" {
				tb.screenshot("dark")
			}
			tb.do("answering", chromedp.Click(sel(id, `[data-testid="submit"]`)))
			tb.toolResult(id)
			tb.say("/single")
			id = tb.newestPanel()
			tb.do("cancelling", chromedp.Click(chromedp.CSS("#cancel")))
			tb.waitNote(id, "cancelled")
			check("ended, with the tool cards")
		})
	}
}

// TestModelTextDirectionAndBidiControls: model text takes its direction from itself
// (dir="auto", so Hebrew reads right to left in an English page), and bidirectional
// control characters that could disguise a label are not shown; the answer still names the
// model's exact label.
func TestModelTextDirectionAndBidiControls(t *testing.T) {
	disguised := "Invoice \u202Efdp.exe"       // shows as "Invoice exe.pdf"
	isolated := "Plain \u2066text\u2069 label" // isolates, harmless but dropped
	args := askuser.Request{Questions: []askuser.Question{{
		Header:   "קובץ",
		Question: "איזה קובץ לפתוח?",
		Options: []askuser.Option{
			{Label: disguised, Description: "فتح الملف المرفق", Preview: "# כותרת\n\nטקסט \u202Eמוסתר"},
			{Label: isolated, Description: "English description"},
		},
	}}}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/ask " + string(raw))
	id := tb.newestPanel()
	got := eval[map[string]any](tb, `(() => {
		const p = document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`]');
		const all = (sel) => [...p.querySelectorAll(sel)];
		const model = all('[data-testid="header"], [data-testid="question-text"], [data-testid="option-label"], [data-testid="option-description"], [data-testid="preview-body"], [data-testid="preview-caption"], [data-testid="other-input"]');
		return {
			notAuto: model.filter(e => e.dir !== "auto").map(e => e.dataset.testid),
			rtl: all('[data-testid="question-text"], [data-testid="header"], [data-testid="preview-body"]').map(e => e.matches(":dir(rtl)")),
			ltr: all('[data-testid="option-label"]').map(e => e.matches(":dir(ltr)")),
			labels: all('[data-testid="option-label"]').map(e => e.textContent),
			controls: /[\u202A-\u202E\u2066-\u2069]/.test(p.textContent),
			dataLabel: p.querySelector('[data-testid="option"]').dataset.label,
		};
	})()`)
	if mustJSON(got["notAuto"]) != `[]` {
		t.Errorf("model text without dir=auto: %v", got["notAuto"])
	}
	if mustJSON(got["rtl"]) != `[true,true,true]` || mustJSON(got["ltr"]) != `[true,true]` {
		t.Errorf("directions: rtl %v, ltr %v", got["rtl"], got["ltr"])
	}
	if mustJSON(got["labels"]) != mustJSON([]string{"Invoice fdp.exe", "Plain text label"}) || got["controls"] != false {
		t.Errorf("labels shown %v, bidi controls in the panel: %v", got["labels"], got["controls"])
	}
	if got["dataLabel"] != disguised {
		t.Errorf("the option no longer knows its exact label: %q", got["dataLabel"])
	}
	tb.do("answering", chromedp.Click(option(id, 0, 0)), chromedp.Click(sel(id, `[data-testid="submit"]`)))
	if got, want := tb.toolResult(id), content(t, askuser.Answer{Question: args.Questions[0].Question, SelectedLabels: []string{disguised}}); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
	// The transcript's summary of the answer is safe the same way.
	summary := waitFor[map[string]any](tb, "the tool card's summary", `(() => {
		const s = document.querySelector('#transcript .tool[data-outcome="answered"] [data-testid="tool-summary"]');
		return s && {text: s.textContent, autos: [...s.querySelectorAll("[dir=auto]")].length};
	})()`)
	if text := summary["text"].(string); strings.ContainsAny(text, "\u202E\u2066\u2069") || !strings.Contains(text, "Invoice fdp.exe") || summary["autos"].(float64) < 2 {
		t.Errorf("tool card summary %v", summary)
	}
}

// TestToolCardShowsTheAnswers: the transcript's tool card says what was chosen, not only
// how many questions were answered.
func TestToolCardShowsTheAnswers(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/several")
	id := tb.newestPanel()
	tb.do("answering", chromedp.Click(option(id, 0, 0)), chromedp.Click(option(id, 1, 0)), chromedp.Click(option(id, 1, 1)),
		chromedp.SendKeys(other(id, 1), "Fuzz tests"), chromedp.Click(option(id, 2, 2)), chromedp.Click(sel(id, `[data-testid="submit"]`)))
	tb.toolResult(id)
	got := waitFor[string](tb, "the summary", `(() => { const s = document.querySelector('#transcript .tool[data-outcome="answered"] [data-testid="tool-summary"]'); return s && s.textContent; })()`)
	want := "Answered 3 questions: Database: PostgreSQL (Recommended); Testing: Unit tests, End-to-end tests, Fuzz tests; Deploy: Single VM"
	if got != want {
		t.Errorf("tool card says %q\nwant            %q", got, want)
	}
	// The Other text is quoted on screen (the quotes come from CSS, around a <q>).
	if q := eval[string](tb, `getComputedStyle(document.querySelector('#transcript [data-testid="tool-summary"] q'), "::before").content`); q == "none" || q == "" {
		t.Errorf("the Other text is not quoted: %q", q)
	}
}

// TestChinese: the page chooses Chinese (?lang=zh), and the demo and the panel speak it;
// the tool card's summary is the library's "回答了 N 个问题" with what was chosen.
func TestChinese(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession()+"&lang=zh")
	tb.say("/single")
	id := tb.newestPanel()
	// The count comes to the title right after the question's first paint.
	waitFor[bool](tb, "the title's count", `document.title === "(1) 等你回复 · askuser 演示"`)
	got := eval[map[string]string](tb, `(() => {
		const p = document.querySelector('[data-testid="panel"]');
		const t = (s) => p.querySelector(s).textContent;
		return {html: document.documentElement.lang, root: document.querySelector('[data-testid="askuser-root"]').lang,
			title: t(".askuser-title"), submit: t('[data-testid="submit"]'), decline: t('[data-testid="decline"]'),
			other: t(".askuser-other-label"), placeholder: p.querySelector('[data-testid="other-input"]').placeholder,
			hint: t('[data-testid="hint"]'), countdown: t('[data-testid="countdown"]'), recommended: t('[data-testid="recommended"]'),
			send: document.querySelector("#send").textContent, cancel: document.querySelector("#cancel").textContent,
			composer: document.querySelector("#message").placeholder, state: document.querySelector("#agent-state").textContent,
			conn: document.querySelector("#conn").textContent, page: document.title};
	})()`)
	want := map[string]string{
		"html": "zh-CN", "root": "zh-CN", "title": "Agent 想知道：", "submit": "提交", "decline": "拒绝回答", "other": "其他",
		"placeholder": "输入你自己的回答…", "hint": "回答 Framework 后即可提交。", "recommended": "推荐",
		"send": "发送", "cancel": "取消运行", "state": "Agent 在等你回答", "conn": "已连接", "page": "(1) 等你回复 · askuser 演示",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if !regexp.MustCompile(`^剩余 [23]:\d\d$`).MatchString(got["countdown"]) || !strings.HasPrefix(got["composer"], "发送任意消息") {
		t.Errorf("countdown %q, composer %q", got["countdown"], got["composer"])
	}
	tb.screenshot("zh")
	tb.do("answering", chromedp.Click(option(id, 0, 1)), chromedp.Click(sel(id, `[data-testid="submit"]`)))
	tb.toolResult(id)
	summary := waitFor[string](tb, "the summary", `(() => { const s = document.querySelector('#transcript .tool[data-outcome="answered"] [data-testid="tool-summary"]'); return s && s.textContent; })()`)
	if summary != "回答了 1 个问题：Framework：React" {
		t.Errorf("tool card says %q", summary)
	}
	tb.say("/single")
	id = tb.newestPanel()
	tb.do("cancelling", chromedp.Click(chromedp.CSS("#cancel")))
	if n := tb.waitNote(id, "问题已取消"); n.Outcome != "cancelled" {
		t.Errorf("note = %+v", n)
	}
	waitFor[bool](tb, "the cancelled card", `[...document.querySelectorAll('#transcript [data-testid="tool-summary"]')].some(s => s.textContent === "未回答:会话已取消")`)
}

// TestBrowserLanguage: with no ?lang, the browser's language chooses.
func TestBrowserLanguage(t *testing.T) {
	tb := newTab(t)
	tb.browserLanguage("zh-CN,zh;q=0.9")
	tb.open(env.main, newSession())
	tb.say("/single")
	tb.newestPanel()
	if got := eval[string](tb, `document.documentElement.lang + " " + document.querySelector('[data-testid="submit"]').textContent + " " + document.querySelector("#send").textContent`); got != "zh-CN 提交 发送" {
		t.Errorf("with a Chinese browser: %q", got)
	}
	en := newTab(t)
	en.browserLanguage("en-GB,en;q=0.9")
	en.open(env.main, newSession())
	en.say("/single")
	en.newestPanel()
	if got := eval[string](en, `document.documentElement.lang + " " + document.querySelector('[data-testid="submit"]').textContent`); got != "en Submit" {
		t.Errorf("with an English browser: %q", got)
	}
}
