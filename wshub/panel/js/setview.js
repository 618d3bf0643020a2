// buildSetView, buildNote: the DOM of a question set and of its note.
//
// The sticky header (title, progress, countdown), the questions, and the sticky footer
// (what is missing, errors, the buttons); and the note an ended set leaves. A view reads
// a QuestionSet and decides nothing.
//
// Exports: buildSetView, buildNote, describeAnswers.

/**
 * buildSetView renders set. ctx: {S, maxCustomInput, onChoose(qi, oi, on),
 * onOther(qi, text), onSubmit(), onDecline(), onDismiss()}.
 * Returns the view: {form, update(connected), submit(), setCountdown(left), focusQuestion(qi),
 * focusOption(qi, oi), questionOf(node), head, foot}.
 */
function buildSetView(set, ctx) {
  var S = ctx.S;
  var form = el("form", "askuser-panel");
  form.noValidate = true;
  form.setAttribute("data-testid", "panel");
  form.setAttribute("data-request-id", set.requestId);
  form.setAttribute("data-session-key", sessionKey(set.session));

  var head = el("div", "askuser-head");
  var title = el("p", "askuser-title", S.title);
  title.id = newId("ptitle");
  form.setAttribute("aria-labelledby", title.id);
  var progress = el("span", "askuser-progress");
  progress.setAttribute("data-testid", "progress");
  progress.hidden = set.questions.length < 2;
  var countdown = el("span", "askuser-countdown");
  countdown.setAttribute("role", "timer");
  countdown.setAttribute("data-testid", "countdown");
  head.appendChild(title);
  head.appendChild(progress);
  head.appendChild(countdown);
  form.appendChild(head);

  var qwrap = el("div", "askuser-questions");
  var qviews = set.questions.map(function (q, qi) {
    var qv = buildQuestion(q, qi, set, ctx);
    qwrap.appendChild(qv.fieldset);
    return qv;
  });
  form.appendChild(qwrap);

  var foot = el("div", "askuser-foot");
  var error = el("div", "askuser-error");
  error.setAttribute("role", "alert");
  error.setAttribute("data-testid", "error");
  error.hidden = true;
  var row = el("div", "askuser-foot-row");
  var words = el("div", "askuser-foot-notes");
  var hint = el("p", "askuser-hint-missing");
  hint.id = newId("hint");
  hint.setAttribute("data-testid", "hint");
  var status = el("p", "askuser-status");
  status.setAttribute("role", "status");
  status.setAttribute("data-testid", "status");
  words.appendChild(hint);
  words.appendChild(status);
  var buttons = el("div", "askuser-buttons");
  var dismiss = el("button", "askuser-button askuser-dismiss", S.dismiss);
  dismiss.type = "button";
  dismiss.setAttribute("data-testid", "dismiss");
  dismiss.hidden = true;
  var decline = el("button", "askuser-button askuser-decline", S.decline);
  decline.type = "button";
  decline.setAttribute("data-testid", "decline");
  // Submit stays focusable while the answers are incomplete (aria-disabled, not disabled),
  // so that a keyboard reaches it and it can say what is missing.
  var submit = el("button", "askuser-button askuser-submit", S.submit);
  submit.type = "submit";
  submit.setAttribute("data-testid", "submit");
  submit.setAttribute("aria-describedby", hint.id);
  buttons.appendChild(dismiss);
  buttons.appendChild(decline);
  buttons.appendChild(submit);
  row.appendChild(words);
  row.appendChild(buttons);
  foot.appendChild(error);
  foot.appendChild(row);
  form.appendChild(foot);

  // Submit acts on its click, and keeps the browser from submitting the form: before a
  // form's submit event the browser reads the whole form (for autofill), which lays the
  // page out at once. A submission by other means (Enter in a field, with the shortcuts
  // off) still comes through the submit event.
  submit.addEventListener("click", function (e) {
    e.preventDefault();
    ctx.onSubmit();
  });
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    ctx.onSubmit();
  });
  decline.addEventListener("click", function () {
    ctx.onDecline();
  });
  dismiss.addEventListener("click", function () {
    ctx.onDismiss();
  });

  var shownError = null;

  function renderError() {
    if (set.error === shownError) {
      return;
    }
    shownError = set.error;
    while (error.firstChild) {
      error.removeChild(error.firstChild);
    }
    var e = set.error;
    if (!e || (!e.message && !(e.problems && e.problems.length))) {
      error.hidden = true;
      return;
    }
    var msg = el("p", "askuser-error-message", e.message);
    msg.dir = "auto";
    error.appendChild(msg);
    if (Array.isArray(e.problems) && e.problems.length) {
      var ul = el("ul", "askuser-error-problems");
      e.problems.forEach(function (pr) {
        ul.appendChild(modelEl("li", null, pr));
      });
      error.appendChild(ul);
    }
    error.hidden = false;
  }

  function renderHint(missing) {
    while (hint.firstChild) {
      hint.removeChild(hint.firstChild);
    }
    if (!missing.length) {
      hint.hidden = true;
      return;
    }
    var names = missing.map(function (qi) {
      var q = set.questions[qi];
      var b = modelEl("b", "askuser-hint-name", q.name);
      b.title = b.textContent; // cut short when long (panel.css)
      return b;
    });
    var parts = S.needAnswer.split("{names}");
    hint.appendChild(document.createTextNode(parts[0]));
    joinList(hint, names, S);
    hint.appendChild(document.createTextNode(parts.slice(1).join("")));
    hint.hidden = false;
  }

  function update(connected) {
    var missing = set.missing();
    var complete = missing.length === 0;
    var locked = !!set.sending || set.gone;
    var blocked = !complete || locked || !connected;
    submit.setAttribute("aria-disabled", blocked ? "true" : "false");
    decline.setAttribute("aria-disabled", locked || !connected ? "true" : "false");
    decline.hidden = set.gone;
    dismiss.hidden = !set.gone;
    form.setAttribute("data-complete", complete ? "true" : "false");
    form.setAttribute("aria-busy", set.sending ? "true" : "false");
    var answered = set.questions.length - missing.length;
    progress.textContent = S.progress(answered, set.questions.length);
    qviews.forEach(function (qv, qi) {
      qv.sync(locked);
      qv.fieldset.setAttribute("data-answered", set.answered(qi) ? "true" : "false");
    });
    renderHint(set.gone || set.sending ? [] : missing);
    status.textContent = set.sending ? S.sending : connected ? "" : S.waitingForConnection;
    renderError();
  }

  function setCountdown(left, text) {
    if (left === null) {
      countdown.hidden = true;
      return;
    }
    countdown.hidden = false;
    countdown.textContent = text;
    countdown.classList.toggle("askuser-urgent", left <= 30);
    form.setAttribute("data-seconds-left", String(left));
  }

  function focusQuestion(qi) {
    var qv = qviews[qi];
    if (!qv) {
      return;
    }
    var q = set.questions[qi];
    var k = q.chosen.indexOf(true);
    var target = qv.inputs[k >= 0 ? k : 0] || qv.other;
    target.focus();
  }

  return {
    form: form,
    head: head,
    foot: foot,
    hint: hint,
    update: update,
    submit: ctx.onSubmit,
    setCountdown: setCountdown,
    focusQuestion: focusQuestion,
    focusOption: function (qi, oi) {
      var qv = qviews[qi];
      if (qv && qv.inputs[oi]) {
        qv.inputs[oi].focus();
      }
    },
    questionOf: function (node) {
      for (var i = 0; i < qviews.length; i++) {
        if (qviews[i].fieldset.contains(node)) {
          return i;
        }
      }
      return -1;
    }
  };
}

// describeAnswers appends to parent what answers (as in a tool result) chose: "React",
// or, for several questions, "Database: PostgreSQL; Testing: Unit tests, “Fuzz tests”".
function describeAnswers(parent, answers, set, S) {
  var headers = {};
  if (set) {
    set.questions.forEach(function (q) {
      headers[q.text] = q.name;
    });
  }
  answers.forEach(function (a, i) {
    if (i > 0) {
      parent.appendChild(document.createTextNode("; "));
    }
    a = a || {};
    if (answers.length > 1) {
      parent.appendChild(modelEl("span", "askuser-note-header", headers[a.question] || a.question));
      parent.appendChild(document.createTextNode(": "));
    }
    var items = (Array.isArray(a.selectedLabels) ? a.selectedLabels : []).map(function (l) {
      return modelEl("span", "askuser-note-choice", l);
    });
    if (typeof a.customInput === "string" && a.customInput !== "") {
      items.push(modelEl("q", "askuser-note-choice", a.customInput));
    }
    items.forEach(function (item, k) {
      if (k > 0) {
        parent.appendChild(document.createTextNode(S.listSeparator));
      }
      parent.appendChild(item);
    });
  });
}

/**
 * buildNote renders the read-only note an ended set leaves where it was. info: {set,
 * text, answers (or null), mine (the answers this device sent and that were not used, or
 * null), typed (Other texts that would be lost)}. Returns {node, setAnswers(answers)}.
 */
function buildNote(info, S, onDismiss) {
  var node = el("div", "askuser-note");
  node.setAttribute("data-testid", "ended");
  node.setAttribute("data-request-id", info.set.requestId);
  node.setAttribute("data-session-key", sessionKey(info.set.session));
  node.setAttribute("data-outcome", info.outcome);
  node.setAttribute("role", "group");
  node.tabIndex = -1;
  var body = el("div", "askuser-note-body");
  var line = el("p", "askuser-note-text");
  line.setAttribute("data-testid", "ended-text");
  var lead = el("span", null, info.text);
  var answersSpan = el("span", "askuser-note-answers");
  answersSpan.setAttribute("data-testid", "ended-answers");
  line.appendChild(lead);
  line.appendChild(answersSpan);
  body.appendChild(line);
  node.setAttribute("aria-label", info.text);

  function setAnswers(answers) {
    if (!info.withAnswers || !Array.isArray(answers) || !answers.length) {
      return;
    }
    while (answersSpan.firstChild) {
      answersSpan.removeChild(answersSpan.firstChild);
    }
    answersSpan.appendChild(document.createTextNode(": "));
    describeAnswers(answersSpan, answers, info.set, S);
  }
  setAnswers(info.answers);

  if (info.mine) {
    var mine = el("p", "askuser-note-extra");
    mine.setAttribute("data-testid", "ended-mine");
    mine.appendChild(document.createTextNode(S.yourAnswer));
    describeAnswers(mine, info.mine, info.set, S);
    body.appendChild(mine);
  } else if (info.typed.length) {
    var typed = el("p", "askuser-note-extra");
    typed.setAttribute("data-testid", "ended-typed");
    typed.appendChild(document.createTextNode(S.yourText));
    info.typed.forEach(function (t, i) {
      if (i > 0) {
        typed.appendChild(document.createTextNode(S.listSeparator));
      }
      // Kept as selectable text, so that it can be copied into a message.
      typed.appendChild(modelEl("q", "askuser-note-typed", t));
    });
    body.appendChild(typed);
  }
  var dismiss = el("button", "askuser-button askuser-note-dismiss", S.dismiss);
  dismiss.type = "button";
  dismiss.setAttribute("data-testid", "dismiss");
  dismiss.addEventListener("click", onDismiss);
  node.appendChild(body);
  node.appendChild(dismiss);
  return {node: node, setAnswers: setAnswers};
}
