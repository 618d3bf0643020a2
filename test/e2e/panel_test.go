package e2e

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// content is the exact tool result of answers, as the library writes it.
func content(t *testing.T, answers ...askuser.Answer) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Answers []askuser.Answer `json:"answers"`
	}{answers}); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func ptr(s string) *string { return &s }

func TestSingleSelect(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/single")
	id := tb.newestPanel()

	// The tool call shown in the transcript is the very question of the panel, and a
	// numeric session stays a number on the wire.
	got := eval[map[string]any](tb, `(() => {
		const call = window.demo.events.find(e => e.type === "tool_call");
		const ask = window.demo.events.find(e => e.type === "ask_user_questions");
		return {call: call.data.requestId, ask: ask.data.requestId, session: typeof ask.sessionId};
	})()`)
	if got["call"] != id || got["ask"] != id || got["session"] != "number" {
		t.Fatalf("call/ask/session = %v, panel %s", got, id)
	}

	ui := eval[map[string]any](tb, `(() => {
		const p = document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`]');
		const q = p.querySelector('[data-testid="question"]');
		const group = q.querySelector('[role="radiogroup"]');
		return {
			header: q.querySelector('[data-testid="header"]').textContent,
			question: q.querySelector('[data-testid="question-text"]').textContent,
			labels: [...q.querySelectorAll('[data-testid="option"]')].map(o => o.dataset.label),
			descriptions: [...q.querySelectorAll('[data-testid="option-description"]')].map(d => d.textContent),
			recommended: [...q.querySelectorAll('[data-testid="option"]')].map(o => !!o.querySelector('[data-testid="recommended"]')),
			types: [...q.querySelectorAll('[data-testid="option-input"]')].map(i => i.type),
			otherVisible: q.querySelector('[data-testid="other-input"]').offsetParent !== null,
			otherLabel: q.querySelector('[data-testid="other-input"]').labels[0].textContent,
			groupName: group && document.getElementById(group.getAttribute("aria-labelledby")).textContent,
			previews: p.querySelectorAll('[data-testid="preview"]').length,
			submit: p.querySelector('[data-testid="submit"]').getAttribute("aria-disabled") === "false",
			countdown: p.querySelector('[data-testid="countdown"]').textContent,
		};
	})()`)
	want := map[string]any{
		"header":       "Framework",
		"question":     "Which framework should we use for the new module?",
		"labels":       []any{"Vue 3 (Recommended)", "React", "Svelte"},
		"recommended":  []any{true, false, false},
		"types":        []any{"radio", "radio", "radio"},
		"otherVisible": true,
		"otherLabel":   "Other",
		"groupName":    "Which framework should we use for the new module?",
		"previews":     float64(0),
		"submit":       false,
	}
	for k, v := range want {
		if b1, b2 := mustJSON(ui[k]), mustJSON(v); b1 != b2 {
			t.Errorf("%s = %s, want %s", k, b1, b2)
		}
	}
	if d := ui["descriptions"].([]any); d[0] != "Composition API + TypeScript, matches the existing stack" {
		t.Errorf("descriptions = %v", d)
	}
	if c := ui["countdown"].(string); !regexp.MustCompile(`^[23]:\d\d left$`).MatchString(c) {
		t.Errorf("countdown = %q, want about 3 minutes left", c)
	}
	tb.screenshot("single")

	tb.do("choosing React", chromedp.Click(option(id, 0, 1)))
	if st := tb.state(id); !st.Submit || mustJSON(st.Checked) != `[[false,true,false]]` {
		t.Fatalf("after choosing React: %+v", st)
	}
	// Radio behaviour: choosing another option unchooses the first.
	tb.do("choosing Svelte, then React", chromedp.Click(option(id, 0, 2)), chromedp.Click(option(id, 0, 1)))
	if st := tb.state(id); mustJSON(st.Checked) != `[[false,true,false]]` {
		t.Fatalf("single-select allowed two choices: %+v", st)
	}
	// Submit acts on its click, without the form's submission, before which the browser
	// reads the whole form (a forced layout).
	tb.do("counting the form's submissions", chromedp.Evaluate[chromedp.Void](`window.submitted = 0, document.addEventListener("submit", () => window.submitted++, true)`))
	tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	tb.panelGone(id)
	if got, want := tb.toolResult(id), `{"answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["React"],"customInput":null}]}`; got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
	if n := eval[int](tb, `window.submitted`); n != 0 {
		t.Errorf("a click on Submit submitted the form %d times", n)
	}
	waitFor[bool](tb, "the agent's note", `[...document.querySelectorAll("#transcript .agent .text")].some(e => e.textContent === "Noted: Framework → React.")`)
}

func TestMultiSelect(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/multi")
	id := tb.newestPanel()
	if n := eval[int](tb, `document.querySelectorAll('[data-testid="preview"]').length`); n != 0 {
		t.Fatalf("a multi-select question shows %d previews", n)
	}
	if role := eval[string](tb, `document.querySelector('[data-testid="options"], .askuser-options').getAttribute("role")`); role != "group" {
		t.Fatalf("options role = %q, want group", role)
	}
	tb.do("choosing three options and unchoosing one",
		chromedp.Click(option(id, 0, 0)), chromedp.Click(option(id, 0, 3)), chromedp.Click(option(id, 0, 1)), chromedp.Click(option(id, 0, 1)))
	if st := tb.state(id); mustJSON(st.Checked) != `[[true,false,false,true]]` || !st.Submit {
		t.Fatalf("checkbox behaviour: %+v", st)
	}
	// Other does not clear the options of a multi-select question.
	tb.do("typing in Other", chromedp.SendKeys(other(id, 0), "Audit log"))
	if st := tb.state(id); mustJSON(st.Checked) != `[[true,false,false,true]]` || st.Other[0] != "Audit log" {
		t.Fatalf("after typing in Other: %+v", st)
	}
	tb.screenshot("multi")
	tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	want := `{"answers":[{"question":"Which features should the first release include?","selectedLabels":["Dark mode","Offline mode"],"customInput":"Audit log"}]}`
	if got := tb.toolResult(id); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
	tb.panelGone(id)
}

func TestOtherRulesAndSubmitEnabling(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/single")
	id := tb.newestPanel()

	check := func(what, checked, other string, submit bool) {
		t.Helper()
		st := tb.state(id)
		if mustJSON(st.Checked) != checked || st.Other[0] != other || st.Submit != submit {
			t.Fatalf("%s: checked %s, other %q, submit %v; want %s, %q, %v", what, mustJSON(st.Checked), st.Other[0], st.Submit, checked, other, submit)
		}
	}
	check("at first", `[[false,false,false]]`, "", false)
	tb.do("choosing Svelte", chromedp.Click(option(id, 0, 2)))
	check("after choosing", `[[false,false,true]]`, "", true)
	tb.do("typing in Other", chromedp.SendKeys(other(id, 0), "Qwik"))
	check("typing in Other clears the chosen option", `[[false,false,false]]`, "Qwik", true)
	tb.do("choosing React", chromedp.Click(option(id, 0, 1)))
	check("choosing an option clears Other", `[[false,true,false]]`, "", true)
	tb.do("typing spaces in Other", chromedp.SendKeys(other(id, 0), "   "))
	check("blank Other text is no answer", `[[false,false,false]]`, "   ", false)
	tb.do("finishing the Other text", chromedp.SendKeys(other(id, 0), "Solid  "))
	check("Other text", `[[false,false,false]]`, "   Solid  ", true)
	tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	want := content(t, askuser.Answer{Question: "Which framework should we use for the new module?", SelectedLabels: []string{}, CustomInput: ptr("Solid")})
	if got := tb.toolResult(id); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}

	// Several questions: one Submit, enabled only when every question has an answer.
	tb.say("/several")
	id = tb.newestPanel()
	if n := eval[int](tb, `document.querySelectorAll('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="question"]').length`); n != 3 {
		t.Fatalf("the set shows %d questions, want 3", n)
	}
	if n := eval[int](tb, `document.querySelectorAll('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="submit"]').length`); n != 1 {
		t.Fatalf("the set has %d Submit buttons, want 1", n)
	}
	tb.do("answering the first question", chromedp.Click(option(id, 0, 0)))
	if tb.state(id).Submit {
		t.Fatal("Submit enabled with two questions unanswered")
	}
	tb.do("answering the second with two options and Other", chromedp.Click(option(id, 1, 0)), chromedp.Click(option(id, 1, 1)), chromedp.SendKeys(other(id, 1), "Fuzz tests"))
	if tb.state(id).Submit {
		t.Fatal("Submit enabled with one question unanswered")
	}
	tb.do("answering the third", chromedp.Click(option(id, 2, 2)))
	if !tb.state(id).Submit {
		t.Fatal("Submit disabled with every question answered")
	}
	tb.screenshot("several")
	tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	want = content(t,
		askuser.Answer{Question: "Which database should store the orders?", SelectedLabels: []string{"PostgreSQL (Recommended)"}},
		askuser.Answer{Question: "Which kinds of tests should I write?", SelectedLabels: []string{"Unit tests", "End-to-end tests"}, CustomInput: ptr("Fuzz tests")},
		askuser.Answer{Question: "Where will it be deployed?", SelectedLabels: []string{"Single VM"}},
	)
	if got := tb.toolResult(id); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
}

func TestPreviewFollowsTheSelection(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/preview")
	id := tb.newestPanel()

	type preview struct {
		Index   string `json:"index"`
		Caption string `json:"caption"`
		Text    string `json:"text"`
		Tags    string `json:"tags"`
		Side    bool   `json:"side"`
	}
	read := func() preview {
		return eval[preview](tb, `(() => {
			const p = document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`]');
			const pv = p.querySelector('[data-testid="preview"]');
			const body = pv.querySelector('[data-testid="preview-body"]');
			const opts = p.querySelector(".askuser-options").getBoundingClientRect();
			const box = pv.getBoundingClientRect();
			return {
				index: pv.dataset.optionIndex,
				caption: pv.querySelector('[data-testid="preview-caption"]').textContent,
				text: body.textContent,
				tags: [...body.querySelectorAll("*")].map(e => e.tagName.toLowerCase()).join(","),
				side: box.left >= opts.right && box.top < opts.bottom,
				mono: getComputedStyle(body).fontFamily,
			};
		})()`)
	}
	p := read()
	if !p.Side {
		t.Error("the preview is not beside the options")
	}
	if p.Index != "0" || !strings.Contains(p.Caption, "Sidebar") || !strings.Contains(p.Text, "Sidebar layout") {
		t.Fatalf("first preview = %+v", p)
	}
	// The markdown: a heading, a code fence, a list with bold, italic and inline code.
	for _, tag := range []string{"pre", "code", "ul", "li", "strong", "em"} {
		if !strings.Contains(","+p.Tags+",", ","+tag+",") {
			t.Errorf("the rendered preview has no <%s>: %s", tag, p.Tags)
		}
	}
	if !strings.Contains(p.Text, "| Home   |  Dashboard") {
		t.Errorf("the code fence lost its layout: %q", p.Text)
	}
	if mono := eval[string](tb, `getComputedStyle(document.querySelector('[data-testid="preview-body"]')).fontFamily`); !strings.Contains(mono, "monospace") {
		t.Errorf("preview font = %q, want monospace", mono)
	}

	tb.do("choosing Top bar", chromedp.Click(option(id, 0, 1)))
	if p := read(); p.Index != "1" || !strings.Contains(p.Caption, "Top bar") || !strings.Contains(p.Text, "Top bar layout") || strings.Contains(p.Text, "Sidebar layout") {
		t.Fatalf("after choosing Top bar: %+v", p)
	}
	tb.pageScreenshot("demo")
	tb.screenshot("preview")
	tb.do("choosing Split view", chromedp.Click(option(id, 0, 2)))
	if p := read(); p.Index != "2" || !strings.Contains(p.Text, "Split view") || !strings.Contains(p.Tags, "ol") {
		t.Fatalf("after choosing Split view: %+v", p)
	}
	// Keys move the choice, and the preview follows.
	tb.do("pressing the up arrow", chromedp.KeyEvent(kb.ArrowUp))
	if p := read(); p.Index != "1" || !strings.Contains(p.Text, "Top bar layout") {
		t.Fatalf("after the up arrow: %+v", p)
	}
	if st := tb.state(id); mustJSON(st.Checked) != `[[false,true,false]]` {
		t.Fatalf("after the up arrow: %+v", st)
	}
	tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	want := `{"answers":[{"question":"Which layout should the dashboard use?","selectedLabels":["Top bar"],"customInput":null}]}`
	if got := tb.toolResult(id); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
}

// Hostile model content: every string a model writes tries to run script or load
// something. The page is served without a Content-Security-Policy, so that nothing but the
// panel itself stands in the way.
func TestHostileContentNeverRuns(t *testing.T) {
	hostileLabel := `<img src=x onerror="window.__pwned='label'">`
	hostileQuestion := `<svg onload="window.__pwned='question'"></svg>Which one? <script>window.__pwned='q'</script>`
	args := askuser.Request{Questions: []askuser.Question{
		{
			Header:   "<img/src=x>",
			Question: hostileQuestion,
			Options: []askuser.Option{
				{
					Label:       hostileLabel,
					Description: `<script>window.__pwned='description'</script><a href="javascript:window.__pwned='a'">click</a>`,
					Preview: "# <img src=x onerror=\"window.__pwned='h1'\">\n\n" +
						"[click me](javascript:window.__pwned='link') ![x](x)\n\n" +
						"<script>window.__pwned='preview'</script>\n\n" +
						"**<iframe src=\"javascript:parent.__pwned='iframe'\"></iframe>**\n\n" +
						"- <style>body{display:none}</style>\n- <link rel=stylesheet href=x>\n\n" +
						"```\n<object data=x></object><embed src=x>\n```\n\n" +
						"`<meta http-equiv=refresh content=\"0;url=javascript:window.__pwned='meta'\">`",
				},
				{
					Label:       "javascript:window.__pwned='label2'",
					Description: `<iframe srcdoc="<script>parent.__pwned='srcdoc'</script>"></iframe>`,
					Preview:     `<video src=x onerror="window.__pwned='video'"></video>`,
				},
			},
		},
		{
			Header:      "<b>bold</b>",
			Question:    `<details open ontoggle="window.__pwned='details'">Also?</details>`,
			MultiSelect: true,
			Options: []askuser.Option{
				{Label: `<input autofocus onfocus="window.__pwned='focus'">`, Description: "&lt;entity&gt; <!-- comment -->"},
				{Label: "<base href=//example.invalid/>", Description: `<form action="javascript:window.__pwned='form'"><button>go</button></form>`},
			},
		},
	}}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}

	tb := newTab(t)
	tb.open(env.noCSP, newSession())
	tb.say("/ask " + string(raw))
	id := tb.newestPanel()
	tb.do("letting any injected element load", chromedp.Sleep(500*time.Millisecond))

	// Every element the model's strings name. The transcript's own tool cards are
	// <details> elements, so that one is looked for in the panel only.
	const dangerous = "img,script,svg,iframe,a,style,link,object,embed,meta,video,input:not([data-testid]),base,form:not(.askuser-panel),button:not(.askuser-button)"
	check := func(when string) {
		t.Helper()
		res := eval[map[string]any](tb, `(() => ({
			pwned: window.__pwned === undefined ? null : String(window.__pwned),
			elements: [...document.querySelectorAll("#questions :is(`+dangerous+`,details), #transcript :is(`+dangerous+`)")].map(e => e.outerHTML),
			loads: performance.getEntriesByType("resource").map(e => e.name).filter(n => /\/x$|example\.invalid/.test(n)),
			bodyShown: getComputedStyle(document.body).display !== "none",
			base: document.baseURI === location.href,
		}))()`)
		if res["pwned"] != nil {
			t.Errorf("%s: model content ran script: window.__pwned = %v", when, res["pwned"])
		}
		if els := res["elements"].([]any); len(els) > 0 {
			t.Errorf("%s: model content became elements: %v", when, els)
		}
		if loads := res["loads"].([]any); len(loads) > 0 {
			t.Errorf("%s: model content loaded %v", when, loads)
		}
		if res["bodyShown"] != true || res["base"] != true {
			t.Errorf("%s: model content changed the page: %v", when, res)
		}
	}
	check("shown")

	// The hostile strings are all there, as text.
	texts := eval[map[string]any](tb, `(() => {
		const p = document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`]');
		return {
			header: p.querySelector('[data-testid="header"]').textContent,
			question: p.querySelector('[data-testid="question-text"]').textContent,
			label: p.querySelector('[data-testid="option-label"]').textContent,
			preview: p.querySelector('[data-testid="preview-body"]').textContent,
		};
	})()`)
	if texts["header"] != "<img/src=x>" || texts["question"] != hostileQuestion || texts["label"] != hostileLabel ||
		!strings.Contains(texts["preview"].(string), "[click me](javascript:window.__pwned='link')") ||
		!strings.Contains(texts["preview"].(string), "<script>window.__pwned='preview'</script>") {
		t.Errorf("the hostile text is not shown as text: %v", texts)
	}

	// Switch the preview to the other option, focus around, and answer.
	tb.do("choosing the second option", chromedp.Click(option(id, 0, 1)))
	tb.do("choosing the first option", chromedp.Click(option(id, 0, 0)))
	tb.do("choosing in the second question", chromedp.Click(option(id, 1, 0)), chromedp.Click(option(id, 1, 1)))
	tb.do("letting any injected element load", chromedp.Sleep(300*time.Millisecond))
	check("after choosing")
	tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	want := content(t,
		askuser.Answer{Question: hostileQuestion, SelectedLabels: []string{hostileLabel}},
		askuser.Answer{Question: args.Questions[1].Question, SelectedLabels: []string{args.Questions[1].Options[0].Label, args.Questions[1].Options[1].Label}},
	)
	if got := tb.toolResult(id); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
	tb.panelGone(id)
	check("after answering")

	// The checks above can fail: on this page, markup that reaches innerHTML does run.
	tb.do("injecting markup the unsafe way", chromedp.Evaluate[chromedp.Void](
		`document.querySelector("#questions").insertAdjacentHTML("beforeend", '<img src=x onerror="window.__probe=1">')`))
	waitFor[bool](tb, "the probe to run", `window.__probe === 1`)
}

func TestTwoTabsFirstAnswerWins(t *testing.T) {
	session := newSession()
	a := newTab(t)
	b := newTab(t)
	a.open(env.main, session)
	b.open(env.main, session)
	a.say("/single")
	id := a.newestPanel()
	if idB := b.newestPanel(); idB != id {
		t.Fatalf("tab B shows %s, tab A %s", idB, id)
	}
	// B also sees the transcript, including the message typed in A.
	waitFor[bool](b, "the message from tab A", `[...document.querySelectorAll("#transcript .user .text")].some(e => e.textContent === "/single")`)

	b.do("choosing in B", chromedp.Click(option(id, 0, 2)))
	a.do("choosing in A", chromedp.Click(option(id, 0, 0)))
	b.do("submitting in B", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	a.panelGone(id)
	b.panelGone(id)
	want := `{"answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["Svelte"],"customInput":null}]}`
	for name, tb := range map[string]*tab{"A": a, "B": b} {
		if got := tb.toolResult(id); got != want {
			t.Errorf("tab %s: tool result = %s", name, got)
		}
	}
	if n := eval[int](a, `window.demo.events.filter(e => e.type === "ask_user_questions_error").length`); n != 0 {
		t.Errorf("tab A got %d errors", n)
	}
}

func TestReloadShowsThePendingQuestionAgain(t *testing.T) {
	tb := newTab(t)
	session := newSession()
	tb.open(env.main, session)
	tb.say("/multi")
	id := tb.newestPanel()
	tb.do("reloading", chromedp.Reload())
	waitFor[bool](tb, "the connection", `document.querySelector("#conn").dataset.state === "open"`)
	if again := tb.newestPanel(); again != id {
		t.Fatalf("after reload the panel is %s, want %s", again, id)
	}
	// Shown once, and the transcript is back from the history, tool call included.
	waitFor[bool](tb, "the transcript", `document.querySelectorAll("#transcript .tool").length === 1`)
	if n := eval[int](tb, `document.querySelectorAll('[data-testid="panel"]').length`); n != 1 {
		t.Fatalf("%d panels after reload, want 1", n)
	}
	tb.do("answering", chromedp.Click(option(id, 0, 2)), chromedp.Click(sel(id, `[data-testid="submit"]`)))
	want := `{"answers":[{"question":"Which features should the first release include?","selectedLabels":["Export to PDF"],"customInput":null}]}`
	if got := tb.toolResult(id); got != want {
		t.Fatalf("tool result = %s", got)
	}
	// Replaying the history after the answer opens no panel (§5).
	tb.do("reloading", chromedp.Reload())
	waitFor[bool](tb, "the history", `document.querySelectorAll("#transcript .tool[data-outcome='answered']").length === 1`)
	if n := eval[int](tb, `document.querySelectorAll('[data-testid="panel"]').length`); n != 0 {
		t.Fatalf("%d panels after replaying an answered question", n)
	}
}

func TestDecline(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/several")
	id := tb.newestPanel()
	tb.do("declining", chromedp.Click(sel(id, `[data-testid="decline"]`)))
	tb.panelGone(id)
	if got := tb.toolResult(id); got != `{"error": "User declined to answer"}` {
		t.Fatalf("tool result = %s, want %s", got, `{"error": "User declined to answer"}`)
	}
	waitFor[bool](tb, "the agent's reaction", `[...document.querySelectorAll("#transcript .agent .text")].some(e => e.textContent.includes("rather not answer"))`)
}

func TestTimeoutCountsDownAndClears(t *testing.T) {
	srv := demoWithTimeout(t, "6s")
	tb := newTab(t)
	tb.open(srv, newSession())
	tb.say("/single")
	id := tb.newestPanel()
	first := eval[string](tb, `document.querySelector('[data-testid="countdown"]').textContent`)
	if !regexp.MustCompile(`^0:0[1-6] left$`).MatchString(first) {
		t.Fatalf("countdown = %q", first)
	}
	if role := eval[string](tb, `document.querySelector('[data-testid="countdown"]').getAttribute("role")`); role != "timer" {
		t.Errorf("countdown role = %q", role)
	}
	tb.do("starting to type an answer", chromedp.SendKeys(other(id, 0), "half an idea"))
	waitFor[bool](tb, "the countdown to tick", `document.querySelector('[data-testid="countdown"]') && document.querySelector('[data-testid="countdown"]').textContent !== `+js(first))
	tb.panelGone(id)
	if got := tb.toolResult(id); got != `{"error": "User did not respond within timeout"}` {
		t.Fatalf("tool result = %s, want %s", got, `{"error": "User did not respond within timeout"}`)
	}
	// The panel leaves a note where it was, with what was being typed.
	if n := tb.waitNote(id, "Timed out"); n.Outcome != "timeout" || n.Typed != "What you had written: half an idea" {
		t.Errorf("note = %+v", n)
	}
	waitFor[bool](tb, "the agent's reaction", `[...document.querySelectorAll("#transcript .agent .text")].some(e => e.textContent.includes("No answer in time"))`)
}

func TestRefusedAnswerKeepsThePanel(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/single")
	id := tb.newestPanel()
	tb.do("choosing Vue", chromedp.Click(option(id, 0, 0)))
	// A device that sends a wrong answer (here forged through the page's socket) is told
	// why in the panel, which stays open with what was chosen.
	tb.do("sending a wrong answer", chromedp.Evaluate[chromedp.Void](`demo.client.send({
		type: "ask_user_questions_result",
		data: {requestId: `+js(id)+`, answers: [{question: "Not this one?", selectedLabels: ["Vue"], customInput: null}]}
	})`))
	msg := waitFor[string](tb, "the error", `(() => {
		const e = document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="error"]');
		return e && !e.hidden && e.textContent;
	})()`)
	if !strings.Contains(msg, "Not this one?") {
		t.Errorf("the error does not say what was wrong: %q", msg)
	}
	if role := eval[string](tb, `document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="error"]').getAttribute("role")`); role != "alert" {
		t.Errorf("error role = %q", role)
	}
	if st := tb.state(id); !st.Submit || mustJSON(st.Checked) != `[[true,false,false]]` {
		t.Fatalf("after the refusal: %+v", st)
	}
	tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	tb.panelGone(id)
	if got := tb.toolResult(id); !strings.Contains(got, `"selectedLabels":["Vue 3 (Recommended)"]`) {
		t.Fatalf("tool result = %s", got)
	}
}

func TestKeyboardOnly(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/single")
	id := tb.newestPanel()
	// From just before the panel, Tab reaches the first option; arrows choose; Tab goes on to
	// Other, Decline and Submit; Enter submits.
	tb.do("focusing the page before the panel", chromedp.Evaluate[chromedp.Void](`document.querySelector("#questions").setAttribute("tabindex", "-1"), document.querySelector("#questions").focus()`))
	tb.do("tabbing into the panel", chromedp.KeyEvent(kb.Tab))
	focused := func() string {
		return eval[string](tb, `(() => { const a = document.activeElement; return (a.dataset.testid || a.tagName) + (a.closest("[data-testid=option]") ? ":" + a.closest("[data-testid=option]").dataset.index : ""); })()`)
	}
	if f := focused(); f != "option-input:0" {
		t.Fatalf("Tab focused %s, want the first option", f)
	}
	// The focus is visible.
	if o := eval[string](tb, `getComputedStyle(document.activeElement.closest("[data-testid=option]")).outlineStyle`); o == "none" {
		t.Error("the focused option has no visible outline")
	}
	tb.do("arrow down twice", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	if st := tb.state(id); mustJSON(st.Checked) != `[[false,false,true]]` || !st.Submit {
		t.Fatalf("after the arrows: %+v", st)
	}
	tb.do("tabbing on", chromedp.KeyEvent(kb.Tab))
	if f := focused(); f != "other-input" {
		t.Fatalf("second Tab focused %s, want Other", f)
	}
	tb.do("tabbing on", chromedp.KeyEvent(kb.Tab))
	if f := focused(); f != "decline" {
		t.Fatalf("third Tab focused %s, want Decline", f)
	}
	tb.do("tabbing to Submit and pressing Enter", chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
	tb.panelGone(id)
	if got := tb.toolResult(id); !strings.Contains(got, `"selectedLabels":["Svelte"]`) {
		t.Fatalf("tool result = %s", got)
	}
}

func TestReconnectAfterANetworkDrop(t *testing.T) {
	setup(t)
	px, err := newProxy(env.main.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.close)
	tb := newTab(t)
	tb.open(px.server(), newSession())
	tb.say("/single")
	id := tb.newestPanel()
	tb.do("choosing React", chromedp.Click(option(id, 0, 1)))

	px.cut()
	waitFor[bool](tb, "the page to notice", `document.querySelector("#conn").dataset.state !== "open"`)
	waitFor[bool](tb, "the disconnected banner", `!document.querySelector('[data-testid="connection"]').hidden`)
	if st := tb.state(id); st.Submit || mustJSON(st.Checked) != `[[false,true,false]]` {
		t.Fatalf("while disconnected: %+v (Submit must be off, the choice kept)", st)
	}

	// The network comes back: the page reconnects by itself, the server shows it the
	// question again, and the panel is still the one panel, with the choice made.
	px.restore()
	waitFor[bool](tb, "the reconnection", `document.querySelector("#conn").dataset.state === "open"`)
	waitFor[bool](tb, "Submit", `document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="submit"]').getAttribute("aria-disabled") === "false"`)
	waitFor[bool](tb, "the question sent again", `window.demo.events.filter(e => e.type === "ask_user_questions" && e.data.requestId === `+js(id)+`).length === 2`)
	if n := eval[int](tb, `document.querySelectorAll('[data-testid="panel"]').length`); n != 1 {
		t.Fatalf("%d panels after the reconnection, want 1", n)
	}
	if !eval[bool](tb, `document.querySelector('[data-testid="connection"]').hidden`) {
		t.Error("the disconnected banner stayed")
	}
	if st := tb.state(id); mustJSON(st.Checked) != `[[false,true,false]]` {
		t.Fatalf("the reconnection lost the choice: %+v", st)
	}
	tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	tb.panelGone(id)
	if got, want := tb.toolResult(id), `{"answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["React"],"customInput":null}]}`; got != want {
		t.Fatalf("tool result = %s", got)
	}
}

func TestServerCrashLeavesAPanelToDismiss(t *testing.T) {
	setup(t)
	srv, err := startDemo("127.0.0.1:0", "-timeout", "3m")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.stop)
	tb := newTab(t)
	tb.open(srv, newSession())
	tb.say("/single")
	id := tb.newestPanel()
	tb.do("choosing React", chromedp.Click(option(id, 0, 1)))

	// The server dies without a word and comes back on the same address without the
	// question, which lived in the old process.
	srv.kill()
	waitFor[bool](tb, "the page to notice", `document.querySelector("#conn").dataset.state !== "open"`)
	srv2, err := startDemo(srv.addr, "-timeout", "3m")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv2.stop)
	waitFor[bool](tb, "the reconnection", `document.querySelector("#conn").dataset.state === "open"`)
	waitFor[bool](tb, "Submit", `document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="submit"]').getAttribute("aria-disabled") === "false"`)
	// Answering a question the server no longer has says so, and offers to dismiss it.
	tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	waitFor[bool](tb, "the not-pending error", `(() => {
		const e = document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="error"]');
		return e && !e.hidden && e.textContent.includes("no longer open");
	})()`)
	tb.do("dismissing", chromedp.Click(sel(id, `[data-testid="dismiss"]`)))
	tb.panelGone(id)

	// The new server works as the old did.
	tb.say("/single")
	id2 := tb.newestPanel()
	tb.do("answering", chromedp.Click(option(id2, 0, 0)), chromedp.Click(sel(id2, `[data-testid="submit"]`)))
	if got := tb.toolResult(id2); !strings.Contains(got, "Vue 3 (Recommended)") {
		t.Fatalf("tool result = %s", got)
	}
}

func TestServerShutdownClearsThePanel(t *testing.T) {
	setup(t)
	srv, err := startDemo("127.0.0.1:0", "-timeout", "3m")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.stop)
	tb := newTab(t)
	tb.open(srv, newSession())
	tb.say("/single")
	id := tb.newestPanel()
	// A clean shutdown ends the question and tells the devices before it closes them.
	srv.stop()
	tb.panelGone(id)
	waitFor[bool](tb, "the page to notice", `document.querySelector("#conn").dataset.state !== "open"`)
}

// TestPanelAPI checks the panel on its own, fed events by the test: an ask seen twice is
// shown once, sets are shown oldest first, a resolution of any kind removes its panel,
// and the markdown subset renders as elements without any markup passing through.
func TestPanelAPI(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	res := eval[map[string]any](tb, `(() => {
		const box = document.createElement("div");
		document.body.appendChild(box);
		const sent = [];
		const panel = AskUser.createPanel({container: box, send: (ev) => { sent.push(ev); return true; }});
		const q = (text) => ({question: text, header: "H", multiSelect: false,
			options: [{label: "A", description: "a"}, {label: "B", description: "b"}]});
		const ask = (id, text) => ({type: "ask_user_questions", sessionId: "s", data: {requestId: id, questions: [q(text)]}});
		panel.handle(ask("r1", "First?"));
		panel.handle(ask("r2", "Second?"));
		panel.handle(ask("r1", "First?"));
		const order = panel.requestIds().join(",");
		const shown = box.querySelectorAll('[data-testid="panel"]').length;
		const noCountdown = box.querySelector('[data-request-id="r1"] [data-testid="countdown"]').hidden;
		box.querySelector('[data-request-id="r2"] [data-testid="option-input"]').click();
		box.querySelector('[data-request-id="r2"] [data-testid="submit"]').click();
		const result = JSON.stringify(sent[0]);
		panel.handle({type: "ask_user_questions_resolved", sessionId: "s", data: {requestId: "r2", outcome: "timeout"}});
		const after = panel.requestIds().join(",");
		const md = document.createElement("div");
		md.appendChild(AskUser.markdown("# T\n\n1. *a* **b** `+"`c`"+`\n2. snake_case_word\n\n> q <b>x</b>\n\n---\n~~~\n<i>raw</i>\n~~~\n\\*literal\\*"));
		panel.destroy();
		box.remove();
		return {order, shown, noCountdown, result, after, tags: [...md.querySelectorAll("*")].map(e => e.tagName.toLowerCase()).join(","), text: md.textContent, left: box.childElementCount};
	})()`)
	want := map[string]any{
		"order":       "r1,r2",
		"shown":       float64(2),
		"noCountdown": true,
		"result":      `{"type":"ask_user_questions_result","sessionId":"s","data":{"requestId":"r2","answers":[{"question":"Second?","selectedLabels":["A"],"customInput":null}]}}`,
		"after":       "r1",
		"tags":        "div,ol,li,em,strong,code,li,div,hr,pre,code,p",
		"text":        "Ta b csnake_case_wordq <b>x</b><i>raw</i>*literal*",
		"left":        float64(0),
	}
	for k, v := range want {
		if mustJSON(res[k]) != mustJSON(v) {
			t.Errorf("%s = %s, want %s", k, mustJSON(res[k]), mustJSON(v))
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "!" + err.Error()
	}
	return string(b)
}
