// createApprovals: the approval stack, below the question sets, kept in step with events.
//
// Every pending approval of the session as a card, oldest first, below the question sets
// (questions come first: they are what the agent needs to go on). It sends the person's
// decisions (tool_approval_result, with the approval's digest), shows the server's
// refusals in their card, and when another device decides, or the approval ends
// otherwise, leaves a note in the card's place.
//
// Exports: createApprovals, EVENT_APPROVAL, EVENT_APPROVAL_RESULT, EVENT_APPROVAL_RESOLVED,
// EVENT_APPROVAL_PROGRESS.

var EVENT_APPROVAL = "tool_approval";
var EVENT_APPROVAL_RESULT = "tool_approval_result";
var EVENT_APPROVAL_RESOLVED = "tool_approval_resolved";
var EVENT_APPROVAL_PROGRESS = "tool_approval_progress";

var APPROVAL_NOTE_LIMIT = 3; // notes shown at most; the oldest goes first
var APPROVAL_ENDED_LIMIT = 20; // ended approvals remembered, for a refusal that comes late
var APPROVAL_NOTE_ARGS = 200; // the longest arguments a note quotes, in characters

// The outcome each decision ends its approval with, when it is the decision that counts.
function decidedAs(decision, outcome, grant) {
  switch (decision) {
    case "approve":
      return outcome === "approved" && !grant;
    case "always":
      return outcome === "approved" && !!grant;
    case "deny":
      return outcome === "denied";
    case "edit":
      return outcome === "edited";
  }
  return false;
}

/**
 * createApprovals makes the stack and puts it in parent before next. ctx: {S, send(ev)
 * (false when it could not), say(text), now(), autoFocus, drafts, connected,
 * replyTimeout, focusQuestions() (true when a question set took the focus), person()
 * (who the panel is connected as, or null), changed() (a card went)}. Returns {node,
 * handle(ev), error(data), setConnected(on), ids(), pending(), info(requestId),
 * refreshAll(), focus(requestId), owns(node), clear(), destroy()}; handle and error
 * report whether the event was the stack's. A card whose approvers do not name the
 * person is read-only: it shows who it waits for, without the decisions.
 */
function createApprovals(parent, next, ctx) {
  var S = ctx.S;
  var stack = el("div", "askuser-approvals");
  stack.setAttribute("data-testid", "approvals");
  parent.insertBefore(stack, next);

  // Written only by the functions below, on the page's one thread. An entry is {set (an
  // Approval), view (its card), announced, replyTimer, hadFocus}.
  var cards = new Map(); // requestId -> entry, oldest first
  var ended = new Map(); // requestId -> {a, outcome, data, own, note}, oldest first
  var connected = !!ctx.connected;
  var countdown = createCountdown(function () { return Array.from(cards.values()); },
    {timeLeft: S.timeLeft, timeUp: S.timeUp, timeLeftSpoken: S.approvalTimeLeftSpoken}, ctx.now, ctx.say);

  // refresh shows entry as it is now; an approval whose approvers (after an escalation
  // step, or once the panel learns who it is connected as) now name the person becomes
  // one they decide, and says so.
  function refresh(entry) {
    var a = entry.set;
    var person = ctx.person ? ctx.person() : null;
    var was = a.readOnly;
    a.readOnly = !a.mayDecide(person);
    if (a.readOnly) {
      a.mode = "";
    }
    a.showSession = !!person;
    entry.view.update(connected);
    if (was && !a.readOnly && !a.gone) {
      ctx.say(S.approvalNowYours(clean(a.tool)));
    }
  }

  function shouldFocus() {
    if (ctx.autoFocus === true || ctx.autoFocus === false) {
      return ctx.autoFocus;
    }
    // Only when nothing has the focus, or a note of the stack: never from a question or
    // another approval, where the person may be about to decide.
    var a = document.activeElement;
    return !a || a === document.body || a === document.documentElement ||
      (stack.contains(a) && !!a.closest(".askuser-approval-note"));
  }

  // focusAfter keeps keyboard users on what is left when a card or note goes: the next
  // card (or else the last one), else a question set, else a note of the stack.
  function focusAfter(next) {
    var n;
    for (n = next && next.parentNode === stack ? next : null; n; n = n.nextElementSibling) {
      if (cards.has(n.getAttribute("data-request-id")) && n.classList.contains("askuser-approval")) {
        cards.get(n.getAttribute("data-request-id")).view.focus();
        return;
      }
    }
    var all = Array.from(cards.values());
    if (all.length) {
      all[all.length - 1].view.focus();
    } else if (!(ctx.focusQuestions && ctx.focusQuestions()) && stack.lastElementChild) {
      stack.lastElementChild.focus();
    }
  }

  // ---- deciding ---------------------------------------------------------------------

  function setSending(entry, decision) {
    var a = entry.set;
    a.sending = decision;
    clearTimeout(entry.replyTimer);
    entry.replyTimer = !decision ? null : setTimeout(function () {
      entry.replyTimer = null;
      if (a.sending) {
        a.sending = "";
        a.error = {message: S.noReply};
        refresh(entry);
      }
    }, ctx.replyTimeout);
    refresh(entry);
  }

  function decide(entry, decision) {
    var a = entry.set;
    if (a.sending || a.gone || !a.offers(decision)) {
      return;
    }
    var data = a.decision(decision, S);
    if (!data) {
      // An edit that is not valid: to the editor, which says what is wrong.
      entry.view.focusControl("edit-form");
      var fix = entry.view.edit.fix;
      fix.classList.remove("askuser-flash");
      void fix.offsetWidth; // restart the animation
      fix.classList.add("askuser-flash");
      var c = a.checkEdit(S);
      ctx.say(c.syntax || c.problems[0] || S.editFix);
      return;
    }
    a.error = null;
    a.refused = null;
    var ev = {type: EVENT_APPROVAL_RESULT};
    var sid = sessionValue(a.session);
    if (sid !== undefined) {
      ev.sessionId = sid;
    }
    ev.data = data;
    var ok = false;
    try {
      ok = connected && ctx.send(ev) !== false;
    } catch (e) {
      ok = false;
    }
    if (!ok) {
      a.error = {message: S.approvalNotConnected};
      refresh(entry);
      return;
    }
    a.sent = data;
    entry.hadFocus = entry.view.node.contains(document.activeElement);
    setSending(entry, decision);
    ctx.say(S.sending);
  }

  function setMode(entry, mode) {
    var a = entry.set;
    if (a.sending || a.gone || (mode && !a.offers(mode))) {
      return;
    }
    var was = a.mode;
    a.mode = mode;
    ctx.drafts.save(a);
    refresh(entry);
    entry.view.focusControl(mode ? mode + "-form" : was);
  }

  // ---- approvals coming and going ---------------------------------------------------

  function add(ev) {
    var data = ev.data;
    if (!data || typeof data.requestId !== "string" || data.requestId === "" || typeof data.tool !== "string") {
      return;
    }
    var existing = cards.get(data.requestId);
    if (existing) {
      // The same approval again (a reconnect): keep what the person has begun.
      var a0 = existing.set;
      a0.session = sessionOf(ev);
      a0.expiresAt = data.expiresAt ? Date.parse(str(data.expiresAt)) : NaN;
      a0.digest = str(data.digest) || a0.digest;
      a0.approvers = approversOf(data.approvers);
      a0.sessionTitle = str(data.sessionTitle) || a0.sessionTitle;
      if (a0.gone) {
        a0.gone = false;
        a0.error = null;
      }
      existing.announced = {};
      refresh(existing);
      countdown.tick();
      return;
    }
    forget(data.requestId);
    var a = new Approval(data, sessionOf(ev));
    a.restore(ctx.drafts.load(a.requestId));
    var entry = {set: a, view: null, announced: {}, replyTimer: null, hadFocus: false, arrived: ctx.now()};
    entry.view = buildApprovalCard(a, {
      S: S,
      onDecide: function (d) { decide(entry, d); },
      onMode: function (m) { setMode(entry, m); },
      onReason: function (text) {
        a.reason = text;
        ctx.drafts.save(a);
        refresh(entry);
      },
      onEdit: function (text) {
        a.editText = text;
        ctx.drafts.save(a);
        refresh(entry);
      },
      onDismiss: function () { end(a.requestId, null, null); }
    });
    var focus = shouldFocus();
    cards.set(a.requestId, entry);
    stack.appendChild(entry.view.node);
    refresh(entry);
    countdown.tick();
    ctx.say(a.readOnly ? S.approvalAskedReadOnly(clean(a.tool)) : S.approvalAsked(clean(a.tool)));
    if (focus) {
      afterPaint(function () {
        if (cards.get(a.requestId) === entry && !a.gone && !a.sending && shouldFocus()) {
          entry.view.focus();
        }
      });
    }
  }

  // progress takes a tool_approval_progress: who has approved so far, the approvers
  // now after an escalation step, and, after an edit, the arguments now waiting for
  // approvals, whose card is made anew.
  function progress(ev) {
    var data = ev.data;
    var entry = data && typeof data.requestId === "string" ? cards.get(data.requestId) : null;
    if (!entry) {
      return;
    }
    var a = entry.set;
    if (a.approvers && Array.isArray(data.names)) {
      // An escalation step: the approvers now, who may make this card one to decide.
      var step = approversOf({names: data.names, users: data.users, groups: data.groups});
      a.approvers.names = step.names;
      a.approvers.users = step.users;
      a.approvers.groups = step.groups;
    }
    if (data.arguments !== undefined && a.data) {
      var next = {};
      for (var k in a.data) {
        if (Object.prototype.hasOwnProperty.call(a.data, k)) {
          next[k] = a.data[k];
        }
      }
      next.arguments = data.arguments;
      next.argumentsInvalid = false;
      next.digest = data.digest;
      next.approvers = a.approvers ? {names: a.approvers.names, users: a.approvers.users, groups: a.approvers.groups,
        quorum: a.approvers.quorum, approved: data.approved} : {names: [], quorum: 1, approved: data.approved};
      if (typeof data.rawArguments === "string") {
        Object.defineProperty(next, "rawArguments", {value: data.rawArguments, enumerable: false, configurable: true});
      }
      var node = entry.view.node;
      cards.delete(a.requestId);
      ctx.drafts.remove(a.requestId);
      clearTimeout(entry.replyTimer);
      if (node.parentNode) {
        node.parentNode.removeChild(node);
      }
      add({type: EVENT_APPROVAL, sessionId: ev.sessionId, data: next});
      return;
    }
    if (a.approvers) {
      a.approvers.approved = (Array.isArray(data.approved) ? data.approved : []).map(str).filter(function (n) { return n !== ""; });
    }
    a.digest = str(data.digest) || a.digest;
    if (a.sending === "approve") {
      setSending(entry, ""); // recorded: the others are still to approve
    } else {
      refresh(entry);
    }
  }

  // noteText says how approval a ended on another device, or otherwise.
  function noteText(a, outcome, data) {
    switch (outcome) {
      case "approved":
        return data.grant ? S.alwaysElsewhere(clean(data.grant)) : S.approvedElsewhere;
      case "edited":
        var raw = typeof data.rawArguments === "string" ? data.rawArguments : JSON.stringify(data.arguments);
        var parsed = parseJSONText(str(raw)).node;
        var args = Array.from(parsed ? printJSON(parsed, 0) : str(raw));
        return S.editedElsewhere(args.length > APPROVAL_NOTE_ARGS ? args.slice(0, APPROVAL_NOTE_ARGS).join("") + "\u2026" : args.join(""));
      case "denied":
        return S.deniedElsewhere(clean(str(data.reason)));
    }
    var text = S.approvalResolved[outcome] || S.approvalEnded;
    return typeof text === "function" ? text(clean(a.tool)) : text;
  }

  function showNote(record, before, text, late) {
    var a = record.a;
    var note = buildNote({set: a, outcome: record.outcome, text: text, withAnswers: false, answers: null, mine: null,
      typed: late ? [] : a.typed()}, S, function () { dismissNote(record); });
    var node = note.node;
    node.setAttribute("data-testid", "approval-ended");
    node.classList.add("askuser-approval-note");
    if (late) {
      var extra = el("p", "askuser-note-extra", S.approvalLate);
      extra.setAttribute("data-testid", "approval-ended-mine");
      node.firstChild.appendChild(extra);
    }
    record.note = node;
    stack.insertBefore(node, before && before.parentNode === stack ? before : null);
    var notes = stack.querySelectorAll(".askuser-approval-note");
    for (var i = 0; i < notes.length - APPROVAL_NOTE_LIMIT; i++) {
      stack.removeChild(notes[i]);
    }
    ctx.say(text);
    return node;
  }

  function dismissNote(record) {
    var node = record.note;
    if (!node) {
      return;
    }
    var hadFocus = node.contains(document.activeElement);
    var next = node.nextElementSibling;
    if (node.parentNode) {
      node.parentNode.removeChild(node);
    }
    record.note = null;
    if (hadFocus) {
      focusAfter(next);
    }
  }

  // forget drops what is known of an ended approval, asked again.
  function forget(requestId) {
    var record = ended.get(requestId);
    if (record) {
      dismissNote(record);
      ended.delete(requestId);
    }
  }

  // end removes a card: outcome is how it ended on the server (data, its resolution),
  // or null when the person dismissed it here.
  function end(requestId, outcome, data) {
    var entry = cards.get(requestId);
    if (!entry) {
      return;
    }
    var a = entry.set;
    cards.delete(requestId);
    ctx.drafts.remove(requestId);
    clearTimeout(entry.replyTimer);
    var node = entry.view.node;
    var active = document.activeElement;
    var hadFocus = node.contains(active) ||
      (entry.hadFocus && (!active || active === document.body || active === document.documentElement));
    var next = node.nextElementSibling;
    var note = null;
    if (outcome !== null) {
      var record = {a: a, outcome: outcome, data: data, own: false, note: null};
      ended.set(requestId, record);
      while (ended.size > APPROVAL_ENDED_LIMIT) {
        ended.delete(ended.keys().next().value);
      }
      if (a.sending && !a.gone && decidedAs(a.sending, outcome, data.grant)) {
        record.own = true;
        ctx.say(S.approvalDone[a.sending]);
      } else {
        note = showNote(record, node, noteText(a, outcome, data), !!a.sending || a.gone && !!a.sent);
      }
    }
    if (node.parentNode) {
      node.parentNode.removeChild(node);
    }
    if (hadFocus) {
      if (note) {
        note.focus();
      } else {
        focusAfter(next);
      }
    }
    countdown.tick();
    if (ctx.changed) {
      ctx.changed();
    }
  }

  // error shows a refusal in the card it names.
  function error(data) {
    data = data || {};
    var id = typeof data.requestId === "string" ? data.requestId : "";
    var entry = cards.get(id);
    if (!entry) {
      var record = ended.get(id);
      if (record && record.own && data.code === "not_pending") {
        // The decision taken for this device's was another's: its came second.
        record.own = false;
        showNote(record, null, noteText(record.a, record.outcome, record.data), true);
      }
      return !!record;
    }
    var a = entry.set;
    if (data.code === "not_pending") {
      a.gone = true;
      a.error = {message: S.approvalGone};
    } else if (data.code === "not_approver") {
      a.error = {message: S.notApprover};
    } else if (data.code === "invalid_answer" && (a.sending === "edit" || a.mode === "edit") && a.offers("edit")) {
      a.mode = "edit";
      a.refused = Array.isArray(data.problems) && data.problems.length ? data.problems.map(str) : [str(data.message)];
    } else {
      a.error = {message: str(data.message) || str(data.code), problems: Array.isArray(data.problems) ? data.problems.map(str) : []};
    }
    setSending(entry, "");
    return true;
  }

  function infoOf(entry) {
    var a = entry.set;
    return {requestId: a.requestId, session: a.session, sessionTitle: a.sessionTitle, tool: a.tool,
      askedAt: isNaN(a.askedAt) ? entry.arrived : a.askedAt, readOnly: a.readOnly};
  }

  function onKey(e) {
    if (e.defaultPrevented || e.isComposing || e.keyCode === 229) {
      return;
    }
    var card = e.target.closest ? e.target.closest(".askuser-approval") : null;
    var entry = card ? cards.get(card.getAttribute("data-request-id")) : null;
    if (!entry || entry.view.node !== card) {
      return;
    }
    var a = entry.set;
    var form = entry.view.formOf(e.target);
    if (e.key === "Escape" && !e.altKey && !e.ctrlKey && !e.metaKey) {
      if (a.gone) {
        e.preventDefault();
        end(a.requestId, null, null);
      } else if (a.mode && !a.sending) {
        e.preventDefault();
        setMode(entry, "");
      }
      return;
    }
    if (e.key !== "Enter" || e.altKey || e.shiftKey) {
      return;
    }
    if (form === "deny" && e.target.tagName === "INPUT") {
      e.preventDefault();
      decide(entry, "deny");
    } else if (form === "edit" && e.target.tagName === "TEXTAREA" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      decide(entry, "edit");
    }
  }
  stack.addEventListener("keydown", onKey);

  function clear() {
    cards.forEach(function (entry) {
      clearTimeout(entry.replyTimer);
    });
    cards.clear();
    ended.clear();
    while (stack.firstChild) {
      stack.removeChild(stack.firstChild);
    }
    countdown.tick();
  }

  return {
    node: stack,
    handle: function (ev) {
      switch (ev.type) {
        case EVENT_APPROVAL:
          add(ev);
          return true;
        case EVENT_APPROVAL_PROGRESS:
          progress(ev);
          return true;
        case EVENT_APPROVAL_RESOLVED:
          if (ev.data && typeof ev.data.requestId === "string") {
            end(ev.data.requestId, str(ev.data.outcome) || "ended", ev.data);
          }
          return true;
      }
      return false;
    },
    error: error,
    setConnected: function (on) {
      connected = !!on;
      cards.forEach(function (entry) {
        if (!connected && entry.set.sending) {
          entry.set.error = {message: S.approvalLostReply};
          setSending(entry, "");
        }
        refresh(entry);
      });
    },
    ids: function () { return Array.from(cards.keys()); },
    // pending lists the approvals still open, as {requestId, session, sessionTitle, tool,
    // askedAt, readOnly}, oldest first; info is one of them, by request id, or null.
    pending: function () {
      var out = [];
      cards.forEach(function (entry) {
        if (!entry.set.gone) {
          out.push(infoOf(entry));
        }
      });
      return out;
    },
    info: function (requestId) {
      var entry = cards.get(requestId);
      return entry ? infoOf(entry) : null;
    },
    // refreshAll shows every card again: the panel has learnt who it is connected as.
    refreshAll: function () {
      cards.forEach(refresh);
    },
    // focus focuses the card of requestId; false when there is none.
    focus: function (requestId) {
      var entry = cards.get(requestId);
      if (entry) {
        entry.view.focus();
      }
      return !!entry;
    },
    owns: function (node) { return stack.contains(node); },
    clear: clear,
    destroy: function () {
      clear();
      countdown.stop();
      stack.removeEventListener("keydown", onKey);
    }
  };
}
