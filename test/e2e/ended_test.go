package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askuser-go/askuser"
	"github.com/chromedp/chromedp"
)

// note is the read-only note a question leaves where it ended.
type note struct {
	Outcome string `json:"outcome"`
	Text    string `json:"text"`
	Typed   string `json:"typed"`
	Mine    string `json:"mine"`
	Dir     string `json:"dir"`
}

// waitNote waits for the note of requestID whose text has want, and returns it.
func (tb *tab) waitNote(requestID, want string) note {
	tb.t.Helper()
	return waitFor[note](tb, "the note "+want, `(() => {
		const n = document.querySelector('[data-testid="ended"][data-request-id=`+js(requestID)+`]');
		const t = (s) => { const e = n && n.querySelector(s); return e ? e.textContent : ""; };
		return n && t('[data-testid="ended-text"]').includes(`+js(want)+`) && {outcome: n.dataset.outcome,
			text: t('[data-testid="ended-text"]'), typed: t('[data-testid="ended-typed"]'), mine: t('[data-testid="ended-mine"]'),
			dir: (n.querySelector(".askuser-note-typed") || n.querySelector(".askuser-note-choice") || {}).dir || ""};
	})()`)
}

// TestAnotherDeviceAnswersWhileTyping: the panel of a device that did not answer does not
// just vanish: it leaves a note saying the question was answered elsewhere and with what,
// and keeps what the person was typing. The device that answered gets no note.
func TestAnotherDeviceAnswersWhileTyping(t *testing.T) {
	session := newSession()
	a := newTab(t)
	b := newTab(t)
	a.open(env.main, session)
	b.open(env.main, session)
	a.say("/single")
	id := a.newestPanel()
	b.newestPanel()
	a.do("typing in Other", chromedp.SendKeys(other(id, 0), "Vue, but with TSX"))
	b.do("answering in B", chromedp.Click(option(id, 0, 2)), chromedp.Click(sel(id, `[data-testid="submit"]`)))
	a.panelGone(id)
	n := a.waitNote(id, "Answered on another device: Svelte")
	if n.Outcome != "answered" || n.Typed != "What you had written: Vue, but with TSX" || n.Dir != "auto" {
		t.Errorf("note = %+v", n)
	}
	a.screenshot("ended")
	b.panelGone(id)
	if got := eval[int](b, `document.querySelectorAll('[data-testid="ended"]').length`); got != 0 {
		t.Errorf("the device that answered shows %d notes", got)
	}
	a.do("dismissing the note", chromedp.Click(chromedp.CSS(`[data-testid="ended"] [data-testid="dismiss"]`)))
	waitFor[bool](a, "the note to go", `!document.querySelector('[data-testid="ended"]')`)
}

// TestLostRace: a device answers a question another device has already answered, before it
// hears so. The server refuses its answer, and its panel says that another device was
// first, with both answers, instead of vanishing as if its own had been taken.
func TestLostRace(t *testing.T) {
	session := newSession()
	a := newTab(t)
	// Lets the test hold back what tab A's socket receives, as a slow network would.
	a.beforeLoad(`(() => {
		const d = Object.getOwnPropertyDescriptor(WebSocket.prototype, "onmessage");
		window.__held = null;
		window.__hold = () => { window.__held = []; };
		window.__release = () => { const h = window.__held; window.__held = null; h.forEach(([fn, m]) => fn(m)); };
		Object.defineProperty(WebSocket.prototype, "onmessage", {
			configurable: true,
			get() { return this.__fn || null; },
			set(fn) {
				this.__fn = fn;
				d.set.call(this, (m) => { if (window.__held) window.__held.push([fn, m]); else fn(m); });
			},
		});
	})();`)
	b := newTab(t)
	a.open(env.main, session)
	b.open(env.main, session)
	a.say("/single")
	id := a.newestPanel()
	b.newestPanel()
	a.do("holding back A's messages", chromedp.Evaluate[chromedp.Void](`window.__hold()`))
	b.do("answering in B", chromedp.Click(option(id, 0, 2)), chromedp.Click(sel(id, `[data-testid="submit"]`)))
	b.toolResult(id)
	a.do("answering in A", chromedp.Click(option(id, 0, 1)), chromedp.Click(sel(id, `[data-testid="submit"]`)))
	waitFor[bool](a, "the server's refusal to reach A", `window.__held.some(([s, m]) => m.data.includes('"not_pending"'))`)
	a.do("letting the messages through", chromedp.Evaluate[chromedp.Void](`window.__release()`))
	a.panelGone(id)
	n := a.waitNote(id, "Another device answered first; your answer was not used: Svelte")
	if n.Mine != "Your answer: React" {
		t.Errorf("note = %+v", n)
	}
}

// TestEndedPanelsInOrder drives the panel alone through each way a question can end, in
// each order the events can come, and reads what it leaves.
func TestEndedPanelsInOrder(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	got := eval[map[string]string](tb, `(() => {
		const box = document.createElement("div");
		document.body.appendChild(box);
		const panel = AskUser.createPanel({container: box, autoFocus: false, drafts: false, send: () => true, lang: "en"});
		const q = {question: "Q?", header: "H", multiSelect: false, options: [{label: "A", description: ""}, {label: "B", description: ""}]};
		const ask = (id) => panel.handle({type: "ask_user_questions", sessionId: 1, data: {requestId: id, questions: [q]}});
		const end = (id, outcome) => panel.handle({type: "ask_user_questions_resolved", sessionId: 1, data: {requestId: id, outcome}});
		const refuse = (id) => panel.handle({type: "ask_user_questions_error", sessionId: 1, data: {requestId: id, code: "not_pending", message: "over"}});
		const pick = (id) => { box.querySelector('[data-request-id="' + id + '"] [data-testid="option-input"]').click(); box.querySelector('[data-request-id="' + id + '"] [data-testid="submit"]').click(); };
		const text = (id) => { const n = box.querySelector('[data-testid="ended"][data-request-id="' + id + '"]'); return n ? n.textContent : "(none)"; };
		const out = {};
		ask("own"); pick("own"); end("own", "answered"); out.own = text("own");
		ask("elsewhere"); end("elsewhere", "answered"); panel.setAnswers("elsewhere", [{question: "Q?", selectedLabels: ["B"], customInput: null}]); out.elsewhere = text("elsewhere");
		ask("lost1"); pick("lost1"); refuse("lost1"); end("lost1", "answered"); panel.setAnswers("lost1", [{question: "Q?", selectedLabels: ["B"], customInput: null}]); out.refusedFirst = text("lost1");
		ask("lost2"); pick("lost2"); end("lost2", "answered"); panel.setAnswers("lost2", [{question: "Q?", selectedLabels: ["B"], customInput: "and more"}]); refuse("lost2"); out.endedFirst = text("lost2");
		ask("t"); pick("t"); end("t", "timeout"); out.answerLostToTimeout = text("t");
		ask("c"); end("c", "cancelled"); out.cancelled = text("c");
		ask("d"); end("d", "declined"); out.declined = text("d");
		ask("x"); end("x", "something-new"); out.unknown = text("x");
		out.notes = String(box.querySelectorAll('[data-testid="ended"]').length);
		panel.destroy();
		box.remove();
		return out;
	})()`)
	want := map[string]string{
		"own":                 "(none)",
		"elsewhere":           "Answered on another device: BDismiss",
		"refusedFirst":        "Another device answered first; your answer was not used: BYour answer: ADismiss",
		"endedFirst":          "Another device answered first; your answer was not used: B, and moreYour answer: ADismiss",
		"answerLostToTimeout": "Timed out: the agent went on without an answer.Dismiss",
		"cancelled":           "The question was cancelled.Dismiss",
		"declined":            "Declined on another device.Dismiss",
		"unknown":             "This question has ended.Dismiss",
		"notes":               "3",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestReloadKeepsTheDraft: what the person chose and typed survives a reload of the tab
// (sessionStorage, per session and request id), belongs to that tab alone, and is gone once answered.
func TestReloadKeepsTheDraft(t *testing.T) {
	session := newSession()
	tb := newTab(t)
	tb.open(env.main, session)
	tb.say("/several")
	id := tb.newestPanel()
	tb.do("choosing and typing",
		chromedp.Click(option(id, 0, 1)),
		chromedp.Click(option(id, 1, 0)), chromedp.Click(option(id, 1, 2)),
		chromedp.SendKeys(other(id, 1), "Fuzz"),
		chromedp.SendKeys(other(id, 2), "On-prem"))
	// Kept by session (a numeric one: "n" and its digits) and request id.
	stored := eval[string](tb, `sessionStorage.getItem("askuser:draft:" + JSON.stringify(["n" + `+js(session)+`, `+js(id)+`])) || ""`)
	var draft struct {
		Q []struct {
			Labels []string `json:"labels"`
			Other  string   `json:"other"`
		} `json:"q"`
	}
	if err := json.Unmarshal([]byte(stored), &draft); err != nil || len(draft.Q) != 3 || draft.Q[1].Other != "Fuzz" ||
		mustJSON(draft.Q[1].Labels) != `["Unit tests","Visual regression"]` {
		t.Fatalf("sessionStorage holds %q (%v)", stored, err)
	}

	tb.do("reloading", chromedp.Reload())
	waitFor[bool](tb, "the connection", `document.querySelector("#conn").dataset.state === "open"`)
	if again := tb.newestPanel(); again != id {
		t.Fatalf("after reload the panel is %s, want %s", again, id)
	}
	st := tb.state(id)
	if mustJSON(st.Checked) != `[[false,true],[true,false,true],[false,false,false]]` || mustJSON(st.Other) != `["","Fuzz","On-prem"]` || !st.Submit {
		t.Fatalf("after reload: %+v", st)
	}
	if p := eval[string](tb, `document.querySelector('[data-testid="progress"]').textContent`); p != "3 of 3 answered" {
		t.Errorf("progress after reload = %q", p)
	}

	// Another tab of the session has drafts of its own: none.
	other := newTab(t)
	other.open(env.main, session)
	other.newestPanel()
	if st := other.state(id); strings.Contains(mustJSON(st.Checked), "true") || mustJSON(st.Other) != `["","",""]` {
		t.Errorf("another tab shows the draft: %+v", st)
	}

	tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
	want := content(t,
		askuser.Answer{Question: "Which database should store the orders?", SelectedLabels: []string{"SQLite"}},
		askuser.Answer{Question: "Which kinds of tests should I write?", SelectedLabels: []string{"Unit tests", "Visual regression"}, CustomInput: ptr("Fuzz")},
		askuser.Answer{Question: "Where will it be deployed?", SelectedLabels: []string{}, CustomInput: ptr("On-prem")},
	)
	if got := tb.toolResult(id); got != want {
		t.Fatalf("tool result = %s\nwant          %s", got, want)
	}
	tb.panelGone(id)
	if n := eval[int](tb, `Object.keys(sessionStorage).filter(k => k.startsWith("askuser:draft:")).length`); n != 0 {
		t.Errorf("%d drafts left after answering", n)
	}
}
