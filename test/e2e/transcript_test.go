package e2e

import (
	"fmt"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// wheelEvent is Input.dispatchMouseEvent with its parameters as a map: a wheel event needs
// deltaX, which input.DispatchMouseEventParams leaves out when it is 0.
var wheelEvent = cdp.Command[map[string]any, cdp.Empty]{Method: input.CommandDispatchMouseEvent}

// settle waits until the page has drawn two frames, so that whatever it does when its
// layout changes (its resize observers, its scrolling) has been done.
func (tb *tab) settle() {
	tb.t.Helper()
	tb.do("waiting for two frames", chromedp.Evaluate[chromedp.Void](
		`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))`, chromedp.EvalAwaitPromise))
}

// transcriptView is where the transcript is scrolled, and where its newest entry is
// against the transcript's visible box.
type transcriptView struct {
	Entries      int     `json:"entries"`
	Newest       string  `json:"newest"`
	InView       bool    `json:"inView"`
	EntryTop     float64 `json:"entryTop"`
	EntryBottom  float64 `json:"entryBottom"`
	BoxTop       float64 `json:"boxTop"`
	BoxBottom    float64 `json:"boxBottom"`
	ScrollTop    float64 `json:"scrollTop"`
	ScrollHeight float64 `json:"scrollHeight"`
	ClientHeight float64 `json:"clientHeight"`
}

func (v transcriptView) String() string {
	return fmt.Sprintf("the newest of %d entries (%q) is at %.0f..%.0f, the transcript's box at %.0f..%.0f (%.0f px high, scrolled to %.0f of %.0f)",
		v.Entries, v.Newest, v.EntryTop, v.EntryBottom, v.BoxTop, v.BoxBottom, v.ClientHeight, v.ScrollTop, v.ScrollHeight)
}

func (tb *tab) transcriptView() transcriptView {
	tb.t.Helper()
	return eval[transcriptView](tb, `(() => {
		const tr = document.querySelector("#transcript"), last = tr.lastElementChild;
		const b = tr.getBoundingClientRect(), a = last ? last.getBoundingClientRect() : b;
		return {entries: tr.children.length, newest: last ? last.textContent.slice(0, 60) : "",
			inView: !!last && a.top >= b.top - 1 && a.bottom <= b.bottom + 1,
			entryTop: a.top, entryBottom: a.bottom, boxTop: b.top, boxBottom: b.bottom,
			scrollTop: tr.scrollTop, scrollHeight: tr.scrollHeight, clientHeight: tr.clientHeight};
	})()`)
}

// newestInView checks, once the page has settled, that the transcript's newest entry is
// seen whole.
func (tb *tab) newestInView(what string) {
	tb.t.Helper()
	tb.settle()
	if v := tb.transcriptView(); !v.InView {
		tb.t.Errorf("%s: %v", what, v)
	}
}

// wheel turns the mouse wheel over the middle of the transcript, as a person scrolling it
// does (deltaY < 0 scrolls up), and waits until it is scrolled to its top (up) or its
// bottom (down).
func (tb *tab) wheel(deltaY float64) {
	tb.t.Helper()
	c := eval[map[string]float64](tb, `(() => { const r = document.querySelector("#transcript").getBoundingClientRect();
		return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`)
	if _, err := chromedp.Call(tb.ctx, wheelEvent, map[string]any{
		"type": input.DispatchMouseEventTypeMouseWheel, "x": c["x"], "y": c["y"], "deltaX": 0, "deltaY": deltaY,
	}); err != nil {
		tb.t.Fatalf("turning the mouse wheel: %v", err)
	}
	end := `tr.scrollTop <= 1`
	if deltaY > 0 {
		end = `tr.scrollHeight - tr.scrollTop - tr.clientHeight <= 1`
	}
	waitFor[bool](tb, "the wheel's scrolling", `(() => { const tr = document.querySelector("#transcript"); return `+end+`; })()`)
}

// nextQuestion waits until a panel other than after's is shown and the transcript's newest
// entry is the waiting tool card of its call, and returns its request id.
func (tb *tab) nextQuestion(after string) string {
	tb.t.Helper()
	return waitFor[string](tb, "the next question and its tool card", `(() => {
		const ps = [...document.querySelectorAll('[data-testid="panel"]')].filter(p => p.dataset.requestId !== `+js(after)+`);
		const id = ps.length ? ps[ps.length - 1].dataset.requestId : "";
		const last = document.querySelector("#transcript").lastElementChild;
		return id !== "" && last && last.dataset.toolCallId === id && id;
	})()`)
}

// TestTranscriptFollowsNewMessages: with a question panel taking room, a queued message,
// the cancel confirmation and the tool result each come into view; but a person who has
// scrolled up to read is left where they are.
func TestTranscriptFollowsNewMessages(t *testing.T) {
	session := newSession()
	tb := newTab(t)
	tb.viewport(1280, 800, false)
	tb.open(env.main, session)
	tb.say("/help")
	tb.say("/several")
	id := tb.newestPanel()

	lastSeen := func(what string) {
		t.Helper()
		expr := `(() => {
			const tr = document.querySelector("#transcript");
			const last = tr.lastElementChild;
			const a = last.getBoundingClientRect(), b = tr.getBoundingClientRect();
			return a.bottom <= b.bottom + 1 && a.top >= b.top - 1 && tr.scrollHeight > tr.clientHeight;
		})()`
		if _, err := run(tb, chromedp.Poll[bool](expr)); err != nil {
			t.Fatalf("%s is not in view: %v", what, eval[string](tb, `document.querySelector("#transcript").lastElementChild.textContent`))
		}
	}
	waitFor[bool](tb, "the tool card", `!!document.querySelector("#transcript .tool")`)
	lastSeen("the tool call")
	tb.say("one more thing")
	waitFor[bool](tb, "the queued message", `(() => { const l = document.querySelector("#transcript").lastElementChild; return l.classList.contains("user") && !!l.querySelector(".queued"); })()`)
	lastSeen("the queued message")
	tb.do("cancelling", chromedp.Click(chromedp.CSS("#cancel")))
	waitFor[bool](tb, "the cancel confirmation", `[...document.querySelectorAll("#transcript .agent .text")].some(e => e.textContent === "Run cancelled.")`)
	waitFor[bool](tb, "the tool result", `!!document.querySelector("#transcript .tool[data-outcome=cancelled]")`)
	lastSeen("the cancel confirmation")
	if !eval[bool](tb, `(() => { const c = document.querySelector("#transcript .tool[data-outcome=cancelled]").getBoundingClientRect();
		const b = document.querySelector("#transcript").getBoundingClientRect(); return c.top >= b.top - 1 && c.bottom <= b.bottom + 1; })()`) {
		t.Error("the tool result is out of view")
	}
	tb.panelGone(id)

	// Scrolled up to read: another device's message does not pull the transcript down.
	tb.wheel(-20000)
	b := newTab(t)
	b.open(env.main, session)
	b.say("/single")
	waitFor[bool](tb, "the other device's message", `[...document.querySelectorAll("#transcript .user .text")].filter(e => e.textContent === "/single").length === 1`)
	tb.newestPanel()
	if top := eval[float64](tb, `document.querySelector("#transcript").scrollTop`); top > 1 {
		t.Errorf("the transcript scrolled to %v px while the person read at the top", top)
	}
}

// TestTranscriptFollowsTheTour: at 1280×800, through the tour, where each answer takes
// its panel away (the transcript grows) and the next question's panel comes (it shrinks
// again), the transcript stays on its newest entry; a person who has scrolled up is left
// where they are, and following resumes once they scroll back down.
func TestTranscriptFollowsTheTour(t *testing.T) {
	tb := newTab(t)
	tb.viewport(1280, 800, false)
	tb.open(env.main, newSession())
	tb.say("/help") // a transcript that scrolls well past the room a question takes
	tb.say("/help")
	tb.say("start")
	single := tb.nextQuestion("")
	tb.newestInView("the first question's tool card")

	tb.do("answering the first question", chromedp.Click(option(single, 0, 1)), chromedp.Click(sel(single, `[data-testid="submit"]`)))
	multi := tb.nextQuestion(single)
	tb.newestInView("after the first answer, the second question's tool card")

	// Scrolled up to read: the next entries leave the transcript where the person put it.
	tb.wheel(-20000)
	tb.do("answering the second question", chromedp.Click(option(multi, 0, 0)), chromedp.Click(sel(multi, `[data-testid="submit"]`)))
	preview := tb.nextQuestion(multi)
	tb.settle()
	if v := tb.transcriptView(); v.ScrollTop > 1 {
		t.Errorf("scrolled up to read, the person was moved: %v", v)
	}

	// Back at the bottom, the transcript follows again.
	tb.wheel(20000)
	tb.do("answering the third question", chromedp.Click(option(preview, 0, 2)), chromedp.Click(sel(preview, `[data-testid="submit"]`)))
	several := tb.nextQuestion(preview)
	tb.newestInView("after scrolling back down and answering, the last question's tool card")

	tb.do("answering the last questions", chromedp.Click(option(several, 0, 0)), chromedp.Click(option(several, 1, 0)),
		chromedp.Click(option(several, 2, 0)))
	if st := tb.state(several); !st.Submit {
		t.Fatalf("the last questions are not all answered after choosing one option of each: %+v", st)
	}
	tb.do("submitting", chromedp.Click(sel(several, `[data-testid="submit"]`)))
	if got, want := tb.toolResult(several), content(t,
		askuser.Answer{Question: "Which database should store the orders?", SelectedLabels: []string{"PostgreSQL (Recommended)"}},
		askuser.Answer{Question: "Which kinds of tests should I write?", SelectedLabels: []string{"Unit tests"}},
		askuser.Answer{Question: "Where will it be deployed?", SelectedLabels: []string{"Kubernetes"}},
	); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
	// The tour's approval: its tool card comes into view with its card, and goes on
	// following once it is approved.
	approval := tb.newestApproval("")
	waitFor[bool](tb, "the approval's tool card", `(() => { const l = document.querySelector("#transcript").lastElementChild;
		return l.dataset.toolCallId === `+js(approval)+`; })()`)
	tb.newestInView("the approval's tool card")
	tb.do("approving", chromedp.Click(asel(approval, `[data-testid="approve"]`)))
	tb.toolResult(approval)
	waitFor[bool](tb, "the plan", `(() => { const l = document.querySelector("#transcript").lastElementChild;
		return l.classList.contains("agent") && l.textContent.includes("Here is the plan"); })()`)
	tb.newestInView("the plan")
}

// TestEmptyTranscriptSaysWhatToDo: a new session's transcript is not a blank page: one
// line says what to do and what will happen, in the page's language, and it goes with the
// transcript's first entry (also after a reload, which replays the history).
func TestEmptyTranscriptSaysWhatToDo(t *testing.T) {
	for _, c := range []struct{ lang, want string }{
		{"en", "Send any message to start: the agent will ask you a few questions on this page, and your answers go back to it."},
		{"zh", "发送任意消息即可开始：Agent 会在本页向你提几个问题，你的回答会发回给它。"},
	} {
		t.Run(c.lang, func(t *testing.T) {
			tb := newTab(t)
			tb.viewport(1280, 800, false)
			session := newSession()
			tb.open(env.main, session+"&lang="+c.lang)
			shown := `(() => { const e = document.querySelector("#empty"), r = e.getBoundingClientRect();
				return !e.hidden && r.height > 0 && r.top >= 0 && r.bottom <= document.querySelector("#composer").getBoundingClientRect().top; })()`
			if !eval[bool](tb, shown) {
				t.Fatal("a new session's empty transcript shows no line saying what to do")
			}
			if got := eval[string](tb, `document.querySelector("#empty").textContent`); got != c.want {
				t.Errorf("the empty transcript says %q, want %q", got, c.want)
			}
			tb.say("/help")
			waitFor[bool](tb, "the first entry", `document.querySelector("#transcript").children.length > 0`)
			if eval[bool](tb, shown) {
				t.Error("the line is still shown with an entry in the transcript")
			}
			tb.open(env.main, session+"&lang="+c.lang)
			waitFor[bool](tb, "the history", `document.querySelector("#transcript").children.length > 0`)
			if eval[bool](tb, shown) {
				t.Error("after a reload the line is shown with entries in the transcript")
			}
		})
	}
}
