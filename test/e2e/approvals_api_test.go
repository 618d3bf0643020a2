package e2e

import (
	"testing"
)

// TestApprovalPanelAPI drives the approval stack of a panel alone, fed events by the
// test: what it sends for each decision (numbers of an edit kept exact), the ids it
// shows, the note each way an approval can end leaves, and a decision that lost the race
// to another device's, in both orders the events can come.
func TestApprovalPanelAPI(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	got := eval[map[string]string](tb, `(() => {
		const box = document.createElement("div");
		document.body.appendChild(box);
		const sent = [];
		const panel = AskUser.createPanel({container: box, autoFocus: false, drafts: false, lang: "en",
			send: (ev) => { sent.push(AskUser.stringify(ev)); return true; }});
		const approval = (id, extra) => AskUser.parse(JSON.stringify({type: "tool_approval", sessionId: 7, data: Object.assign({requestId: id,
			tool: "delete_branch", arguments: {name: "x"}, decisions: ["approve", "deny", "edit", "always"], digest: "d-" + id,
			argumentsSchema: {type: "object", properties: {name: {type: "string"}, n: {type: "integer"}}}}, extra || {})}));
		const end = (id, outcome, extra) => panel.handle(AskUser.parse(JSON.stringify({type: "tool_approval_resolved", sessionId: 7,
			data: Object.assign({requestId: id, outcome}, extra || {})})));
		const refuse = (id, code) => panel.handle({type: "ask_user_questions_error", sessionId: 7, data: {requestId: id, code, message: "no"}});
		const card = (id) => box.querySelector('[data-testid="approval"][data-request-id="' + id + '"]');
		const click = (id, testid) => card(id).querySelector('[data-testid="' + testid + '"]').click();
		const note = (id) => { const n = box.querySelector('[data-testid="approval-ended"][data-request-id="' + id + '"]'); return n ? n.textContent : "(none)"; };
		const out = {};
		out.handled = [panel.handle(approval("a1")), panel.handle(approval("a2")), panel.handle(approval("a1")), panel.handle({type: "other", data: {}})].join(",");
		out.ids = panel.approvalIds().join(",") + "|" + panel.requestIds().join(",");
		out.cards = String(box.querySelectorAll('[data-testid="approval"]').length);

		click("a1", "approve");
		out.approve = sent.pop();
		out.sending = card("a1").dataset.state;
		end("a1", "approved");
		out.own = note("a1");

		click("a2", "edit");
		const ed = card("a2").querySelector('[data-testid="edit-input"]');
		ed.value = '{"name": "y", "n": 12345678901234567890}';
		ed.dispatchEvent(new Event("input", {bubbles: true}));
		click("a2", "edit-confirm");
		out.edit = sent.pop();
		// Another device was first: the refusal, then how it ended.
		refuse("a2", "not_pending");
		out.gone = card("a2").querySelector('[data-testid="approval-error"]').textContent;
		end("a2", "denied", {reason: "no way"});
		out.lostFirst = note("a2");

		// How it ended, then the refusal of this device's decision.
		panel.handle(approval("a3"));
		click("a3", "always");
		out.always = sent.pop();
		end("a3", "approved", {grant: "every call"});
		out.ownAlways = note("a3");
		refuse("a3", "not_pending");
		out.lostAfter = note("a3");

		const ends = {timed_out: {}, cancelled: {}, shutdown: {}, undelivered: {}, disconnected: {}, edited: {arguments: {name: "z", n: 1}},
			"something-new": {}, denied: {}};
		for (const [o, extra] of Object.entries(ends)) {
			panel.handle(approval("e-" + o));
			end("e-" + o, o, extra);
			out["note " + o] = note("e-" + o);
		}
		out.notes = String(box.querySelectorAll('[data-testid="approval-ended"]').length);
		panel.handle(approval("bad", {arguments: "{bad", argumentsInvalid: true, decisions: ["deny", "edit"]}));
		click("bad", "deny");
		card("bad").querySelector('[data-testid="deny-reason"]').value = "  spaced  ";
		card("bad").querySelector('[data-testid="deny-reason"]').dispatchEvent(new Event("input", {bubbles: true}));
		click("bad", "deny-confirm");
		out.deny = sent.pop();
		panel.destroy();
		out.left = String(box.childElementCount);
		box.remove();
		return out;
	})()`)
	want := map[string]string{
		"handled":            "true,true,true,false",
		"ids":                "a1,a2|",
		"cards":              "2",
		"approve":            `{"type":"tool_approval_result","sessionId":7,"data":{"requestId":"a1","decision":"approve","digest":"d-a1"}}`,
		"sending":            "sending",
		"own":                "(none)",
		"edit":               `{"type":"tool_approval_result","sessionId":7,"data":{"requestId":"a2","decision":"edit","arguments":{"name":"y","n":12345678901234567890},"digest":"d-a2"}}`,
		"gone":               "This approval is no longer open.",
		"lostFirst":          "Denied on another device: no wayAnother device decided first; your decision was not used.Dismiss",
		"always":             `{"type":"tool_approval_result","sessionId":7,"data":{"requestId":"a3","decision":"always","digest":"d-a3"}}`,
		"ownAlways":          "(none)",
		"lostAfter":          "Always allowed on another device: every call.Another device decided first; your decision was not used.Dismiss",
		"note timed_out":     "Timed out: delete_branch did not run.Dismiss",
		"note cancelled":     "Cancelled: delete_branch did not run.Dismiss",
		"note shutdown":      "The approval service shut down: delete_branch did not run.Dismiss",
		"note undelivered":   "The approval could not be delivered: delete_branch did not run.Dismiss",
		"note disconnected":  "No device was connected: delete_branch did not run.Dismiss",
		"note edited":        `Edited on another device; the tool runs with {"name":"z","n":1}.Dismiss`,
		"note something-new": "The approval of delete_branch has ended.Dismiss",
		"note denied":        "Denied on another device.Dismiss",
		"notes":              "3",
		"deny":               `{"type":"tool_approval_result","sessionId":7,"data":{"requestId":"bad","decision":"deny","reason":"spaced","digest":"d-bad"}}`,
		"left":               "0",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q\nwant   %q", k, got[k], v)
		}
	}
	// A host's own text of an ending, given as a plain text, is shown as it is.
	overridden := eval[string](tb, `(() => {
		const box = document.createElement("div");
		document.body.appendChild(box);
		const panel = AskUser.createPanel({container: box, autoFocus: false, drafts: false, lang: "en", send: () => true,
			strings: {approvalResolved: {cancelled: "Abgebrochen."}}});
		panel.handle(AskUser.parse(JSON.stringify({type: "tool_approval", sessionId: 7, data: {requestId: "o1", tool: "delete_branch",
			arguments: {}, decisions: ["approve", "deny"], digest: "d"}})));
		panel.handle(AskUser.parse(JSON.stringify({type: "tool_approval_resolved", sessionId: 7, data: {requestId: "o1", outcome: "cancelled"}})));
		const text = box.querySelector('[data-testid="approval-ended"] [data-testid="ended-text"]').textContent;
		panel.destroy();
		box.remove();
		return text;
	})()`)
	if overridden != "Abgebrochen." {
		t.Errorf("the host's text of a cancelled approval: %q", overridden)
	}
}

// TestApprovalCardSource: the card of a tool that is not the host's own (an MCP
// server's) says whose it is: the server, whether the host trusts it, the tool's title,
// and what the server says of the tool, as the server's word, in English and Chinese;
// hostile text is shown as text; a tool of the host's own has no such box.
func TestApprovalCardSource(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	got := eval[map[string]string](tb, `(() => {
		const out = {};
		for (const lang of ["en", "zh"]) {
			const box = document.createElement("div");
			document.body.appendChild(box);
			const panel = AskUser.createPanel({container: box, autoFocus: false, drafts: false, lang, send: () => true});
			const approval = (id, source) => AskUser.parse(JSON.stringify({type: "tool_approval", sessionId: 7, data: {requestId: id,
				tool: "delete_repo", arguments: {name: "x"}, decisions: ["approve", "deny"], digest: "d-" + id, source}}));
			panel.handle(approval("m1", {server: "git<b>hub</b>", title: "Delete a repository",
				hints: {openWorld: true, readOnly: false, destructive: true, custom: false}}));
			panel.handle(approval("m2", {server: "files", trusted: true}));
			panel.handle(approval("own"));
			const t = (id, s) => { const c = box.querySelector('[data-request-id="' + id + '"]'); const n = c && c.querySelector(s); return n ? n.textContent : "(none)"; };
			for (const id of ["m1", "m2", "own"]) {
				out[lang + " " + id] = [t(id, '[data-testid="approval-server"]'), t(id, '[data-testid="approval-trust"]'),
					t(id, '[data-testid="approval-title"]'), t(id, '[data-testid="approval-hints"]')].join(" | ");
			}
			out[lang + " bold"] = String(box.querySelectorAll("b").length);
			panel.destroy();
			box.remove();
		}
		return out;
	})()`)
	want := map[string]string{
		"en m1":   "git<b>hub</b> |  (not marked trusted) | Delete a repository | The server says this tool is: not read-only, destructive, reaching outside systems, custom: false.",
		"en m2":   "files |  (marked trusted by the host) | (none) | The server says nothing of what this tool does.",
		"en own":  "(none) | (none) | (none) | (none)",
		"en bold": "0",
		"zh m1":   "git<b>hub</b> | （未标记为可信） | Delete a repository | 服务器称此工具：非只读、有破坏性、访问外部系统、custom: false。",
		"zh m2":   "files | （主机标记为可信） | (none) | 服务器未说明此工具的作用。",
		"zh own":  "(none) | (none) | (none) | (none)",
		"zh bold": "0",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestApprovalPanelQuorum: a card whose host named approvers says whom it waits for and
// who has approved; each tool_approval_progress updates it (and ends this device's
// sending); a refusal as not_approver is said as such; an edit's progress makes the card
// anew with the edited arguments, whose digest the next decision carries.
func TestApprovalPanelQuorum(t *testing.T) {
	tb := newTab(t)
	tb.open(env.main, newSession())
	got := eval[map[string]string](tb, `(() => {
		const box = document.createElement("div");
		document.body.appendChild(box);
		const sent = [];
		const panel = AskUser.createPanel({container: box, autoFocus: false, drafts: false, lang: "en",
			send: (ev) => { sent.push(AskUser.stringify(ev)); return true; }});
		const feed = (type, data) => panel.handle(AskUser.parse(JSON.stringify({type, sessionId: 7, data})));
		const card = (id) => box.querySelector('[data-testid="approval"][data-request-id="' + id + '"]');
		const progress = (id) => { const p = card(id).querySelector('[data-testid="approval-progress"]'); return p.hidden ? "(hidden)" : p.textContent; };
		const out = {};
		feed("tool_approval", {requestId: "plain", tool: "list_files", arguments: {}, decisions: ["approve", "deny"], digest: "p"});
		out.plain = progress("plain");
		feed("tool_approval", {requestId: "q1", tool: "drop_database", arguments: {db: "prod"}, decisions: ["approve", "deny", "edit"],
			digest: "d1", approvers: {names: ["dba"], quorum: 2}});
		out.waiting = progress("q1");
		card("q1").querySelector('[data-testid="approve"]').click();
		out.approve = sent.pop();
		out.sending = card("q1").dataset.state;
		out.handled = String(feed("tool_approval_progress", {requestId: "q1", approved: ["alice"], digest: "d1"}));
		out.progress = progress("q1");
		out.after = card("q1").dataset.state;
		panel.handle({type: "ask_user_questions_error", sessionId: 7, data: {requestId: "q1", code: "not_approver", message: "no"}});
		out.refused = card("q1").querySelector('[data-testid="approval-error"]').textContent;
		feed("tool_approval_progress", {requestId: "q1", approved: ["bob"], digest: "d2", arguments: {db: "staging"}});
		out.cards = String(box.querySelectorAll('[data-testid="approval"]').length);
		out.edited = card("q1").querySelector('[data-testid="approval-arguments"]').textContent;
		out.progressEdited = progress("q1");
		card("q1").querySelector('[data-testid="approve"]').click();
		out.approveEdited = sent.pop();
		out.unknown = String(feed("tool_approval_progress", {requestId: "nope", approved: [], digest: "x"}));
		panel.destroy();
		box.remove();
		return out;
	})()`)
	want := map[string]string{
		"plain":          "(hidden)",
		"waiting":        "Waiting for 2 more approvals from dba.",
		"approve":        `{"type":"tool_approval_result","sessionId":7,"data":{"requestId":"q1","decision":"approve","digest":"d1"}}`,
		"sending":        "sending",
		"handled":        "true",
		"progress":       "Waiting for 1 more approval from dba: alice approved.",
		"after":          "pending",
		"refused":        "You are not among the approvers of this call: it waits for them.",
		"cards":          "2",
		"edited":         "{\n  \"db\": \"staging\"\n}",
		"progressEdited": "Waiting for 1 more approval from dba: bob approved.",
		"approveEdited":  `{"type":"tool_approval_result","sessionId":7,"data":{"requestId":"q1","decision":"approve","digest":"d2"}}`,
		"unknown":        "true",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q\nwant   %q", k, got[k], v)
		}
	}
}
