package e2e

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/notify"
	"github.com/askuser-go/askuser/wire"
	"github.com/askuser-go/askuser/wshub"
)

// What a new user meets in the first minutes, on a laptop and on a phone: the demo page,
// the README's quick-start page and the page of an answer link. Each check is of what a
// person sees: where things are, how big, in which font and colours.

// firstSizes are the windows of a first visit: a phone's and a laptop's.
var firstSizes = []struct {
	name   string
	w, h   int64
	mobile bool
}{{"phone", 390, 844, true}, {"laptop", 1280, 900, false}}

// linkDemo starts a demo of the test's own whose links the test can make: the links
// made with the Links it returns are the demo's.
func linkDemo(t *testing.T) (*demoServer, *notify.Links) {
	t.Helper()
	setup(t)
	srv, err := startDemo("127.0.0.1:0", "-notify-secret", notifySecret, "-timeout", "3m")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.stop)
	return srv, &notify.Links{Secrets: [][]byte{[]byte(notifySecret)}, BaseURL: srv.base + "askuser/links"}
}

// rect is an element's box as the page lays it out.
type rect struct {
	Top    float64 `json:"top"`
	Bottom float64 `json:"bottom"`
	Left   float64 `json:"left"`
	Right  float64 `json:"right"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// rectJS is a function, r(element), that returns an element's rect.
const rectJS = `((e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height}; })`

// TestMissingAnswerHintKeepsItsPlace: Submit before answering flashes the hint that says
// what is missing, and the flash moves nothing: the hint and the name in bold keep their
// boxes and their size (the flash's class was also the "Notify me" bar's, whose flex
// layout pushed the hint right, shrank it and spaced the bold name out).
func TestMissingAnswerHintKeepsItsPlace(t *testing.T) {
	for _, size := range firstSizes {
		t.Run(size.name, func(t *testing.T) {
			tb := newTab(t)
			tb.viewport(size.w, size.h, size.mobile)
			tb.open(env.main, newSession())
			tb.say("/single")
			id := tb.newestPanel()
			measure := func() map[string]any {
				return eval[map[string]any](tb, `(() => {
					const r = `+rectJS+`;
					const h = document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="hint"]');
					const cs = getComputedStyle(h);
					return {hint: r(h), name: r(h.querySelector("b")), size: cs.fontSize, display: cs.display, class: h.className, text: h.textContent};
				})()`)
			}
			before := measure()
			tb.do("pressing Submit unanswered", chromedp.Click(sel(id, `[data-testid="submit"]`)))
			// The flash is a class added to the hint for as long as its animation.
			after := waitFor[map[string]any](tb, "the flash", `(() => {
				const r = `+rectJS+`;
				const h = document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="hint"]');
				const cs = getComputedStyle(h);
				return h.className !== `+js(before["class"].(string))+` && {hint: r(h), name: r(h.querySelector("b")), size: cs.fontSize, display: cs.display, text: h.textContent};
			})()`)
			if before["text"] != "Answer Framework to submit." || after["text"] != before["text"] {
				t.Fatalf("the hint says %q, then %q", before["text"], after["text"])
			}
			if before["size"] != after["size"] || before["display"] != after["display"] {
				t.Errorf("the flash changed the hint's font size %v → %v, display %v → %v", before["size"], after["size"], before["display"], after["display"])
			}
			for _, k := range []string{"hint", "name"} {
				b, a := before[k].(map[string]any), after[k].(map[string]any)
				for _, side := range []string{"left", "top", "width", "height"} {
					if d := a[side].(float64) - b[side].(float64); d > 0.5 || d < -0.5 {
						t.Errorf("the flash moved the %s: %s %.1f → %.1f", k, side, b[side], a[side])
					}
				}
			}
		})
	}
}

// TestNotifyMeIsAPill: "Notify me" in the demo's header is a pill the size of the pills
// beside it, in their row and in the panel's font: on a laptop; and on a phone, where its
// target is 44 px tall around the same pill, and the header keeps to two rows however
// long the agent's state reads, in English and in Chinese.
func TestNotifyMeIsAPill(t *testing.T) {
	type header struct {
		Notify     rect    `json:"notify"`
		Pill       float64 `json:"pill"`  // the height of the pill drawn
		State      rect    `json:"state"` // the agent's state
		Font       string  `json:"font"`
		PanelFont  string  `json:"panelFont"`
		FontSize   string  `json:"fontSize"`
		Rows       int     `json:"rows"`
		Height     float64 `json:"height"`
		StateText  string  `json:"stateText"`
		Connection bool    `json:"connection"` // the connection's pill is shown
	}
	read := func(tb *tab) header {
		return eval[header](tb, `(() => {
			const r = `+rectJS+`;
			const n = document.querySelector('[data-testid="notify-me"]');
			const before = getComputedStyle(n, "::before");
			const shown = [...document.querySelectorAll(".top > *, .top-links")].filter(e => e.getBoundingClientRect().height > 0 && !e.matches(".notify, nav *"));
			const rows = [];
			for (const e of shown.concat([n])) { const b = e.getBoundingClientRect(), c = (b.top + b.bottom) / 2;
				if (!rows.some(y => Math.abs(y - c) < 12)) rows.push(c); }
			return {notify: r(n), pill: before.content !== "none" && before.content !== "" ? parseFloat(before.height) : n.getBoundingClientRect().height,
				state: r(document.querySelector("#agent-state")), font: getComputedStyle(n).fontFamily,
				panelFont: getComputedStyle(document.querySelector('[data-testid="askuser-root"]')).fontFamily,
				fontSize: getComputedStyle(n).fontSize, rows: rows.length, height: document.querySelector(".top").getBoundingClientRect().height,
				stateText: document.querySelector("#agent-state").textContent, connection: document.querySelector("#conn").getBoundingClientRect().height > 0};
		})()`)
	}
	check := func(t *testing.T, h header, phone bool) {
		t.Helper()
		if h.Font != h.PanelFont || h.FontSize != "12px" {
			t.Errorf("Notify me is in %s %s, the panel in %s", h.FontSize, h.Font, h.PanelFont)
		}
		if d := h.Pill - h.State.Height; d > 4 || d < -4 {
			t.Errorf("Notify me is a pill %.1f px tall beside a state pill %.1f px tall", h.Pill, h.State.Height)
		}
		if c, s := (h.Notify.Top+h.Notify.Bottom)/2, (h.State.Top+h.State.Bottom)/2; c-s > 2 || s-c > 2 {
			t.Errorf("Notify me (centre %.1f) is not in the row of the agent's state (centre %.1f)", c, s)
		}
		if phone && h.Notify.Height < 43.5 {
			t.Errorf("on a phone, Notify me is %.1f px tall, under 44", h.Notify.Height)
		}
		if !phone && h.Notify.Height > 26 {
			t.Errorf("on a laptop, Notify me is %.1f px tall", h.Notify.Height)
		}
		if rows := map[bool]int{true: 2, false: 1}[phone]; h.Rows > rows {
			t.Errorf("the header has %d rows (%.0f px) with the state %q, want %d", h.Rows, h.Height, h.StateText, rows)
		}
	}

	t.Run("laptop", func(t *testing.T) {
		tb := newTab(t)
		tb.viewport(1280, 900, false)
		tb.open(env.main, newSession())
		check(t, read(tb), false)
		tb.say("/single")
		tb.newestPanel()
		check(t, read(tb), false)
	})
	for _, lang := range []string{"en", "zh"} {
		t.Run("phone-"+lang, func(t *testing.T) {
			tb := newTab(t)
			tb.viewport(390, 844, true)
			tb.open(env.main, newSession()+"&lang="+lang)
			h := read(tb)
			check(t, h, true)
			if h.Connection {
				t.Error(`on a phone, the header says "connected", which goes without saying`)
			}
			tb.say("/tool delete_branch {\"name\":\"feature/old-login\"}") // the longest state: waiting for your approval
			tb.newestApproval("")
			waitFor[bool](tb, "the state", `document.querySelector("#agent-state").dataset.state === "waiting"`)
			tb.settle()
			check(t, read(tb), true)
		})
	}
}

// readmePage returns the page of the README's quick start (examples/readme), as it is
// there.
func readmePage(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../examples/readme/main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if len(v.Names) == 1 && v.Names[0].Name == "page" {
				if lit, ok := v.Values[0].(*ast.BasicLit); ok {
					page, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					return page
				}
			}
		}
	}
	t.Fatal("examples/readme/main.go has no const page")
	return ""
}

// readmeServer serves the README's quick start as it is written (its page, the panel's
// files, its hub), asks its one question, and returns the page's URL.
func readmeServer(t *testing.T) string {
	t.Helper()
	page := readmePage(t)
	session := askuser.IntSession(123)
	hub := wshub.New(&wshub.Options{Authorize: func(*http.Request) ([]askuser.SessionID, error) {
		return []askuser.SessionID{session}, nil
	}})
	d := askuser.New(hub, nil)
	mux := http.NewServeMux()
	mux.Handle("/ws", hub)
	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(page)) })
	srv := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.Dispatch(ctx, askuser.ToolCall{Session: session, ID: "call_1", Arguments: json.RawMessage(`{"questions": [{
			"question": "Which database should the service use?", "header": "Database",
			"options": [{"label": "PostgreSQL (Recommended)", "description": "Relational, already in production"},
				{"label": "SQLite", "description": "One file, no server"}], "multiSelect": false}]}`)})
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		d.Close()
		_ = hub.Close()
		srv.Close()
	})
	return srv.URL + "/"
}

// TestNotifyMeOnTheQuickStartPage: on the README's page, which has no styles of its own,
// "Notify me" is in the panel's font (not the browser's serif), small, under the card at
// its right edge, and legible on the page's white in either theme.
func TestNotifyMeOnTheQuickStartPage(t *testing.T) {
	url := readmeServer(t)
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			tb := newTab(t)
			tb.viewport(1280, 900, false)
			tb.colorScheme(scheme)
			tb.do("opening the quick start's page", chromedp.Navigate(url))
			tb.newestPanel()
			got := eval[map[string]any](tb, `(() => {
				const r = `+rectJS+`;
				const n = document.querySelector('[data-testid="notify-me"]'), p = document.querySelector('[data-testid="panel"]');
				return {font: getComputedStyle(n).fontFamily, panelFont: getComputedStyle(p).fontFamily, bodyFont: getComputedStyle(document.body).fontFamily,
					size: getComputedStyle(n).fontSize, notify: r(n), panel: r(p), contrast: `+contrastOfJS+`(n)};
			})()`)
			if got["font"] != got["panelFont"] || got["font"] == got["bodyFont"] || got["size"] != "12px" {
				t.Errorf("Notify me is in %v %v; the panel is in %v, the page in %v", got["size"], got["font"], got["panelFont"], got["bodyFont"])
			}
			n, p := got["notify"].(map[string]any), got["panel"].(map[string]any)
			if n["height"].(float64) > 26 || n["top"].(float64) < p["bottom"].(float64) || n["top"].(float64)-p["bottom"].(float64) > 16 ||
				p["right"].(float64)-n["right"].(float64) > 1 || n["right"].(float64)-p["right"].(float64) > 1 {
				t.Errorf("Notify me is at %v, the card at %v: want a small control just under the card, at its right edge", n, p)
			}
			if c := got["contrast"].(float64); c < 4.5 {
				t.Errorf("Notify me's text has a contrast of %.2f on the page", c)
			}
		})
	}
}

// placeholderFitsJS says whether a text field's placeholder fits in it, wrapped at words
// as the browser wraps it.
const placeholderFitsJS = `((e) => {
	const cs = getComputedStyle(e), ctx = document.createElement("canvas").getContext("2d");
	ctx.font = cs.fontWeight + " " + cs.fontSize + " " + cs.fontFamily;
	const width = e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
	let lines = 1, line = "";
	for (const w of e.placeholder.split(" ")) {
		const next = line ? line + " " + w : w;
		if (ctx.measureText(next).width > width && line) { lines++; line = w; } else line = next;
	}
	const lh = parseFloat(cs.lineHeight) || parseFloat(cs.fontSize) * 1.2;
	return {fits: lines * lh <= e.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom) + 1, lines, width};
})`

// TestPhoneSheetHasRoom: at 390×844 the message box is most of its row and shows its
// whole placeholder, the demo's notice is two lines at most, the transcript keeps room
// for its last entries above the sheet, and a question's title that wraps stays inside
// its box.
func TestPhoneSheetHasRoom(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			tb := newTab(t)
			tb.viewport(390, 844, true)
			tb.open(env.main, newSession()+"&lang="+lang)
			tb.say("/single")
			id := tb.newestPanel()
			tb.settle()
			got := eval[map[string]any](tb, `(() => {
				const r = `+rectJS+`;
				const box = document.querySelector("#message"), notice = document.querySelector(".notice");
				const fs = document.querySelector('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="question"]');
				const lg = fs.querySelector("legend"), range = document.createRange();
				range.selectNodeContents(notice);
				const lines = new Set([...range.getClientRects()].filter(c => c.width > 0).map(c => Math.round(c.bottom))).size;
				return {box: r(box), placeholder: `+placeholderFitsJS+`(box), notice: r(notice), noticeLines: lines,
					transcript: r(document.querySelector("#transcript")), fieldset: r(fs), legend: r(lg),
					legendLines: lg.getBoundingClientRect().height / parseFloat(getComputedStyle(lg).lineHeight),
					border: parseFloat(getComputedStyle(fs).borderTopWidth)};
			})()`)
			if w := got["box"].(map[string]any)["width"].(float64); w < 0.6*390 {
				t.Errorf("the message box is %.0f px wide of 390", w)
			}
			if p := got["placeholder"].(map[string]any); p["fits"] != true {
				t.Errorf("the message box's placeholder does not fit: %v", p)
			}
			if n := got["noticeLines"].(float64); n > 2 {
				t.Errorf("the notice takes %.0f lines", n)
			}
			if h := got["transcript"].(map[string]any)["height"].(float64); h < 150 {
				t.Errorf("the transcript is %.0f px tall above the sheet", h)
			}
			fs, lg := got["fieldset"].(map[string]any), got["legend"].(map[string]any)
			if got["legendLines"].(float64) < 1.9 {
				t.Fatalf("the question's title is on %.1f lines: this test needs it to wrap", got["legendLines"])
			}
			if lg["top"].(float64) < fs["top"].(float64)+got["border"].(float64)-0.5 || lg["bottom"].(float64) > fs["bottom"].(float64) ||
				lg["left"].(float64) < fs["left"].(float64) || lg["right"].(float64) > fs["right"].(float64) {
				t.Errorf("the question's title (%v) crosses its box's border (%v)", lg, fs)
			}
		})
	}
}

// TestPhoneSheetSaysWhatIsBelow: with /parallel on a phone, the approval is below the
// sheet's fold; a button under the sheet says so, and brings it into view and focus.
func TestPhoneSheetSaysWhatIsBelow(t *testing.T) {
	tb := newTab(t)
	tb.viewport(390, 844, true)
	tb.open(env.main, newSession())
	tb.say("/parallel")
	tb.newestPanel()
	id := tb.newestApproval("")
	tb.do("scrolling the sheet to the top", chromedp.Evaluate[chromedp.Void](`document.querySelector("#questions").scrollTop = 0`))
	cue := waitFor[map[string]any](tb, "the cue", `(() => {
		const r = `+rectJS+`;
		const m = document.querySelector("#more-below"), q = document.querySelector("#questions"), c = `+cardJS(id)+`;
		return !m.hidden && {text: m.textContent, cue: r(m), sheet: r(q), composer: r(document.querySelector("#composer")), card: r(c)};
	})()`)
	if cue["text"] != "↓ An approval below" {
		t.Errorf("the cue says %q", cue["text"])
	}
	m, q, c, comp := cue["cue"].(map[string]any), cue["sheet"].(map[string]any), cue["card"].(map[string]any), cue["composer"].(map[string]any)
	if c["top"].(float64) < q["bottom"].(float64)-32 {
		t.Fatalf("the approval (%v) is in the sheet's view (%v): this test needs it below", c, q)
	}
	if m["height"].(float64) < 43.5 || m["top"].(float64) < q["bottom"].(float64)-0.5 || m["bottom"].(float64) > comp["top"].(float64)+0.5 ||
		m["left"].(float64) > 0.5 || m["right"].(float64) < 389.5 {
		t.Errorf("the cue %v is not a full-width bar between the sheet %v and the message box %v", m, q, comp)
	}
	tb.pageScreenshot("phone-below")
	tb.do("pressing the cue", chromedp.Click(chromedp.CSS("#more-below")))
	shown := `(() => { const m = document.querySelector("#more-below"); return !m.hidden && getComputedStyle(m).visibility !== "hidden"; })()`
	waitFor[bool](tb, "the approval in view", `(() => {
		const c = `+cardJS(id)+`, q = document.querySelector("#questions").getBoundingClientRect(), r = c.getBoundingClientRect();
		return r.top >= q.top - 1 && r.top < q.bottom - 100 && document.activeElement === c;
	})()`)
	tb.settle()
	if eval[bool](tb, shown) {
		t.Errorf("the cue stays once the approval is in view")
	}
	// Scrolled back up, the cue says again what is below, in the same room.
	tb.do("scrolling the sheet to the top", chromedp.Evaluate[chromedp.Void](`document.querySelector("#questions").scrollTop = 0`))
	waitFor[bool](tb, "the cue again", shown)
	// Scrolled by hand to the end, the cue goes and leaves everything where it was: what
	// the person is about to tap does not move under their finger.
	top := eval[float64](tb, `(() => { const q = document.querySelector("#questions"); q.scrollTop = q.scrollHeight; return `+cardJS(id)+`.getBoundingClientRect().top; })()`)
	tb.settle()
	if eval[bool](tb, shown) {
		t.Errorf("the cue stays once the sheet is scrolled to its end")
	}
	if now := eval[float64](tb, cardJS(id)+`.getBoundingClientRect().top`); now != top {
		t.Errorf("the approval moved from %v to %v when the cue went", top, now)
	}
}

// TestLaptopTranscriptMeetsThePanel: at 1280×900 the transcript's newest entry sits just
// above the question panel, and with several questions the transcript keeps room for its
// last entries while the questions scroll in one box, never a scrolling box in another.
func TestLaptopTranscriptMeetsThePanel(t *testing.T) {
	tb := newTab(t)
	tb.viewport(1280, 900, false)
	tb.open(env.main, newSession())
	tb.say("/single")
	tb.newestPanel()
	tb.settle()
	gap := eval[float64](tb, `document.querySelector("#questions").getBoundingClientRect().top - document.querySelector("#transcript").lastElementChild.getBoundingClientRect().bottom`)
	if gap > 14 || gap < 0 {
		t.Errorf("%.0f px between the transcript's newest entry and the question panel", gap)
	}
	tb.do("cancelling", chromedp.Click(chromedp.CSS("#cancel")))
	tb.say("/help")
	tb.say("/several")
	tb.newestPanel()
	tb.settle()
	got := eval[map[string]any](tb, `(() => {
		// Seen: laid out, and not in a closed tool card (whose insides keep their boxes).
		const seen = (e) => { const r = e.getBoundingClientRect(), d = e.closest("details:not([open])");
			return r.width > 0 && r.height > 0 && (!d || e.closest("summary")); };
		const scrollers = [...document.querySelectorAll("body *")].filter(e => seen(e) && /(auto|scroll)/.test(getComputedStyle(e).overflowY) && e.scrollHeight > e.clientHeight + 1);
		return {nested: scrollers.filter(e => scrollers.some(o => o !== e && o.contains(e))).map(e => e.id || e.className),
			scrollers: scrollers.map(e => e.id || e.className), transcript: document.querySelector("#transcript").getBoundingClientRect().height,
			page: document.documentElement.scrollHeight > innerHeight};
	})()`)
	if len(got["nested"].([]any)) > 0 || got["page"] == true {
		t.Errorf("scrolling boxes in scrolling boxes: %v (all: %v; the page scrolls: %v)", got["nested"], got["scrollers"], got["page"])
	}
	if h := got["transcript"].(float64); h < 150 {
		t.Errorf("with three questions the transcript is %.0f px tall", h)
	}
}

// TestToolCardsShowTheyOpen: a transcript's tool card has a triangle before its name,
// which turns when the card opens.
func TestToolCardsShowTheyOpen(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/single")
	tb.newestPanel()
	marker := func() map[string]any {
		return eval[map[string]any](tb, `(() => {
			const s = document.querySelector("#transcript .tool summary"), b = getComputedStyle(s, "::before");
			return {content: b.content, width: parseFloat(b.borderLeftWidth) + parseFloat(b.width), height: parseFloat(b.borderTopWidth) + parseFloat(b.borderBottomWidth) + parseFloat(b.height),
				color: b.borderLeftColor, transform: b.transform, open: s.parentElement.open, display: b.display};
		})()`)
	}
	closed := marker()
	if closed["content"] == "none" || closed["width"].(float64) < 5 || closed["height"].(float64) < 5 || closed["display"] == "none" ||
		closed["color"] == "rgba(0, 0, 0, 0)" || closed["open"] == true {
		t.Fatalf("a closed tool card shows no marker: %v", closed)
	}
	tb.do("opening the card", chromedp.Click(chromedp.CSS("#transcript .tool summary")))
	open := marker()
	if open["open"] != true || open["transform"] == closed["transform"] || open["transform"] == "none" {
		t.Errorf("the marker does not turn when the card opens: closed %v, open %v", closed, open)
	}
}

// TestHelpNeedsNoColumns: /help is read in a proportional font, so it aligns nothing with
// spaces; each command begins a line.
func TestHelpNeedsNoColumns(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("/help")
	text := waitFor[string](tb, "the help", `(() => { const e = [...document.querySelectorAll("#transcript .agent .text")].find(e => e.textContent.includes("Commands:")); return e && e.textContent; })()`)
	font := eval[string](tb, `getComputedStyle([...document.querySelectorAll("#transcript .agent .text")].pop()).fontFamily`)
	if strings.Contains(font, "mono") {
		t.Fatalf("the help is in %s: this test is about a proportional font", font)
	}
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		if strings.Contains(l, "  ") || strings.HasPrefix(l, " ") {
			t.Errorf("a line of /help is aligned with spaces: %q", l)
		}
	}
	for _, cmd := range []string{"/single", "/multi", "/preview", "/several", "/ask", "/tool", "/parallel", "/help"} {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, cmd+" ") || strings.HasPrefix(l, cmd+":")
		}
		if !found {
			t.Errorf("no line of /help begins with %s", cmd)
		}
	}
}

// responses records the status of every HTTP response a tab receives.
type responses struct {
	mu   sync.Mutex
	list []string // "STATUS URL"
}

func (tb *tab) recordResponses() *responses {
	tb.t.Helper()
	rs := &responses{}
	received := chromedp.Events(tb.ctx, network.ResponseReceived)
	go func() {
		for e, err := range received {
			if err != nil {
				return
			}
			rs.mu.Lock()
			rs.list = append(rs.list, strconv.FormatInt(e.Response.Status, 10)+" "+e.Response.URL)
			rs.mu.Unlock()
		}
	}()
	if _, err := chromedp.Call(tb.ctx, network.Enable, network.EnableParams{}); err != nil {
		tb.t.Fatalf("recording responses: %v", err)
	}
	return rs
}

func (rs *responses) failed() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []string
	for _, r := range rs.list {
		if r[0] == '4' || r[0] == '5' {
			out = append(out, r)
		}
	}
	return out
}

// checkIcon fails the test when the tab's page names no icon, or when its icon is not
// served as an image.
func (tb *tab) checkIcon(page string) {
	tb.t.Helper()
	got, err := run(tb, chromedp.Evaluate[map[string]any](`(async () => {
		const l = document.querySelector('link[rel~="icon"]');
		if (!l) return {href: ""};
		const r = await fetch(l.href);
		return {href: l.href, status: r.status, type: r.headers.get("Content-Type") || ""};
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("fetching %s's icon: %v", page, err)
	}
	if got["href"] == "" {
		tb.t.Errorf("%s names no icon: the browser asks for /favicon.ico", page)
		return
	}
	if s := got["status"].(float64); (s != 200 && s != 204) || !strings.HasPrefix(got["type"].(string), "image/") {
		tb.t.Errorf("%s's icon %v", page, got)
	}
}

// TestEveryPageHasAnIcon: the demo page, an answer link's page (pending and ended), an
// action link's confirmation page and the README's page each name an icon that is
// served, and no request of theirs fails (the browser's /favicon.ico was a 404 on each).
func TestEveryPageHasAnIcon(t *testing.T) {
	srv, links := linkDemo(t)
	session := newSession()

	tb := newTab(t)
	rs := tb.recordResponses()
	tb.open(srv, session)
	tb.checkIcon("the demo page")
	tb.say("/tool delete_branch {\"name\":\"feature/icon\"}")
	id := tb.newestApproval("")
	expires := time.Now().Add(time.Hour)
	lt := newTab(t)
	lrs := lt.recordResponses()
	lt.do("opening the answer link", chromedp.Navigate(links.Answer(wire.ParseSessionID(session), id, expires)))
	lt.newestApproval("")
	lt.checkIcon("an answer link's page")
	lt.do("opening the action link", chromedp.Navigate(links.Action(wire.ParseSessionID(session), id, "deny", expires)))
	lt.checkIcon("an action link's page")
	lt.do("denying", chromedp.Click(chromedp.CSS(".askuser-link-deny")), chromedp.WaitNotPresent(chromedp.CSS("form")))
	waitFor[bool](lt, "the decision", `document.body.textContent.includes("Denied.")`)
	lt.do("opening the answer link again", chromedp.Navigate(links.Answer(wire.ParseSessionID(session), id, expires)))
	waitFor[bool](lt, "the ended page", `document.body.textContent.includes("This tool call was denied.")`)
	lt.checkIcon("an ended link's page")

	qt := newTab(t)
	qrs := qt.recordResponses()
	qt.do("opening the quick start's page", chromedp.Navigate(readmeServer(t)))
	qt.newestPanel()
	qt.checkIcon("the quick start's page")

	for _, r := range [][]string{rs.failed(), lrs.failed(), qrs.failed()} {
		for _, f := range r {
			t.Errorf("a request failed: %s", f)
		}
	}
}

// contrastOfJS returns the contrast of an element's text with what is behind it.
const contrastOfJS = `((e) => {
	const parse = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
	const over = (top, bottom) => { const a = top[3]; return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat(1); };
	const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
	const layers = [];
	for (let n = e; n; n = n.parentElement) { const c = parse(getComputedStyle(n).backgroundColor); if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
	let bg = [255, 255, 255, 1]; for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
	const fg = over(parse(getComputedStyle(e).color), bg);
	const x = lum(fg), y = lum(bg);
	return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
})`

// TestAnswerLinkPageOnAPhone: an answer link's page on a phone shows the question with
// its buttons legible (the link page's rule for its own buttons made the panel's Decline
// white on white), a title that says it once, no "Notify me" (its socket carries this
// request alone), and once answered, what happened, in the panel's column.
func TestAnswerLinkPageOnAPhone(t *testing.T) {
	srv, links := linkDemo(t)
	for _, size := range firstSizes {
		t.Run(size.name, func(t *testing.T) {
			session := newSession()
			tb := newTab(t)
			tb.open(srv, session)
			tb.say("/single")
			id := tb.newestPanel()

			lt := newTab(t)
			lt.viewport(size.w, size.h, size.mobile)
			lt.do("opening the answer link", chromedp.Navigate(links.Answer(wire.ParseSessionID(session), id, time.Now().Add(time.Hour))))
			if got := lt.newestPanel(); got != id {
				t.Fatalf("the link's page shows %q, want %q", got, id)
			}
			waitFor[bool](lt, "the title", `document.title.startsWith("(1)")`)
			got := eval[map[string]any](lt, `(() => {
				const c = `+contrastOfJS+`;
				const out = {};
				for (const b of document.querySelectorAll('[data-testid="panel"] button')) {
					const r = b.getBoundingClientRect();
					if (r.width === 0 && b.dataset.testid !== "decline" && b.dataset.testid !== "submit") continue; // not shown in a pending set
					out[b.dataset.testid] = {contrast: c(b), shown: r.width > 0 && r.height > 0 && r.bottom <= innerHeight && r.right <= innerWidth};
				}
				return {buttons: out, title: document.title, notify: !!document.querySelector('[data-testid="notify-me"]')};
			})()`)
			for name, b := range got["buttons"].(map[string]any) {
				b := b.(map[string]any)
				if b["contrast"].(float64) < 4.5 || b["shown"] != true {
					t.Errorf("the panel's %s button: contrast %.2f, in view %v", name, b["contrast"], b["shown"])
				}
			}
			for _, name := range []string{"decline", "submit"} {
				if _, ok := got["buttons"].(map[string]any)[name]; !ok {
					t.Errorf("the link's page has no %s button", name)
				}
			}
			if got["title"] != "(1) Waiting for you · askuser" {
				t.Errorf("the page's title is %q", got["title"])
			}
			if got["notify"] == true {
				t.Error(`the link's page offers "Notify me"`)
			}
			if size.mobile {
				lt.pageScreenshot("link-phone")
			}

			lt.do("answering", chromedp.Click(option(id, 0, 1)), chromedp.Click(sel(id, `[data-testid="submit"]`)))
			done := waitFor[map[string]any](lt, "the page's last word", `(() => {
				const r = `+rectJS+`;
				const d = document.querySelector('[data-testid="link-done"]');
				if (!d || d.hidden) return false;
				const h = d.querySelector("h1"), p = d.querySelector("p");
				return {heading: h.hidden ? "" : h.textContent, headingBox: r(h), rest: p.textContent, restBox: r(p), column: r(document.querySelector("main")),
					title: document.title, notify: !!document.querySelector('[data-testid="notify-me"]'), contrast: `+contrastOfJS+`(h)};
			})()`)
			hb, pb, col := done["headingBox"].(map[string]any), done["restBox"].(map[string]any), done["column"].(map[string]any)
			if done["heading"] != "Answer sent." || hb["height"].(float64) == 0 || hb["bottom"].(float64) > float64(size.h) || done["contrast"].(float64) < 4.5 {
				t.Errorf("after answering, the heading is %q at %v (contrast %.2f)", done["heading"], hb, done["contrast"])
			}
			if done["rest"] != "There is nothing more to do here." || pb["left"].(float64) != col["left"].(float64) || hb["left"].(float64) != col["left"].(float64) {
				t.Errorf("%q is at %v, the page's column at %v", done["rest"], pb, col)
			}
			if done["title"] != "askuser" || done["notify"] == true {
				t.Errorf("after answering: title %q, Notify me offered: %v", done["title"], done["notify"])
			}
			tb.toolResult(id)
		})
	}
}
