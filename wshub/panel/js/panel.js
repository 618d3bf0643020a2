// createPanel: the sets and approvals of a session, kept in step with the events.
//
// Every pending question set of a session, and below them its pending approvals, kept in
// step with the events it is given; once the hub names the person it is connected as,
// their inbox beside them. It ties the parts before it together and sends answers and
// decisions through options.send.
//
// Exports: createPanel.

// The server's default bound of an answer's free text, in characters.
var DEFAULT_MAX_CUSTOM_INPUT = 4000;
// How long a sent answer waits for the server's verdict before the panel is usable again.
var REPLY_TIMEOUT_MS = 20000;

/**
 * createPanel renders pending question sets into options.container and keeps them in step
 * with the events it is given. It does no networking: options.send(obj) must send obj (an
 * event envelope; encode it with AskUser.stringify) to the server and return false when
 * it could not.
 *
 * Returns {handle(event), setConnected(bool), setAnswers(requestId, answers, session),
 * requestIds(), approvalIds(), readOnly(requestId, session), waiting(), lang, clear(),
 * destroy()}; handle takes a parsed event envelope (best parsed with AskUser.parse) and
 * returns true when it was one of the panel's. Requests are kept by session and request
 * id; a session argument is an event of the request or its sessionId (left out: the one
 * request of that id).
 */
function createPanel(options) {
  var opts = options || {};
  var container = opts.container;
  if (!container || typeof container.appendChild !== "function") {
    throw new TypeError("AskUser: options.container must be an element");
  }
  var send = typeof opts.send === "function" ? opts.send : function () { return false; };
  var lang = chooseLanguage(opts.lang, container);
  var S = stringsFor(lang, opts.strings);
  var maxCustomInput = opts.maxCustomInput > 0 ? opts.maxCustomInput : DEFAULT_MAX_CUSTOM_INPUT;
  var drafts = createDrafts(opts.drafts !== false);

  var rootEl = el("div", "askuser-root");
  rootEl.setAttribute("data-testid", "askuser-root");
  rootEl.setAttribute("data-lang", lang);
  rootEl.lang = lang === "zh" ? "zh-CN" : "en";
  var banner = el("div", "askuser-connection", S.disconnected);
  banner.setAttribute("role", "status");
  banner.setAttribute("data-testid", "connection");
  banner.hidden = true;
  var listEl = el("div", "askuser-list");
  rootEl.appendChild(banner);
  rootEl.appendChild(listEl);
  var say = createAnnouncer(rootEl);
  container.appendChild(rootEl);

  // Written only by the functions below, on the page's one thread. An entry is
  // {set, view, replyTimer, announced, hadFocus}.
  var sets = new RequestMap(); // (session, requestId) -> entry, oldest first
  var connected = opts.connected === undefined ? true : !!opts.connected;
  var destroyed = false;
  var now = typeof opts.now === "function" ? opts.now : function () { return Date.now(); };
  var countdown = createCountdown(function () { return sets.values(); }, S, now, say);
  var notes = createNotes(listEl, S, say, focusFrom);
  // The approvals stack below the question sets (§4.6 of the design: questions above).
  var approvals = createApprovals(rootEl, listEl.nextSibling, {
    S: S,
    send: function (ev) { return send(ev); },
    say: say,
    now: now,
    autoFocus: opts.autoFocus,
    drafts: drafts,
    connected: connected,
    replyTimeout: REPLY_TIMEOUT_MS,
    person: function () { return inbox.person(); },
    changed: function () { changed(); },
    focusQuestions: function () {
      var first = sets.values()[0];
      if (first) {
        focusSet(first);
      }
      return !!first;
    }
  });

  // The inbox: shown once the inbox event names the person. Its bar follows the requests,
  // so that a keyboard reaches them first, until the inbox opens above them.
  var inbox = createInbox(rootEl, null, {
    S: S,
    now: now,
    items: inboxItems,
    onSelect: selectRequest,
    onToggle: syncView,
    hidden: opts.inbox === false
  });

  // inboxItems lists the pending requests the panel holds, for the inbox.
  function inboxItems() {
    var out = [];
    sets.forEach(function (entry) {
      var set = entry.set;
      if (!set.gone) {
        out.push({kind: "question", requestId: set.requestId, session: set.session, sessionTitle: set.sessionTitle,
          what: set.questions.length ? set.questions[0].name : "", askedAt: isNaN(set.askedAt) ? entry.arrived : set.askedAt,
          readOnly: false});
      }
    });
    approvals.pending().forEach(function (a) {
      out.push({kind: "approval", requestId: a.requestId, session: a.session, sessionTitle: a.sessionTitle,
        what: a.tool, askedAt: a.askedAt, readOnly: a.readOnly});
    });
    return out;
  }

  // syncView shows, while the inbox is open, only the request picked in it (and the
  // note it leaves when it ends).
  function syncView() {
    var open = inbox.isOpen();
    if (open !== rootEl.classList.contains("askuser-inbox-open")) {
      inbox.place(open ? listEl : null);
    }
    rootEl.classList.toggle("askuser-inbox-open", open);
    var chosen = inbox.selected();
    [[listEl, "question"], [approvals.node, "approval"]].forEach(function (box) {
      Array.prototype.forEach.call(box[0].children, function (n) {
        n.classList.toggle("askuser-selected", !!chosen && chosen.kind === box[1] &&
          n.getAttribute("data-request-id") === chosen.requestId &&
          n.getAttribute("data-session-key") === sessionKey(chosen.session));
      });
    });
  }

  function changed() {
    inbox.render();
    syncView();
  }

  // selectRequest shows the request picked in the inbox, and gives it the focus.
  function selectRequest(item) {
    syncView();
    var entry = item.kind === "question" ? sets.get(item.session, item.requestId) : null;
    if (entry) {
      focusSet(entry);
    } else {
      approvals.focus(item.requestId, item.session);
    }
    var node = entry ? entry.view.form : approvals.node.querySelector(".askuser-selected");
    if (node && node.scrollIntoView) {
      node.scrollIntoView({block: "nearest"});
    }
  }

  function updateBanner() {
    banner.hidden = connected || (sets.size() === 0 && approvals.ids().length === 0);
  }

  function refresh(entry) {
    entry.view.update(connected);
    updateBanner();
  }

  // focusFrom keeps keyboard users in the list when what had the focus goes: node (the
  // next set or note) or else the last one.
  function focusFrom(node) {
    var target = node && node.parentNode === listEl ? node : listEl.lastElementChild;
    var entry = setOf(target);
    if (entry) {
      focusSet(entry);
    } else if (target) {
      target.focus();
    }
  }

  // setOf is the entry whose form is node, or null.
  function setOf(node) {
    return sets.values().filter(function (e) { return !!node && e.view.form === node; })[0] || null;
  }

  function focusSet(entry) {
    var missing = entry.set.missing();
    entry.view.focusQuestion(missing.length ? missing[0] : 0);
  }

  function shouldFocus() {
    if (opts.autoFocus === false || opts.autoFocus === true) {
      return opts.autoFocus;
    }
    // By default only when nothing else has the focus: never from a field the person may
    // be typing in.
    var a = document.activeElement;
    return !a || a === document.body || a === document.documentElement || (rootEl.contains(a) && !approvals.owns(a));
  }

  // ---- answering ----------------------------------------------------------------------

  function setSending(entry, what) {
    var set = entry.set;
    set.sending = what;
    clearTimeout(entry.replyTimer);
    entry.replyTimer = !what ? null : setTimeout(function () {
      entry.replyTimer = null;
      if (set.sending) {
        set.sending = "";
        set.error = {message: S.noReply};
        refresh(entry);
      }
    }, REPLY_TIMEOUT_MS);
    refresh(entry);
  }

  function sendResult(entry, data, what) {
    var set = entry.set;
    if (set.sending || set.gone) {
      return;
    }
    set.error = null;
    var ev = {type: EVENT_RESULT};
    var sid = sessionValue(set.session);
    if (sid !== undefined) {
      ev.sessionId = sid;
    }
    ev.data = data;
    var ok = false;
    try {
      ok = connected && send(ev) !== false;
    } catch (e) {
      ok = false;
    }
    if (!ok) {
      set.error = {message: S.notConnected};
      refresh(entry);
      return;
    }
    set.answersSent = what === "answers" ? data.answers : null;
    // The browser moves the focus to the page when the set's controls are disabled
    // below; remember that it was here, to bring it to the next set when this one ends.
    entry.hadFocus = entry.view.form.contains(document.activeElement);
    setSending(entry, what);
    say(S.sending);
  }

  // submit sends the answers, or, when some are missing, moves the focus to the first
  // unanswered question and says which are unanswered.
  function submit(entry) {
    var set = entry.set;
    if (set.sending || set.gone) {
      return;
    }
    if (!set.complete()) {
      focusSet(entry);
      var hint = entry.view.hint;
      hint.classList.remove("askuser-flash");
      void hint.offsetWidth; // restart the animation
      hint.classList.add("askuser-flash");
      say(hint.textContent);
      return;
    }
    sendResult(entry, {requestId: set.requestId, answers: set.answers()}, "answers");
  }

  function decline(entry) {
    sendResult(entry, {requestId: entry.set.requestId, declined: true}, "decline");
  }

  function choose(entry, qi, oi, on) {
    entry.set.choose(qi, oi, on);
    drafts.save(entry.set);
    refresh(entry);
  }

  // ---- sets coming and going ----------------------------------------------------------

  function addSet(ev) {
    var data = ev.data;
    if (!data || typeof data.requestId !== "string" || data.requestId === "" || !Array.isArray(data.questions)) {
      return;
    }
    var session = sessionOf(ev);
    var existing = sets.get(session, data.requestId);
    if (existing) {
      // The same ask of the same session again (a reconnect, another device connecting):
      // keep what the person has chosen so far, take the newer expiry.
      if (existing.set.gone) {
        existing.set.gone = false;
        existing.set.error = null;
      }
      existing.set.setExpiry(data.expiresAt);
      existing.announced = {};
      refresh(existing);
      countdown.tick();
      return;
    }
    notes.forget(session, data.requestId); // asked again after it ended: a host may retry an id
    var set = new QuestionSet(data, session);
    set.restore(drafts.load(set));
    var entry = {set: set, view: null, replyTimer: null, announced: {}, hadFocus: false, arrived: now()};
    entry.view = buildSetView(set, {
      S: S,
      maxCustomInput: maxCustomInput,
      onChoose: function (qi, oi, on) {
        choose(entry, qi, oi, on);
      },
      onOther: function (qi, text) {
        set.setOther(qi, text);
        drafts.save(set);
        refresh(entry);
      },
      onSubmit: function () {
        if (!connected && !set.sending && !set.gone) {
          set.error = {message: S.notConnected};
          refresh(entry);
          return;
        }
        submit(entry);
      },
      onDecline: function () {
        decline(entry);
      },
      onDismiss: function () {
        endSet(entry, null);
      }
    });
    var focus = shouldFocus();
    sets.set(session, set.requestId, entry);
    listEl.appendChild(entry.view.form);
    refresh(entry);
    countdown.tick();
    say(S.questionsAsked(set.questions.length));
    if (focus) {
      afterPaint(function () {
        if (sets.get(session, set.requestId) === entry && !set.gone && !set.sending && shouldFocus()) {
          focusSet(entry);
        }
      });
    }
  }

  // endSet removes entry's set: outcome is how it ended on the server, or null when the
  // person dismissed it here.
  function endSet(entry, outcome) {
    var set = entry && entry.set;
    if (!set || sets.get(set.session, set.requestId) !== entry) {
      return;
    }
    sets.remove(set.session, set.requestId);
    drafts.remove(set);
    clearTimeout(entry.replyTimer);
    var form = entry.view.form;
    var active = document.activeElement;
    var hadFocus = form.contains(active) ||
      (entry.hadFocus && (!active || active === document.body || active === document.documentElement));
    var next = form.nextElementSibling;
    var note = outcome === null ? null : notes.ended(entry.set, outcome, form);
    if (form.parentNode) {
      form.parentNode.removeChild(form);
    }
    if (hadFocus) {
      focusFrom(note || next);
    }
    updateBanner();
    countdown.tick();
    changed();
  }

  // errorFor shows a refusal in the set it names. One that names no set is not about an
  // answer (the panel always names its set) and is left to the host page's listeners.
  function errorFor(data, session) {
    data = data || {};
    var id = typeof data.requestId === "string" ? data.requestId : "";
    var entry = sets.find(session, id);
    if (!entry) {
      if (data.code === "not_pending") {
        notes.refused(session, id);
      }
      return;
    }
    var set = entry.set;
    var was = set.sending;
    if (data.code === "not_pending") {
      set.lost = was === "answers";
      set.gone = true;
      set.error = {message: S.gone};
    } else {
      set.error = {message: str(data.message) || str(data.code), problems: data.problems};
    }
    setSending(entry, "");
  }

  var unbindKeys = bindKeys(rootEl, {
    entryOf: function (node) {
      return setOf(node && node.closest ? node.closest("form.askuser-panel") : null);
    },
    submit: function (entry) {
      entry.view.submit();
    },
    decline: decline,
    dismiss: function (entry) {
      endSet(entry, null);
    },
    choose: choose
  }, opts.shortcuts !== false);

  // ---- the panel's face ---------------------------------------------------------------

  function handle(ev) {
    if (destroyed || !ev || typeof ev !== "object") {
      return false;
    }
    var mine = handleEvent(ev);
    if (mine) {
      changed();
    }
    return mine;
  }

  function handleEvent(ev) {
    switch (ev.type) {
      case EVENT_INBOX:
        inbox.setPerson(ev.data);
        approvals.refreshAll();
        return true;
      case EVENT_ASK:
        addSet(ev);
        return true;
      case EVENT_RESOLVED:
        if (ev.data && typeof ev.data.requestId === "string") {
          var entry = sets.find(sessionOf(ev), ev.data.requestId);
          endSet(entry, str(ev.data.outcome) || "ended");
          // An answered question's resolution carries the answers, for its note.
          if (Array.isArray(ev.data.answers)) {
            notes.setAnswers(entry ? entry.set.session : sessionOf(ev), ev.data.requestId, ev.data.answers);
          }
        }
        return true;
      case EVENT_ERROR:
        if (!approvals.error(ev.data, sessionOf(ev))) {
          errorFor(ev.data, sessionOf(ev));
        }
        return true;
    }
    if (ev.type === EVENT_APPROVAL_RESOLVED && ev.data && inbox.person()) {
      // Into the inbox's decided list, with what the card knew of it.
      var info = approvals.info(str(ev.data.requestId), sessionOf(ev));
      if (info) {
        inbox.resolved({session: info.session, sessionTitle: info.sessionTitle, requestId: info.requestId,
          what: info.tool, outcome: str(ev.data.outcome), by: str(ev.data.by), at: ev.data.at || new Date(now()).toISOString()});
      }
    }
    if (approvals.handle(ev)) {
      updateBanner();
      return true;
    }
    return false;
  }

  function setConnected(on) {
    on = !!on;
    if (on === connected) {
      return;
    }
    connected = on;
    sets.forEach(function (entry) {
      if (!on && entry.set.sending) {
        entry.set.error = {message: S.lostReply};
        setSending(entry, "");
      }
      refresh(entry);
    });
    approvals.setConnected(on);
    updateBanner();
  }

  function clear() {
    sets.forEach(function (entry) {
      clearTimeout(entry.replyTimer);
      if (entry.view.form.parentNode) {
        entry.view.form.parentNode.removeChild(entry.view.form);
      }
    });
    sets.clear();
    notes.clear();
    approvals.clear();
    banner.hidden = true;
    countdown.tick();
  }

  function destroy() {
    clear();
    destroyed = true;
    countdown.stop();
    approvals.destroy();
    inbox.destroy();
    unbindKeys();
    if (rootEl.parentNode) {
      rootEl.parentNode.removeChild(rootEl);
    }
  }

  return {
    handle: handle,
    setConnected: setConnected,
    setAnswers: function (requestId, answers, session) {
      if (Array.isArray(answers)) {
        notes.setAnswers(sessionArg(session), str(requestId), answers);
      }
    },
    requestIds: function () { return sets.ids(); },
    approvalIds: approvals.ids,
    readOnly: function (requestId, session) {
      var info = approvals.info(str(requestId), sessionArg(session));
      return !!info && info.readOnly;
    },
    // waiting is how many requests wait for this person: the question sets, and the
    // approvals not shown read-only.
    waiting: function () {
      return sets.size() + approvals.pending().filter(function (a) { return !a.readOnly; }).length;
    },
    lang: lang,
    clear: clear,
    destroy: destroy
  };
}
