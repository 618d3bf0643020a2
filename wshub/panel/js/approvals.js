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

/**
 * createApprovals makes the stack and puts it in parent before next. ctx: {S, send(ev)
 * (false when it could not), say(text), now(), autoFocus, drafts, connected,
 * replyTimeout, focusQuestions() (true when a question set took the focus), person()
 * (who the panel is connected as, or null), changed() (a card went)}. Returns {node,
 * handle(ev), error(data, session), setConnected(on), ids(), pending(), info(requestId,
 * session), refreshAll(), focus(requestId, session), owns(node), clear(), destroy()};
 * handle and error report whether the event was the stack's. Cards are kept by session
 * and request id (a session as sessionOf has it; none named: the one card of the id). A
 * card whose approvers do not name the person is read-only: it shows who it waits for,
 * without the decisions.
 */
function createApprovals(parent, next, ctx) {
  var S = ctx.S;
  var stack = el("div", "askuser-approvals");
  stack.setAttribute("data-testid", "approvals");
  parent.insertBefore(stack, next);

  // Written only by the functions below, on the page's one thread. An entry is {set (an
  // Approval), view (its card), announced, replyTimer, hadFocus}.
  var cards = new RequestMap(); // (session, requestId) -> entry, oldest first
  var ended = new RequestMap(); // (session, requestId) -> {a, outcome, data, own, note}, oldest first
  var connected = !!ctx.connected;
  var countdown = createCountdown(function () { return cards.values(); },
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
    var n, entry;
    for (n = next && next.parentNode === stack ? next : null; n; n = n.nextElementSibling) {
      if ((entry = cardOf(n))) {
        entry.view.focus();
        return;
      }
    }
    var all = cards.values();
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

  // add takes a tool_approval event (session: its session, when known already).
  function add(ev, session) {
    var data = ev.data;
    if (!data || typeof data.requestId !== "string" || data.requestId === "" || typeof data.tool !== "string") {
      return;
    }
    session = session || sessionOf(ev);
    var existing = cards.get(session, data.requestId);
    if (existing) {
      // The same approval of the same session again (a reconnect): keep what the person
      // has begun.
      var a0 = existing.set;
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
    forget(session, data.requestId);
    var a = new Approval(data, session);
    a.restore(ctx.drafts.load(a));
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
      onDismiss: function () { end(entry, null, null); }
    });
    var focus = shouldFocus();
    cards.set(session, a.requestId, entry);
    stack.appendChild(entry.view.node);
    refresh(entry);
    countdown.tick();
    ctx.say(a.readOnly ? S.approvalAskedReadOnly(clean(a.tool)) : S.approvalAsked(clean(a.tool)));
    if (focus) {
      afterPaint(function () {
        if (cards.get(session, a.requestId) === entry && !a.gone && !a.sending && shouldFocus()) {
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
    var entry = data && typeof data.requestId === "string" ? cards.find(sessionOf(ev), data.requestId) : null;
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
      cards.remove(a.session, a.requestId);
      ctx.drafts.remove(a);
      clearTimeout(entry.replyTimer);
      if (node.parentNode) {
        node.parentNode.removeChild(node);
      }
      add({type: EVENT_APPROVAL, sessionId: ev.sessionId, data: next}, a.session);
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
  function forget(session, requestId) {
    var record = ended.get(session, requestId);
    if (record) {
      dismissNote(record);
      ended.remove(session, requestId);
    }
  }

  // cardOf is the entry whose card is node, or null.
  function cardOf(node) {
    return cards.values().filter(function (e) { return e.view.node === node; })[0] || null;
  }

  // end removes entry's card: outcome is how it ended on the server (data, its
  // resolution), or null when the person dismissed it here.
  function end(entry, outcome, data) {
    var a = entry && entry.set;
    if (!a || cards.get(a.session, a.requestId) !== entry) {
      return;
    }
    cards.remove(a.session, a.requestId);
    ctx.drafts.remove(a);
    clearTimeout(entry.replyTimer);
    var node = entry.view.node;
    var active = document.activeElement;
    var hadFocus = node.contains(active) ||
      (entry.hadFocus && (!active || active === document.body || active === document.documentElement));
    var next = node.nextElementSibling;
    var note = null;
    if (outcome !== null) {
      var record = {a: a, outcome: outcome, data: data, own: false, note: null};
      ended.set(a.session, a.requestId, record);
      ended.trim(APPROVAL_ENDED_LIMIT);
      if (a.sending && !a.gone && decidedAs(a.sending, outcome, data.grant)) {
        record.own = true;
        ctx.say(S.approvalDone[a.sending]);
      } else {
        note = showNote(record, node, approvalNoteText(S, a, outcome, data), !!a.sending || a.gone && !!a.sent);
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

  // error shows a refusal in the card it names (its request id, in session).
  function error(data, session) {
    data = data || {};
    var id = typeof data.requestId === "string" ? data.requestId : "";
    var entry = cards.find(session, id);
    if (!entry) {
      var record = ended.find(session, id);
      if (record && record.own && data.code === "not_pending") {
        // The decision taken for this device's was another's: its came second.
        record.own = false;
        showNote(record, null, approvalNoteText(S, record.a, record.outcome, record.data), true);
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
    var entry = cardOf(e.target.closest ? e.target.closest(".askuser-approval") : null);
    if (!entry) {
      return;
    }
    var a = entry.set;
    var form = entry.view.formOf(e.target);
    if (e.key === "Escape" && !e.altKey && !e.ctrlKey && !e.metaKey) {
      if (a.gone) {
        e.preventDefault();
        end(entry, null, null);
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
            end(cards.find(sessionOf(ev), ev.data.requestId), str(ev.data.outcome) || "ended", ev.data);
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
    ids: function () { return cards.ids(); },
    // pending lists the approvals still open, as {requestId, session, sessionTitle, tool,
    // askedAt, readOnly}, oldest first; info is one of them, by request id and session,
    // or null.
    pending: function () {
      var out = [];
      cards.forEach(function (entry) {
        if (!entry.set.gone) {
          out.push(infoOf(entry));
        }
      });
      return out;
    },
    info: function (requestId, session) {
      var entry = cards.find(session, requestId);
      return entry ? infoOf(entry) : null;
    },
    // refreshAll shows every card again: the panel has learnt who it is connected as.
    refreshAll: function () {
      cards.forEach(refresh);
    },
    // focus focuses the card of requestId; false when there is none.
    focus: function (requestId, session) {
      var entry = cards.find(session, requestId);
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
