package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/chromedp"
)

// axNode is a node of the browser's accessibility tree: its role and name.
type axNode struct {
	Role, Name, Description string
	Live                    string
}

// axTree returns the tab's accessibility tree as Chromium computes it for assistive
// technology, the nodes that are not ignored.
func (tb *tab) axTree() []axNode {
	tb.t.Helper()
	res, err := chromedp.Call(tb.ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		tb.t.Fatalf("reading the accessibility tree: %v", err)
	}
	str := func(v *accessibility.Value) string {
		if v == nil || len(v.Value) == 0 {
			return ""
		}
		var s string
		if json.Unmarshal(v.Value, &s) != nil {
			return string(v.Value)
		}
		return s
	}
	var out []axNode
	for _, n := range res.Nodes {
		if n.Ignored {
			continue
		}
		a := axNode{Role: str(n.Role), Name: str(n.Name), Description: str(n.Description)}
		for _, p := range n.Properties {
			if p.Name == accessibility.PropertyNameLive {
				a.Live = str(p.Value)
			}
		}
		out = append(out, a)
	}
	return out
}

// TestApprovalAccessibility: to assistive technology the card is a region named for the
// tool and described by the host's description, its arguments a named region, its
// countdown a timer, every decision a named button, the always button described by what
// it covers, and the approval is announced when it comes and when it ends.
func TestApprovalAccessibility(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say(`/tool delete_branch {"name":"feature/a11y"}`)
	id := tb.newestApproval("")
	waitFor[bool](tb, "the announcement", `document.querySelector('[data-testid="announcer"]').textContent === "The agent asks to run delete_branch. Approve or deny it."`)
	if live := eval[string](tb, `document.querySelector('[data-testid="announcer"]').getAttribute("aria-live")`); live != "polite" {
		t.Errorf("the announcer is aria-live=%q", live)
	}
	has := func(tree []axNode, role, name string) *axNode {
		for i := range tree {
			if tree[i].Role == role && tree[i].Name == name {
				return &tree[i]
			}
		}
		return nil
	}
	tree := tb.axTree()
	card := has(tree, "region", "Approval needed: delete_branch")
	if card == nil || card.Description != "Deletes a git branch, locally and on the remote" {
		t.Errorf("the card in the accessibility tree: %+v", card)
	}
	if has(tree, "region", "Arguments of delete_branch") == nil || !hasRole(tree, "timer") {
		t.Error("no arguments region or no timer")
	}
	for _, name := range []string{"Approve", "Deny", "Edit"} {
		if has(tree, "button", name) == nil {
			t.Errorf("no button named %q", name)
		}
	}
	if b := has(tree, "button", "Always allow for this session"); b == nil || b.Description != "“Always allow” covers every call of delete_branch in this session." {
		t.Errorf("the always button: %+v", b)
	}
	// The reason box and the editor are labelled.
	tb.do("opening the denial", chromedp.Click(asel(id, `[data-testid="deny"]`)))
	tree = tb.axTree()
	if has(tree, "textbox", "Reason (optional; the agent reads it)") == nil || has(tree, "group", "Or pick a reason:") == nil {
		t.Error("the reason box or the presets are not labelled")
	}
	tb.do("back", chromedp.Click(asel(id, `[data-testid="deny-cancel"]`)))
	tb.do("editing", chromedp.Click(asel(id, `[data-testid="edit"]`)))
	tb.typeInto(asel(id, `[data-testid="edit-input"]`), `{}`)
	tree = tb.axTree()
	if e := has(tree, "textbox", "The arguments to run the tool with (JSON)"); e == nil || !strings.Contains(e.Description, "name: is required") {
		t.Errorf("the editor is not labelled, or not described by its problems: %+v", e)
	}
	tb.typeInto(asel(id, `[data-testid="edit-input"]`), `{"name": "feature/a11y"}`)
	tb.do("back to the decisions", chromedp.Click(asel(id, `[data-testid="edit-cancel"]`)), chromedp.Click(asel(id, `[data-testid="approve"]`)))
	waitFor[bool](tb, "the end announced", `document.querySelector('[data-testid="announcer"]').textContent === "Approved."`)
}

func hasRole(tree []axNode, role string) bool {
	for _, n := range tree {
		if n.Role == role {
			return true
		}
	}
	return false
}

// TestApprovalContrast: in light and in dark mode, every text of a card, with its forms
// open and problems shown, and of the note it leaves, has a contrast of at least 4.5:1.
func TestApprovalContrast(t *testing.T) {
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			session := newSession()
			tb := newTab(t)
			tb.colorScheme(scheme)
			tb.open(env.main, session)
			check := func(when string) { tb.checkContrast(scheme, when) }
			tb.say(`/tool delete_branch {"name":"feature/contrast","force":true,"n":1,"list":[null,false]}`)
			id := tb.newestApproval("")
			if dark := eval[string](tb, `getComputedStyle(`+cardJS(id)+`).backgroundColor`); (scheme == "dark") != (dark == "rgb(22, 27, 34)") {
				t.Fatalf("%s mode: the card's background is %s", scheme, dark)
			}
			check("pending")
			if scheme == "dark" {
				tb.screenshot("approval-dark")
			}
			tb.do("opening the denial", chromedp.Click(asel(id, `[data-testid="deny"]`)), chromedp.Click(asel(id, `[data-testid="deny-preset"]`)))
			check("denying, a preset picked")
			tb.do("back", chromedp.Click(asel(id, `[data-testid="deny-cancel"]`)), chromedp.Click(asel(id, `[data-testid="edit"]`)))
			check("editing, with problems")
			tb.typeInto(asel(id, `[data-testid="edit-input"]`), `{"name": "ok"}`)
			check("editing, valid")
			other := newTab(t)
			other.open(env.main, session)
			other.newestApproval("")
			other.do("deciding elsewhere", chromedp.Click(asel(id, `[data-testid="approve"]`)))
			tb.approvalNote(id, "Approved on another device.")
			check("the note")
		})
	}
}

// TestApprovalOnAPhone: at 390×844 on a touch screen, a question and an approval fit the
// bottom sheet's width, the card can be scrolled into the sheet's view whole, every
// control of it is at least 44 px tall, and its fields have 16 px text.
func TestApprovalOnAPhone(t *testing.T) {
	tb := newTab(t)
	tb.viewport(390, 844, true)
	tb.open(env.main, newSession())
	tb.say("/parallel")
	tb.newestPanel()
	id := tb.newestApproval("")
	small := func(when string) {
		t.Helper()
		if s := tb.pageSize(); s.ScrollW > s.InnerW || s.ScrollH > s.InnerH {
			t.Fatalf("%s: the page is %v×%v on a %v×%v screen", when, s.ScrollW, s.ScrollH, s.InnerW, s.InnerH)
		}
		got := eval[map[string]any](tb, `(() => {
			const c = `+cardJS(id)+`, q = document.querySelector("#questions");
			c.scrollIntoView({block: "end"});
			const r = c.getBoundingClientRect(), b = q.getBoundingClientRect();
			const out = [];
			for (const e of c.querySelectorAll('button, input, textarea, [tabindex="0"]')) {
				const er = e.getBoundingClientRect();
				if (er.width === 0 || er.height === 0) continue;
				if (e.tagName !== "DIV" && er.height < 43.5) out.push(e.dataset.testid + " is " + er.height.toFixed(1) + " px tall");
				if ((e.tagName === "INPUT" || e.tagName === "TEXTAREA") && parseFloat(getComputedStyle(e).fontSize) < 16) out.push(e.dataset.testid + " has small text");
				if (er.right > innerWidth + 0.5 || er.left < -0.5) out.push(e.dataset.testid + " sticks out sideways");
			}
			// What of the sheet a card scrolled into view can take, its scroll margins left
			// out: a card taller than that cannot be seen whole, only scrolled.
			const cs = getComputedStyle(c), inner = b.height - parseFloat(cs.scrollMarginTop) - parseFloat(cs.scrollMarginBottom);
			return {small: out, whole: r.height <= inner ? r.top >= b.top - 1 && r.bottom <= b.bottom + 1 : q.scrollHeight > q.clientHeight,
				right: r.right, detail: [r.top, r.bottom, b.top, b.bottom].map(Math.round).join(",")};
		})()`)
		if len(got["small"].([]any)) > 0 {
			t.Errorf("%s: %v", when, got["small"])
		}
		if got["whole"] != true || got["right"].(float64) > 390.5 {
			t.Errorf("%s: the card is not seen whole in the sheet: %v", when, got)
		}
	}
	small("deciding")
	tb.pageScreenshot("approval-phone")
	tb.do("opening the denial", chromedp.Click(asel(id, `[data-testid="deny"]`)))
	small("denying")
	tb.do("editing instead", chromedp.Click(asel(id, `[data-testid="deny-cancel"]`)), chromedp.Click(asel(id, `[data-testid="edit"]`)))
	small("editing")
	tb.do("running", chromedp.Click(asel(id, `[data-testid="edit-confirm"]`)))
	if got := tb.toolResult(id); !strings.HasSuffix(got, `"result": {"deleted":"feature/old-login"}}`) {
		t.Fatalf("tool result = %s", got)
	}
}

// TestApprovalInChinese: the card, its forms and its notes speak the page's language;
// the host's texts stay as the host wrote them.
func TestApprovalInChinese(t *testing.T) {
	session := newSession() + "&lang=zh"
	tb := newTab(t)
	tb.open(env.main, session)
	other := newTab(t)
	other.open(env.main, session)
	tb.say(`/tool delete_branch {"name":"feature/zh"}`)
	id := tb.newestApproval("")
	other.newestApproval("")
	waitFor[bool](tb, "the agent's state", `document.querySelector("#agent-state").dataset.state === "waiting"`)
	got := eval[map[string]string](tb, `(() => { const c = `+cardJS(id)+`; const t = (s) => c.querySelector(s).textContent;
		return {kicker: t(".askuser-approval-kicker"), approve: t('[data-testid="approve"]'), deny: t('[data-testid="deny"]'),
			edit: t('[data-testid="edit"]'), always: t('[data-testid="always"]'), covers: t('[data-testid="always-covers"]'),
			countdown: t('[data-testid="approval-countdown"]'), label: c.getAttribute("aria-label"),
			state: document.querySelector("#agent-state").textContent}; })()`)
	want := map[string]string{"kicker": "需要你的批准", "approve": "批准", "deny": "拒绝", "edit": "修改", "always": "本会话内总是允许",
		"covers": "“总是允许”适用于：every call of delete_branch in this session。", "label": "需要批准：delete_branch", "state": "Agent 在等你批准"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if !regexp.MustCompile(`^剩余 [23]:\d\d$`).MatchString(got["countdown"]) {
		t.Errorf("countdown %q", got["countdown"])
	}
	tb.do("editing", chromedp.Click(asel(id, `[data-testid="edit"]`)))
	tb.typeInto(asel(id, `[data-testid="edit-input"]`), `{"name": ""}`)
	if v := tb.editView(id); mustJSON(v.Problems) != `["name: 不能为空"]` {
		t.Errorf("the editor says %v", v.Problems)
	}
	tb.do("back and deny", chromedp.Click(asel(id, `[data-testid="edit-cancel"]`)), chromedp.Click(asel(id, `[data-testid="deny"]`)))
	if label := eval[string](tb, cardJS(id)+`.querySelector('[data-testid="deny-confirm"]').textContent`); label != "拒绝这次调用" {
		t.Errorf("deny confirm = %q", label)
	}
	tb.do("denying", chromedp.Click(asel(id, `[data-testid="deny-preset"][data-reason="Wrong branch"]`)), chromedp.Click(asel(id, `[data-testid="deny-confirm"]`)))
	other.approvalNote(id, "已在其他设备上拒绝：Wrong branch")
	if s := tb.toolSummary(id); s != "已拒绝，未运行。理由：Wrong branch" {
		t.Errorf("the tool card says %q", s)
	}
}

// TestTourAsksForAnApproval: after its questions, the tour lists the files (no card: a
// rule allows it), asks to delete a branch, and its plan says what was decided.
func TestTourAsksForAnApproval(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	tb.say("start")
	prev := ""
	for i := 0; i < 4; i++ {
		id := tb.nextQuestion(prev)
		n := eval[int](tb, `document.querySelectorAll('[data-testid="panel"][data-request-id=`+js(id)+`] [data-testid="question"]').length`)
		for q := 0; q < n; q++ {
			tb.do("choosing", chromedp.Click(option(id, q, 0)))
		}
		tb.do("submitting", chromedp.Click(sel(id, `[data-testid="submit"]`)))
		tb.toolResult(id)
		prev = id
	}
	files := tb.toolCallOf("list_files", 0)
	if got := tb.toolResult(files); !strings.Contains(got, `"feature/old-login"`) || tb.approvalEvents(files) != 0 {
		t.Fatalf("list_files: %s (%d approvals)", got, tb.approvalEvents(files))
	}
	id := tb.newestApproval("")
	if args := eval[string](tb, cardJS(id)+`.querySelector('[data-testid="approval-arguments"]').textContent`); args != "{\n  \"name\": \"feature/old-login\"\n}" {
		t.Errorf("the tour's approval shows %q", args)
	}
	tb.do("denying", chromedp.Click(asel(id, `[data-testid="deny"]`)), chromedp.SendKeys(asel(id, `[data-testid="deny-reason"]`), "keep it a week"),
		chromedp.Click(asel(id, `[data-testid="deny-confirm"]`)))
	if got := tb.toolResult(id); got != deniedResult[:len(deniedResult)-1]+`, "reason": "keep it a week"}` {
		t.Fatalf("tool result = %s", got)
	}
	plan := waitFor[string](tb, "the plan", `(() => { const e = [...document.querySelectorAll("#transcript .agent .text")].find(e => e.textContent.startsWith("Thanks! Here is the plan")); return e && e.textContent; })()`)
	if !strings.Contains(plan, `delete_branch → denied ("keep it a week")`) {
		t.Errorf("the plan says %q", plan)
	}
}

// TestApprovalDraftAndHostileText: a reason being typed survives a reload of the tab,
// and model text in a tool's name and arguments is shown as text, hidden characters
// escaped, with no help from the page's Content-Security-Policy.
func TestApprovalDraftAndHostileText(t *testing.T) {
	tb := newTab(t)
	tb.open(env.noCSP, newSession())
	hostile := `{"name":"<img src=x onerror=\"window.pwned=1\">","note":"safe \u202Eexe.pdf"}`
	tb.say(`/tool <b>rm</b> ` + hostile)
	id := tb.newestApproval("")
	got := eval[map[string]any](tb, `(() => { const c = `+cardJS(id)+`;
		return {tool: c.querySelector('[data-testid="approval-tool"]').textContent, imgs: c.querySelectorAll("img, b").length,
			args: c.querySelector('[data-testid="approval-arguments"]').textContent, pwned: !!window.pwned}; })()`)
	if got["tool"] != "<b>rm</b>" || got["imgs"] != float64(0) || got["pwned"] != false ||
		!strings.Contains(got["args"].(string), `"safe \u202eexe.pdf"`) || !strings.Contains(got["args"].(string), `"<img src=x onerror=\"window.pwned=1\">"`) {
		t.Fatalf("the card shows %v", got)
	}
	tb.do("starting a denial", chromedp.Click(asel(id, `[data-testid="deny"]`)), chromedp.SendKeys(asel(id, `[data-testid="deny-reason"]`), "half a reason"))
	tb.do("reloading", chromedp.Reload())
	waitFor[bool](tb, "the connection", `document.querySelector("#conn").dataset.state === "open"`)
	tb.newestApproval("")
	st := eval[map[string]any](tb, `(() => { const c = `+cardJS(id)+`;
		return {open: !c.querySelector('[data-testid="deny-form"]').hidden, reason: c.querySelector('[data-testid="deny-reason"]').value}; })()`)
	if st["open"] != true || st["reason"] != "half a reason" {
		t.Fatalf("after the reload: %v", st)
	}
	tb.do("denying", chromedp.Click(asel(id, `[data-testid="deny-confirm"]`)))
	if got := tb.toolResult(id); !strings.Contains(got, `"reason": "half a reason"`) {
		t.Fatalf("tool result = %s", got)
	}
}
