package e2e

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestEditProblemsSameInBrowser: the panel's checker words the problems of an edit as
// the server does, line for line: every case of the root's testdata/edits.json, whose
// problems the root's TestEditProblemsAsThePanelWordsThem checks the server gives, is
// typed into an approval card's editor, and the editor shows the very same lines.
func TestEditProblemsSameInBrowser(t *testing.T) {
	b, err := os.ReadFile("../../testdata/edits.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name      string          `json:"name"`
		Schema    json.RawMessage `json:"schema"`
		Arguments json.RawMessage `json:"arguments"`
		Problems  []string        `json:"problems"`
	}
	if err := json.Unmarshal(b, &cases); err != nil || len(cases) == 0 {
		t.Fatalf("testdata/edits.json: %v", err)
	}
	tb := newTab(t)
	tb.open(env.main, newSession())
	got := eval[[][]string](tb, `((cases) => {
		const box = document.createElement("div");
		document.body.appendChild(box);
		const panel = AskUser.createPanel({container: box, autoFocus: false, drafts: false, lang: "en", send: () => true});
		const out = cases.map((c, i) => {
			const id = "edit-" + i;
			panel.handle(AskUser.parse(JSON.stringify({type: "tool_approval", sessionId: 7, data: {requestId: id,
				tool: "some_tool", arguments: {}, decisions: ["approve", "deny", "edit"], digest: "d-" + id, argumentsSchema: c.schema}})));
			const card = box.querySelector('[data-testid="approval"][data-request-id="' + id + '"]');
			card.querySelector('[data-testid="edit"]').click();
			const ed = card.querySelector('[data-testid="edit-input"]');
			ed.value = JSON.stringify(c.arguments);
			ed.dispatchEvent(new Event("input", {bubbles: true}));
			return [...card.querySelectorAll('[data-testid="edit-problems"] li')].map(li => li.textContent);
		});
		panel.destroy();
		box.remove();
		return out;
	})(`+string(b)+`)`)
	if len(got) != len(cases) {
		t.Fatalf("%d results for %d cases", len(got), len(cases))
	}
	for i, c := range cases {
		// The panel lists them as it meets them; the server, sorted by where they are.
		browser, server := slices.Sorted(slices.Values(got[i])), slices.Sorted(slices.Values(c.Problems))
		if !slices.Equal(browser, server) {
			t.Errorf("%s: the panel says %q\nthe server says %q", c.Name, got[i], c.Problems)
		}
	}
}
