// buildApprovalCard: the DOM of one approval, a card of the approval stack.
//
// The tool's name and the host's description, the arguments (buildJSONView, or the raw
// text when they are not JSON), the decisions the approval offers, the forms of a denial
// and of an edit, the countdown, and what the server said. A card reads an Approval and
// decides nothing. showApproval shows such a card read-only, for a page that takes the
// decision itself.
//
// Exports: buildApprovalCard, showApproval.

/**
 * buildApprovalCard renders approval a. ctx: {S, onDecide(decision), onMode(mode),
 * onReason(text), onEdit(text), onDismiss()}. Returns {node, update(connected),
 * setCountdown(left, text), focus(), focusControl(name)}.
 */
function buildApprovalCard(a, ctx) {
  var S = ctx.S;
  var node = el("section", "askuser-approval");
  node.setAttribute("data-testid", "approval");
  node.setAttribute("data-request-id", a.requestId);
  node.setAttribute("data-session-key", sessionKey(a.session));
  node.setAttribute("data-tool", a.tool);
  node.setAttribute("aria-label", S.approvalLabel(clean(a.tool)));
  node.tabIndex = -1;

  var head = el("div", "askuser-approval-head");
  head.appendChild(el("p", "askuser-approval-kicker", S.approvalKicker));
  var countdown = el("span", "askuser-countdown");
  countdown.setAttribute("role", "timer");
  countdown.setAttribute("data-testid", "approval-countdown");
  countdown.hidden = true;
  head.appendChild(countdown);
  node.appendChild(head);

  var toolLine = el("p", "askuser-approval-tool");
  var tool = modelEl("code", null, a.tool);
  tool.setAttribute("data-testid", "approval-tool");
  toolLine.appendChild(tool);
  node.appendChild(toolLine);
  // The session it is of, by the host's title, once the panel knows its person: its
  // stack may then hold approvals of other sessions, routed to them.
  var sessionLine = el("p", "askuser-approval-session");
  sessionLine.setAttribute("data-testid", "approval-session");
  sessionLine.hidden = true;
  node.appendChild(sessionLine);
  if (a.source) {
    node.appendChild(buildSource(a.source, S));
  }
  if (a.description) {
    var desc = modelEl("p", "askuser-approval-desc", a.description);
    desc.id = newId("adesc");
    desc.setAttribute("data-testid", "approval-description");
    node.setAttribute("aria-describedby", desc.id);
    node.appendChild(desc);
  }

  // Who it waits for, and who has approved, when the host named approvers.
  var progress = el("p", "askuser-approval-progress");
  progress.setAttribute("data-testid", "approval-progress");
  progress.hidden = true;
  node.appendChild(progress);
  // Why a card of someone else's approval has no decisions.
  var readOnly = el("p", "askuser-approval-readonly", S.approvalReadOnly);
  readOnly.setAttribute("data-testid", "approval-readonly");
  readOnly.hidden = true;
  node.appendChild(readOnly);

  // The arguments, in a box of their own that scrolls: reachable by keyboard and named.
  var args = el("div", "askuser-approval-args");
  args.setAttribute("data-testid", "approval-arguments");
  args.setAttribute("role", "region");
  args.setAttribute("aria-label", S.approvalArguments(clean(a.tool)));
  args.tabIndex = 0;
  if (a.invalid) {
    var warn = el("p", "askuser-approval-warn", S.approvalInvalid);
    warn.setAttribute("data-testid", "approval-arguments-invalid");
    var raw = el("pre", "askuser-json askuser-json-raw", showHidden(a.text));
    raw.dir = "ltr";
    raw.setAttribute("data-testid", "approval-raw");
    node.appendChild(warn);
    args.appendChild(raw);
  } else {
    args.appendChild(buildJSONView(a.node, S));
  }
  node.appendChild(args);

  var error = el("div", "askuser-error");
  error.setAttribute("role", "alert");
  error.setAttribute("data-testid", "approval-error");
  error.hidden = true;
  node.appendChild(error);

  var actions = el("div", "askuser-approval-actions");
  var row = el("div", "askuser-buttons askuser-approval-buttons");
  var buttons = {};
  var classes = {approve: "askuser-submit", deny: "askuser-deny", edit: "", always: ""};
  a.decisions.forEach(function (d) {
    var b = el("button", "askuser-button " + classes[d], S[d]);
    b.type = "button";
    b.setAttribute("data-testid", d);
    b.addEventListener("click", function () {
      if (d === "deny" || d === "edit") {
        ctx.onMode(d);
      } else {
        ctx.onDecide(d);
      }
    });
    if (d === "deny" || d === "edit") {
      b.setAttribute("aria-haspopup", "true");
    }
    buttons[d] = b;
    row.appendChild(b);
  });
  var dismiss = el("button", "askuser-button askuser-dismiss", S.dismiss);
  dismiss.type = "button";
  dismiss.setAttribute("data-testid", "dismiss");
  dismiss.hidden = true;
  dismiss.addEventListener("click", ctx.onDismiss);
  row.appendChild(dismiss);
  actions.appendChild(row);
  if (buttons.always && a.always) {
    var covers = modelEl("p", "askuser-hint askuser-always-covers", S.alwaysCovers(a.always));
    covers.id = newId("covers");
    covers.setAttribute("data-testid", "always-covers");
    buttons.always.setAttribute("aria-describedby", covers.id);
    actions.appendChild(covers);
  }
  node.appendChild(actions);

  var deny = a.offers("deny") ? buildDenyForm(a, {
    S: S,
    onReason: ctx.onReason,
    onConfirm: function () { ctx.onDecide("deny"); },
    onBack: function () { ctx.onMode(""); }
  }) : null;
  var edit = a.offers("edit") ? buildEditForm(a, {
    S: S,
    onEdit: ctx.onEdit,
    onConfirm: function () { ctx.onDecide("edit"); },
    onBack: function () { ctx.onMode(""); }
  }) : null;
  [deny, edit].forEach(function (f) {
    if (f) {
      node.appendChild(f.node);
    }
  });

  var status = el("p", "askuser-status");
  status.setAttribute("role", "status");
  status.setAttribute("data-testid", "approval-status");
  node.appendChild(status);

  var shownError = null;
  function renderError() {
    if (a.error === shownError) {
      return;
    }
    shownError = a.error;
    while (error.firstChild) {
      error.removeChild(error.firstChild);
    }
    var e = a.error;
    error.hidden = !e;
    if (e) {
      error.appendChild(modelEl("p", "askuser-error-message", e.message));
      var list = el("ul", "askuser-error-problems");
      fillProblems(list, e.problems);
      error.appendChild(list);
    }
  }

  function update(connected) {
    var locked = !!a.sending || a.gone;
    node.setAttribute("data-state", a.gone ? "gone" : a.sending ? "sending" : "pending");
    node.setAttribute("data-mode", a.mode || "decide");
    node.setAttribute("aria-busy", a.sending ? "true" : "false");
    node.setAttribute("data-readonly", a.readOnly ? "true" : "false");
    readOnly.hidden = !a.readOnly || a.gone;
    var title = clean(a.sessionTitle || sessionText(a.session));
    sessionLine.hidden = !a.showSession || title === "";
    sessionLine.textContent = title === "" ? "" : S.approvalSession(title);
    sessionLine.dir = "auto";
    actions.hidden = (a.mode !== "" || a.readOnly) && !a.gone;
    Object.keys(buttons).forEach(function (d) {
      buttons[d].hidden = a.gone || a.readOnly;
      buttons[d].setAttribute("aria-disabled", locked || !connected ? "true" : "false");
    });
    dismiss.hidden = !a.gone;
    if (deny) {
      deny.node.hidden = a.mode !== "deny" || a.gone;
      deny.sync(locked, connected);
    }
    if (edit) {
      edit.node.hidden = a.mode !== "edit" || a.gone;
      edit.sync(locked, connected);
    }
    status.textContent = a.sending ? S.sending : connected || a.gone ? "" : S.waitingForConnection;
    var ap = a.approvers;
    progress.hidden = !ap || a.gone;
    if (ap) {
      progress.textContent = S.approvalWaiting(Math.max(1, ap.quorum - ap.approved.length),
        clean(ap.names.join(S.approvalNames)), clean(ap.approved.join(S.approvalNames)));
    }
    renderError();
  }

  return {
    node: node,
    update: update,
    setCountdown: function (left, text) {
      countdown.hidden = left === null;
      if (left !== null) {
        countdown.textContent = text;
        countdown.classList.toggle("askuser-urgent", left <= 30);
        node.setAttribute("data-seconds-left", String(left));
      }
    },
    focus: function () {
      node.focus();
    },
    // focusControl focuses a decision's button ("approve", ...), a form's field
    // ("deny-form", "edit-form"), or Dismiss; it reports whether there was one.
    focusControl: function (name) {
      var target = name === "deny-form" ? deny && deny.input : name === "edit-form" ? edit && edit.input :
        name === "dismiss" ? dismiss : buttons[name];
      if (target && !target.hidden) {
        target.focus();
        return true;
      }
      return false;
    },
    // formOf names the form target is in: "deny", "edit", or "".
    formOf: function (target) {
      return deny && deny.node.contains(target) ? "deny" : edit && edit.node.contains(target) ? "edit" : "";
    },
    edit: edit
  };
}

/**
 * showApproval renders into container, read-only, the card the panel shows for ev (a
 * tool_approval event, best parsed with AskUser.parse, which keeps the arguments as
 * written): the tool, whose it is, the description and the arguments, by the same rules,
 * without the decisions. options: lang, strings. Returns the card's element.
 */
function showApproval(container, ev, options) {
  var opts = options || {};
  var lang = chooseLanguage(opts.lang, container);
  var a = new Approval((ev && ev.data) || {}, sessionOf(ev || {}));
  a.decisions = [];
  var none = function () {};
  var card = buildApprovalCard(a, {S: stringsFor(lang, opts.strings), onDecide: none, onMode: none,
    onReason: none, onEdit: none, onDismiss: none});
  card.update(true);
  card.node.querySelector(".askuser-approval-actions").hidden = true;
  var rootEl = el("div", "askuser-root");
  rootEl.lang = lang === "zh" ? "zh-CN" : "en";
  var stack = el("div", "askuser-approvals");
  stack.appendChild(card.node);
  rootEl.appendChild(stack);
  container.appendChild(rootEl);
  return card.node;
}

// buildSource says whose tool it is, for a tool that is not the host's own: the server
// and whether the host trusts it, the tool's title, and what the server says of the
// tool, shown as the server's word.
function buildSource(src, S) {
  var box = el("div", "askuser-approval-source");
  box.setAttribute("data-testid", "approval-source");
  var line = el("p", "askuser-approval-server");
  line.appendChild(el("span", null, S.approvalServer));
  var server = modelEl("strong", null, src.server);
  server.setAttribute("data-testid", "approval-server");
  line.appendChild(server);
  var trust = el("span", "askuser-approval-trust" + (src.trusted ? " askuser-trusted" : ""), src.trusted ? S.approvalTrusted : S.approvalUntrusted);
  trust.setAttribute("data-testid", "approval-trust");
  line.appendChild(trust);
  box.appendChild(line);
  if (src.title) {
    var title = modelEl("p", "askuser-approval-title", src.title);
    title.setAttribute("data-testid", "approval-title");
    box.appendChild(title);
  }
  var said = src.hints.map(function (h) {
    var words = S.approvalHint[h.name];
    return words ? words[h.value ? 0 : 1] : clean(h.name) + ": " + String(h.value);
  });
  var hints = el("p", "askuser-approval-hints", said.length ? S.approvalHints(said.join(S.approvalHintSep)) : S.approvalNoHints);
  hints.setAttribute("data-testid", "approval-hints");
  box.appendChild(hints);
  return box;
}
