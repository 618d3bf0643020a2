// createInbox: a person's inbox, every pending request across sessions and what ended.
//
// Once the hub says who the panel is connected as (the inbox event), a bar names the
// person and offers "Inbox (N)": a view beside the session's, listing every question and
// approval the connection holds, of all its sessions and those routed to the person,
// newest first, and below them the approvals decided lately. Picking one shows its card
// (the panel shows only that one while the inbox is open). The inbox reads what the
// panel holds; it keeps only the decided list and the choice.
//
// Exports: createInbox.

var INBOX_DECIDED_LIMIT = 50; // decided approvals listed at most
var INBOX_TICK_MS = 20000; // how often "3 min ago" is brought up to date

/**
 * createInbox makes the bar and the inbox view and puts them in parent before next (see
 * place), the bar hidden until setPerson. ctx: {S, now(), items() (the pending requests,
 * as {kind, requestId, session, sessionTitle, what, askedAt, readOnly}), onSelect(item),
 * onToggle(open), hidden (true: no bar nor view, the person known all the same)}.
 * Returns {setPerson(data), person(), resolved(entry), render(), place(next), isOpen(),
 * selected(), destroy()}.
 */
function createInbox(parent, next, ctx) {
  var S = ctx.S;
  var bar = el("div", "askuser-inbox-bar");
  bar.setAttribute("data-testid", "inbox-bar");
  bar.hidden = true;
  var who = el("p", "askuser-inbox-who");
  who.setAttribute("data-testid", "inbox-who");
  who.dir = "auto";
  var toggle = el("button", "askuser-button askuser-inbox-toggle");
  toggle.type = "button";
  toggle.setAttribute("data-testid", "inbox-toggle");
  toggle.setAttribute("aria-expanded", "false");
  bar.appendChild(who);
  bar.appendChild(toggle);

  var view = el("section", "askuser-inbox");
  view.id = newId("inbox");
  view.setAttribute("data-testid", "inbox");
  view.setAttribute("aria-label", S.inboxTitle);
  view.hidden = true;
  toggle.setAttribute("aria-controls", view.id);
  var pendingHead = el("h2", "askuser-inbox-head");
  pendingHead.setAttribute("data-testid", "inbox-pending-head");
  var pendingList = el("ul", "askuser-inbox-list");
  pendingList.setAttribute("data-testid", "inbox-pending");
  pendingList.setAttribute("aria-label", S.inboxTitle);
  var nothing = el("p", "askuser-inbox-empty", S.inboxNothing);
  var decidedHead = el("h2", "askuser-inbox-head", S.inboxDecided);
  var decidedList = el("ul", "askuser-inbox-list askuser-inbox-decided");
  decidedList.setAttribute("data-testid", "inbox-decided");
  decidedList.setAttribute("aria-label", S.inboxDecided);
  var noneDecided = el("p", "askuser-inbox-empty", S.inboxNoneDecided);
  [pendingHead, pendingList, nothing, decidedHead, decidedList, noneDecided].forEach(function (n) {
    view.appendChild(n);
  });
  parent.insertBefore(bar, next);
  parent.insertBefore(view, next);

  // Written only by the functions below, on the page's one thread.
  var person = null; // {user, groups}, from the inbox event
  var decided = []; // {key, sessionTitle, session, requestId, what, outcome, by, at}, newest first
  var open = false;
  var chosen = null; // {key, kind, session, requestId} of the request picked, kept after it ends
  var rows = new Map(); // key -> {li, button, title, what, meta}
  var timer = null;

  function names(list) {
    return (Array.isArray(list) ? list : []).map(str).filter(function (n) { return n !== ""; });
  }

  function keyOf(kind, session, requestId) {
    return kind + "\u0000" + sessionKey(session) + "\u0000" + requestId;
  }

  function ago(at) {
    return S.inboxAgo(Math.max(0, Math.round((ctx.now() - at) / 1000)));
  }

  function titleOf(title, session) {
    return clean(title || sessionText(session));
  }

  toggle.addEventListener("click", function () {
    open = !open;
    render();
    ctx.onToggle(open);
  });

  function row(key) {
    var r = rows.get(key);
    if (r) {
      return r;
    }
    r = {li: el("li", "askuser-inbox-row"), button: el("button", "askuser-button askuser-inbox-item")};
    r.button.type = "button";
    r.button.setAttribute("data-testid", "inbox-item");
    r.title = el("span", "askuser-inbox-title");
    r.title.dir = "auto";
    r.kind = el("span", "askuser-inbox-kind");
    r.what = el("span", "askuser-inbox-what");
    r.what.dir = "auto";
    r.meta = el("span", "askuser-inbox-meta");
    var line = el("span", "askuser-inbox-line");
    line.appendChild(r.kind);
    line.appendChild(r.what);
    [r.title, line, r.meta].forEach(function (n) { r.button.appendChild(n); });
    r.li.appendChild(r.button);
    r.button.addEventListener("click", function () {
      chosen = {key: key, kind: r.item.kind, session: r.item.session, requestId: r.item.requestId};
      render();
      ctx.onSelect(r.item);
    });
    rows.set(key, r);
    return r;
  }

  function renderPending() {
    var items = ctx.items().map(function (it) {
      it.key = keyOf(it.kind, it.session, it.requestId);
      return it;
    });
    items.sort(function (a, b) { return (b.askedAt || 0) - (a.askedAt || 0); });
    var keep = new Set();
    var order = items.map(function (it) {
      keep.add(it.key);
      var r = row(it.key);
      r.item = it;
      r.title.textContent = titleOf(it.sessionTitle, it.session);
      r.kind.textContent = S.inboxKind[it.kind] + ": ";
      r.what.textContent = clean(it.what);
      r.meta.textContent = ago(it.askedAt) + (it.readOnly ? S.inboxSep + S.inboxReadOnly : "");
      r.button.setAttribute("data-kind", it.kind);
      r.button.setAttribute("data-readonly", it.readOnly ? "true" : "false");
      r.button.setAttribute("data-inbox-request", it.requestId);
      r.button.setAttribute("aria-current", chosen && chosen.key === it.key ? "true" : "false");
      return r.li;
    });
    rows.forEach(function (r, key) {
      if (!keep.has(key)) {
        if (r.li.parentNode) {
          r.li.parentNode.removeChild(r.li);
        }
        rows.delete(key);
      }
    });
    // Moved only when the order changed: a moved button loses the focus.
    var same = order.length === pendingList.children.length && order.every(function (li, i) {
      return pendingList.children[i] === li;
    });
    if (!same) {
      var active = document.activeElement;
      order.forEach(function (li) { pendingList.appendChild(li); });
      if (active && pendingList.contains(active) && document.activeElement !== active) {
        active.focus();
      }
    }
    nothing.hidden = items.length > 0;
    pendingHead.textContent = S.inboxPending(items.length);
    toggle.textContent = S.inboxToggle(items.length);
  }

  function renderDecided() {
    while (decidedList.firstChild) {
      decidedList.removeChild(decidedList.firstChild);
    }
    decided.forEach(function (d) {
      var li = el("li", "askuser-inbox-row askuser-inbox-done");
      li.setAttribute("data-testid", "inbox-decided-item");
      li.setAttribute("data-outcome", d.outcome);
      var title = el("span", "askuser-inbox-title", titleOf(d.sessionTitle, d.session));
      title.dir = "auto";
      var line = el("span", "askuser-inbox-line");
      line.appendChild(el("span", "askuser-inbox-kind", S.inboxKind.approval + ": "));
      var what = el("span", "askuser-inbox-what", clean(d.what));
      what.dir = "auto";
      line.appendChild(what);
      var meta = el("span", "askuser-inbox-meta", S.inboxOutcome(d.outcome, clean(d.by)) +
        (isNaN(d.at) ? "" : S.inboxSep + ago(d.at)));
      meta.dir = "auto";
      [title, line, meta].forEach(function (n) { li.appendChild(n); });
      decidedList.appendChild(li);
    });
    noneDecided.hidden = decided.length > 0;
  }

  function render() {
    if (!person || ctx.hidden) {
      return;
    }
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    view.hidden = !open;
    renderPending();
    renderDecided();
  }

  function decidedOf(e) {
    var session = e.session !== undefined ? e.session : sessionOf({sessionId: e.sessionId});
    var requestId = str(e.requestId);
    return {key: keyOf("approval", session, requestId), session: session, sessionTitle: str(e.sessionTitle),
      requestId: requestId, what: str(e.what), outcome: str(e.outcome), by: str(e.by), at: Date.parse(str(e.at))};
  }

  function keepDecided(list) {
    var seen = new Set();
    decided = list.filter(function (d) {
      var fresh = d.requestId !== "" && !seen.has(d.key);
      seen.add(d.key);
      return fresh;
    });
    decided.sort(function (a, b) { return (b.at || 0) - (a.at || 0); });
    decided = decided.slice(0, INBOX_DECIDED_LIMIT);
  }

  return {
    // setPerson takes the inbox event's data: who the panel is connected as, and what
    // was decided lately (the server's list replaces the one kept).
    setPerson: function (data) {
      data = data && typeof data === "object" ? data : {};
      person = {user: str(data.user), groups: names(data.groups)};
      who.textContent = S.inboxWho(clean(person.user), clean(person.groups.join(S.approvalNames)));
      keepDecided((Array.isArray(data.decided) ? data.decided : []).filter(function (e) {
        return e && typeof e === "object";
      }).map(decidedOf));
      bar.hidden = !!ctx.hidden;
      if (!timer) {
        timer = setInterval(render, INBOX_TICK_MS);
      }
      render();
    },
    person: function () { return person; },
    // resolved adds an approval that ended, as an inbox entry (its session as sessionOf
    // has it, in session).
    resolved: function (e) {
      if (person) {
        keepDecided([decidedOf(e)].concat(decided));
        render();
      }
    },
    render: render,
    // place moves the bar and the view before next (null: to the end of parent), keeping
    // the focus on the toggle.
    place: function (next) {
      var had = document.activeElement === toggle;
      parent.insertBefore(bar, next);
      parent.insertBefore(view, next);
      if (had && document.activeElement !== toggle) {
        toggle.focus();
      }
    },
    isOpen: function () { return open && !!person && !ctx.hidden; },
    selected: function () { return chosen; },
    destroy: function () {
      clearInterval(timer);
      timer = null;
      [bar, view].forEach(function (n) {
        if (n.parentNode) {
          n.parentNode.removeChild(n);
        }
      });
    }
  };
}
