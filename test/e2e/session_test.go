package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// withoutSourceText makes a page a browser without JSON.rawJSON and without the source text
// of JSON.parse, so that the panel's fallbacks (its own scan of the message for the raw
// sessionId, its own writing of the envelope) are what runs.
const withoutSourceText = `(() => {
	delete JSON.rawJSON;
	const parse = JSON.parse;
	JSON.parse = function (text, reviver) {
		return parse(text, typeof reviver === "function" ? function (k, v) { return reviver.call(this, k, v); } : reviver);
	};
})();`

// TestLargeSessionIDsRoundTrip: a numeric session beyond 2^53, which a JavaScript number
// cannot hold, is echoed by the panel digit for digit, as a JSON number, and the page's own
// events act in that session too. Once with the browser's JSON source text, once with the
// panel's fallbacks.
func TestLargeSessionIDsRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name, session, init string
	}{
		{"source text", "1234567890123456789", ""},
		{"fallback", "-9007199254740993", withoutSourceText},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := newTab(t)
			if c.init != "" {
				tb.beforeLoad(c.init)
			}
			f := tb.recordFrames()
			tb.open(env.main, c.session)
			if c.init != "" {
				fallback := eval[bool](tb, `(() => {
					let ctx = "unset";
					JSON.parse('{"a":1}', function (k, v, context) { if (k === "a") ctx = context; return v; });
					return JSON.rawJSON === undefined && ctx === undefined;
				})()`)
				if !fallback {
					t.Fatal("the page still has JSON source text")
				}
			}
			// The id is one that JavaScript numbers round.
			if eval[bool](tb, `String(Number(`+js(c.session)+`)) === `+js(c.session)) {
				t.Fatalf("%s fits a JavaScript number; the test needs one that does not", c.session)
			}

			tb.say("/single")
			id := tb.newestPanel()
			ask := f.find(t, false, `"type":"ask_user_questions"`, id)
			if !strings.Contains(ask, `"sessionId":`+c.session+`,`) {
				t.Fatalf("the server did not send the session as the number %s: %s", c.session, ask)
			}
			if raw := eval[string](tb, `window.demo.events.find(e => e.type === "ask_user_questions").rawSessionId`); raw != c.session {
				t.Errorf("rawSessionId = %q, want %q", raw, c.session)
			}
			tb.do("answering", chromedp.Click(option(id, 0, 1)), chromedp.Click(sel(id, `[data-testid="submit"]`)))
			if got, want := tb.toolResult(id), `{"answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["React"],"customInput":null}]}`; got != want {
				t.Fatalf("tool result = %s\nwant          %s", got, want)
			}
			tb.panelGone(id)
			// On the wire: the answer carried the session's digits verbatim, as a number.
			result := f.find(t, true, `"type":"ask_user_questions_result"`)
			if want := `{"type":"ask_user_questions_result","sessionId":` + c.session + `,"data":{"requestId":"` + id + `",`; !strings.HasPrefix(result, want) {
				t.Fatalf("the panel sent %s\nwant it to start %s", result, want)
			}

			// The page's own events name no session: the hub takes them for the
			// connection's one session. A message queued while a question waits, and a
			// cancel, act in that session.
			if m := f.find(t, true, `"type":"user_message"`); m != `{"type":"user_message","data":{"text":"/single"}}` {
				t.Errorf("the page sent %s", m)
			}
			tb.say("/single")
			id2 := tb.newestPanel()
			tb.say("while you wait")
			echo := f.find(t, false, `"type":"user_message"`, `"text":"while you wait"`, `"queued":true`)
			if !strings.Contains(echo, `"sessionId":`+c.session+`,`) {
				t.Errorf("the queued message came back for another session: %s", echo)
			}
			tb.do("cancelling", chromedp.Click(chromedp.CSS("#cancel")))
			if got := tb.toolResult(id2); got != `{"error": "Session cancelled"}` {
				t.Fatalf("after cancel the tool result is %s", got)
			}
			f.find(t, false, `"type":"agent_message"`, `Cancelling; 1 queued message(s) dropped.`, `"sessionId":`+c.session+`,`)
			if n := eval[int](tb, `window.demo.events.filter(e => e.type === "ask_user_questions_error").length`); n != 0 {
				t.Errorf("the page was refused %d times: %v", n, eval[any](tb, `window.demo.events.filter(e => e.type === "ask_user_questions_error").map(e => e.data)`))
			}
		})
	}
}

// TestParseAndStringify checks AskUser.parse and AskUser.stringify on their own: the raw
// sessionId is the top-level one, whatever the data holds before or around it, and the
// panel writes it back verbatim: a large number exactly, -0 as -0, a string as a string.
func TestParseAndStringify(t *testing.T) {
	for _, c := range []struct{ name, init string }{{"source text", ""}, {"fallback", withoutSourceText}} {
		t.Run(c.name, func(t *testing.T) {
			tb := newTab(t)
			if c.init != "" {
				tb.beforeLoad(c.init)
			}
			tb.open(env.main, newSession())
			got := eval[map[string]any](tb, `(() => {
				// Model text and nested objects that look like a sessionId come first.
				const ev = AskUser.parse('{"type":"t","data":{"sessionId":5,"text":"\\",\\"sessionId\\":7,","list":[{"sessionId":8}],"x":"}"},"sessionId" : 12345678901234567890123}');
				return {
					raw: ev.rawSessionId,
					enumerable: Object.keys(ev).includes("rawSessionId"),
					dataSession: ev.data.sessionId,
					text: ev.data.text,
					none: AskUser.parse('{"type":"t","sessionId":"12345678901234567890123"}').rawSessionId === undefined,
					plain: AskUser.stringify({type: "x", sessionId: "s", data: {a: 1}}),
				};
			})()`)
			want := map[string]any{
				"raw":         "12345678901234567890123",
				"enumerable":  false,
				"dataSession": float64(5),
				"text":        `","sessionId":7,`,
				"none":        true,
				"plain":       `{"type":"x","sessionId":"s","data":{"a":1}}`,
			}
			for k, v := range want {
				if mustJSON(got[k]) != mustJSON(v) {
					t.Errorf("%s = %s, want %s", k, mustJSON(got[k]), mustJSON(v))
				}
			}
			sent := eval[[]string](tb, `(() => {
				const out = [];
				const box = document.createElement("div");
				document.body.appendChild(box);
				const panel = AskUser.createPanel({container: box, autoFocus: false, drafts: false,
					send: (e) => { out.push(AskUser.stringify(e)); return true; }});
				const q = [{question: "Q?", header: "H", multiSelect: false, options: [{label: "A", description: ""}, {label: "B", description: ""}]}];
				for (const [sid, id] of [["12345678901234567890123", "a"], ["-0", "b"], ['"123"', "c"]]) {
					panel.handle(AskUser.parse('{"type":"ask_user_questions","sessionId":' + sid + ',"data":{"requestId":"' + id + '","questions":' + JSON.stringify(q) + '}}'));
					box.querySelector('[data-request-id="' + id + '"] [data-testid="decline"]').click();
				}
				panel.destroy();
				box.remove();
				return out;
			})()`)
			wantSent := []string{
				`{"type":"ask_user_questions_result","sessionId":12345678901234567890123,"data":{"requestId":"a","declined":true}}`,
				`{"type":"ask_user_questions_result","sessionId":-0,"data":{"requestId":"b","declined":true}}`,
				`{"type":"ask_user_questions_result","sessionId":"123","data":{"requestId":"c","declined":true}}`,
			}
			if mustJSON(sent) != mustJSON(wantSent) {
				t.Errorf("the panel sent\n%s\nwant\n%s", strings.Join(sent, "\n"), strings.Join(wantSent, "\n"))
			}
		})
	}
}
