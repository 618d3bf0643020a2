// buildDenyForm, buildEditForm: the reason of a denial, and the editor of the arguments.
//
// The forms an approval card opens: a denial's reason, typed or picked from the host's
// presets; and the arguments as JSON text, checked as the person types (JSON syntax, then
// the tool's schema as far as checkSchema can tell), with the server's refusal of an edit
// shown where the edit is. They report what the person does through the handlers given.
//
// Exports: buildDenyForm, buildEditForm, fillProblems.

// formButtons makes the row of a form's buttons: Back, and the one that sends.
function formButtons(S, testid, confirmText, confirmClass, ctx) {
  var row = el("div", "askuser-buttons askuser-approval-buttons");
  var back = el("button", "askuser-button", S.back);
  back.type = "button";
  back.setAttribute("data-testid", testid + "-cancel");
  var confirm = el("button", "askuser-button " + confirmClass, confirmText);
  confirm.type = "button";
  confirm.setAttribute("data-testid", testid + "-confirm");
  back.addEventListener("click", ctx.onBack);
  confirm.addEventListener("click", ctx.onConfirm);
  row.appendChild(back);
  row.appendChild(confirm);
  return {row: row, back: back, confirm: confirm};
}

// fillProblems replaces the items of list with one per problem, as model text.
function fillProblems(list, problems) {
  while (list.firstChild) {
    list.removeChild(list.firstChild);
  }
  (problems || []).forEach(function (p) {
    list.appendChild(modelEl("li", null, p));
  });
  list.hidden = !list.firstChild;
}

/**
 * buildDenyForm renders the denial's form of approval a. ctx: {S, onReason(text),
 * onConfirm(), onBack()}. Returns {node, input, confirm, sync(locked)}.
 */
function buildDenyForm(a, ctx) {
  var S = ctx.S;
  var node = el("div", "askuser-approval-form");
  node.setAttribute("data-testid", "deny-form");
  node.setAttribute("role", "group");
  var label = el("label", "askuser-approval-label", S.denyReason);
  var input = el("input", "askuser-other-input askuser-reason-input");
  input.type = "text";
  input.id = newId("reason");
  input.maxLength = 1000;
  input.autocomplete = "off";
  input.dir = "auto";
  input.placeholder = S.denyPlaceholder;
  input.setAttribute("data-testid", "deny-reason");
  label.htmlFor = input.id;
  label.id = newId("rlabel");
  node.setAttribute("aria-labelledby", label.id);
  node.appendChild(label);
  node.appendChild(input);
  input.addEventListener("input", function () {
    ctx.onReason(input.value);
  });

  var presets = [];
  if (a.reasons.length) {
    var presetsLabel = el("p", "askuser-approval-label", S.denyPresets);
    presetsLabel.id = newId("plabel");
    var box = el("div", "askuser-presets");
    box.setAttribute("role", "group");
    box.setAttribute("aria-labelledby", presetsLabel.id);
    a.reasons.forEach(function (r) {
      var b = modelEl("button", "askuser-button askuser-preset", r);
      b.type = "button";
      b.setAttribute("data-testid", "deny-preset");
      b.setAttribute("data-reason", r);
      b.addEventListener("click", function () {
        input.value = r;
        ctx.onReason(r);
      });
      box.appendChild(b);
      presets.push(b);
    });
    node.appendChild(presetsLabel);
    node.appendChild(box);
  }
  var buttons = formButtons(S, "deny", S.denyConfirm, "askuser-deny-confirm", ctx);
  node.appendChild(buttons.row);

  return {
    node: node,
    input: input,
    confirm: buttons.confirm,
    sync: function (locked, connected) {
      if (input.value !== a.reason) {
        input.value = a.reason;
      }
      input.readOnly = locked;
      presets.forEach(function (b) {
        b.setAttribute("aria-pressed", a.reason.trim() === b.getAttribute("data-reason") ? "true" : "false");
        b.setAttribute("aria-disabled", locked ? "true" : "false");
      });
      buttons.confirm.setAttribute("aria-disabled", locked || !connected ? "true" : "false");
    }
  };
}

/**
 * buildEditForm renders the editor of approval a's arguments. ctx: {S, onEdit(text),
 * onConfirm(), onBack()}. Returns {node, input, confirm, sync(locked, connected),
 * problemsNode}: sync shows the problems of the text as it stands.
 */
function buildEditForm(a, ctx) {
  var S = ctx.S;
  var node = el("div", "askuser-approval-form");
  node.setAttribute("data-testid", "edit-form");
  node.setAttribute("role", "group");
  var label = el("label", "askuser-approval-label", S.editLabel);
  var input = el("textarea", "askuser-edit-input");
  input.id = newId("edit");
  input.rows = Math.min(12, Math.max(3, a.editText.split("\n").length + 1));
  input.spellcheck = false;
  input.autocomplete = "off";
  input.setAttribute("autocapitalize", "off");
  input.setAttribute("autocorrect", "off");
  input.dir = "ltr";
  input.setAttribute("data-testid", "edit-input");
  label.htmlFor = input.id;
  label.id = newId("elabel");
  node.setAttribute("aria-labelledby", label.id);
  node.appendChild(label);
  node.appendChild(input);
  input.addEventListener("input", function () {
    ctx.onEdit(input.value);
  });

  // What the browser finds, as the person types; not a live region, which would speak at
  // every key: the editor is described by it, and the server's refusal is an alert.
  var problems = el("div", "askuser-edit-problems");
  problems.id = newId("eprob");
  var ok = el("p", "askuser-edit-ok", S.editOK);
  ok.setAttribute("data-testid", "edit-ok");
  var list = el("ul", "askuser-error-problems");
  list.setAttribute("data-testid", "edit-problems");
  problems.appendChild(ok);
  problems.appendChild(list);
  node.appendChild(problems);

  var refused = el("div", "askuser-error");
  refused.setAttribute("role", "alert");
  refused.setAttribute("data-testid", "edit-server-problems");
  refused.hidden = true;
  var refusedList = el("ul", "askuser-error-problems");
  refused.appendChild(el("p", "askuser-error-message", S.editRefused));
  refused.appendChild(refusedList);
  node.appendChild(refused);

  var keys = el("p", "askuser-hint", S.editKeys);
  keys.id = newId("ekeys");
  var fix = el("p", "askuser-hint-missing", S.editFix);
  fix.id = newId("efix");
  fix.setAttribute("data-testid", "edit-hint");
  input.setAttribute("aria-describedby", problems.id + " " + keys.id);
  node.appendChild(keys);
  var buttons = formButtons(S, "edit", S.editConfirm, "askuser-submit", ctx);
  buttons.confirm.setAttribute("aria-describedby", fix.id);
  node.appendChild(fix);
  node.appendChild(buttons.row);

  var shownRefusal = null;
  return {
    node: node,
    input: input,
    confirm: buttons.confirm,
    fix: fix,
    sync: function (locked, connected) {
      if (input.value !== a.editText) {
        input.value = a.editText; // only when it differs: the caret stays where it is
      }
      input.readOnly = locked;
      var c = a.checkEdit(S);
      var found = c.syntax ? [c.syntax] : c.problems;
      fillProblems(list, found);
      ok.hidden = found.length > 0;
      input.setAttribute("aria-invalid", found.length ? "true" : "false");
      fix.hidden = !found.length;
      buttons.confirm.setAttribute("aria-disabled", found.length || locked || !connected ? "true" : "false");
      if (a.refused !== shownRefusal) {
        shownRefusal = a.refused;
        fillProblems(refusedList, a.refused);
        refusedList.hidden = false;
        refused.hidden = !a.refused;
      }
    }
  };
}
