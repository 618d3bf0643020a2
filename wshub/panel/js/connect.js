// connect: the WebSocket, reconnecting with backoff.
//
// The WebSocket to the hub, reopened with backoff; the page's own events share it.
//
// Exports: connect.

function wsURL(url) {
  var u = new URL(url, root.location.href);
  if (u.protocol === "http:") {
    u.protocol = "ws:";
  } else if (u.protocol === "https:") {
    u.protocol = "wss:";
  }
  return u.href;
}

/**
 * connect opens a WebSocket to options.url (relative URLs are resolved against the page,
 * http becomes ws) and renders the session's questions, and its approvals below them,
 * into options.container.
 *
 * Options: url, container (both required); lang ("en", "zh"); strings (overrides of the
 * panel's texts); maxCustomInput; autoFocus; drafts; shortcuts; minDelay and maxDelay, in
 * milliseconds, of the reconnect backoff (default 500 and 30000); attention (false: no
 * title count, "Notify me" or visibility reports); notify (false: no "Notify me" nor
 * desktop notifications, the title count and visibility reports kept); notifyContainer
 * (where "Notify me" goes; default the end of container); inbox (false: no inbox bar nor
 * view for a person, read-only cards kept). docs/WEB.md has each.
 *
 * Returns a client:
 *   send(obj)       sends obj (JSON-encoded unless a string); false when not connected.
 *   on(type, fn)    calls fn(data, event) for each server event of that type ("*" for
 *                   all), and fn(info) for "open", "close" and "reconnecting"; returns a
 *                   function that removes fn.
 *   connected()     whether the socket is open.
 *   requestIds()    the requestIds of the panels shown, oldest first.
 *   approvalIds()   the requestIds of the approvals shown, oldest first.
 *   setAnswers(id, answers, session)  what a question set's answers were, for its note
 *                   (session: an event of the set, or its sessionId; none: the one set of id).
 *   reconnect()     reconnects now instead of waiting for the backoff.
 *   close()         closes the socket for good and removes the panels.
 */
function connect(options) {
  var opts = options || {};
  if (!opts.url) {
    throw new TypeError("AskUser.connect: options.url is required");
  }
  var minDelay = opts.minDelay > 0 ? opts.minDelay : 500;
  var maxDelay = opts.maxDelay > 0 ? opts.maxDelay : 30000;
  var listeners = {};
  var ws = null;
  var isOpen = false;
  var closed = false;
  var attempt = 0;
  var retry = null;

  function emit(type, a, b) {
    var fns = listeners[type];
    if (!fns) {
      return;
    }
    fns.slice().forEach(function (fn) {
      try {
        fn(a, b);
      } catch (e) {
        if (root.console) {
          root.console.error("AskUser: listener for " + type + " failed:", e);
        }
      }
    });
  }

  function send(obj) {
    if (!ws || !isOpen) {
      return false;
    }
    try {
      ws.send(stringifyEvent(obj));
      return true;
    } catch (e) {
      return false;
    }
  }

  var panel = createPanel({
    container: opts.container,
    lang: opts.lang,
    strings: opts.strings,
    maxCustomInput: opts.maxCustomInput,
    autoFocus: opts.autoFocus,
    drafts: opts.drafts,
    shortcuts: opts.shortcuts,
    inbox: opts.inbox,
    send: send,
    connected: false
  });
  var attention = opts.attention === false ? null : createAttention({
    container: opts.notifyContainer || opts.container,
    notify: opts.notify,
    S: stringsFor(panel.lang, opts.strings),
    send: send,
    // What waits for this person: an approval shown read-only waits for others.
    pending: function () {
      return panel.waiting();
    },
    focus: function (id, session) {
      var nodes = opts.container.querySelectorAll("[data-request-id]");
      for (var i = 0; i < nodes.length; i++) {
        if (nodes[i].getAttribute("data-request-id") === id && nodes[i].getAttribute("data-session-key") === sessionKey(session)) {
          var target = nodes[i].querySelector("button:not([hidden]), input, textarea") || nodes[i];
          if (nodes[i].scrollIntoView) {
            nodes[i].scrollIntoView({block: "center"});
          }
          target.focus();
          return;
        }
      }
    }
  });

  function schedule() {
    if (closed || retry) {
      return;
    }
    var base = Math.min(maxDelay, minDelay * Math.pow(2, Math.min(attempt, 20)));
    attempt += 1;
    var delay = Math.round(base * (0.8 + Math.random() * 0.4));
    retry = setTimeout(function () {
      retry = null;
      open();
    }, delay);
    emit("reconnecting", {attempt: attempt, delay: delay});
  }

  function open() {
    if (closed) {
      return;
    }
    var sock;
    try {
      sock = new root.WebSocket(wsURL(opts.url));
    } catch (e) {
      schedule();
      return;
    }
    ws = sock;
    sock.onopen = function () {
      if (ws !== sock) {
        return;
      }
      isOpen = true;
      attempt = 0;
      panel.setConnected(true);
      if (attention) {
        attention.opened();
      }
      emit("open", {});
    };
    sock.onmessage = function (m) {
      if (ws !== sock || typeof m.data !== "string") {
        return;
      }
      var ev;
      try {
        ev = parseEvent(m.data);
      } catch (e) {
        return;
      }
      if (!ev || typeof ev !== "object" || typeof ev.type !== "string") {
        return;
      }
      try {
        panel.handle(ev);
      } catch (e) {
        if (root.console) {
          root.console.error("AskUser: could not show a " + ev.type + " event:", e);
        }
      }
      if (attention) {
        if (ev.type === EVENT_ASK || (ev.type === EVENT_APPROVAL && !panel.readOnly(str(ev.data && ev.data.requestId), ev))) {
          attention.arrived(ev);
        } else if (ev.type === EVENT_RESOLVED || ev.type === EVENT_APPROVAL_RESOLVED) {
          attention.ended(ev);
        } else {
          attention.changed();
        }
      }
      emit(ev.type, ev.data, ev);
      emit("*", ev.data, ev);
    };
    sock.onclose = function (e) {
      if (ws !== sock) {
        return;
      }
      ws = null;
      var was = isOpen;
      isOpen = false;
      panel.setConnected(false);
      emit("close", {code: e.code, reason: e.reason, wasOpen: was});
      schedule();
    };
    sock.onerror = function () {
      // A close event follows; reconnecting happens there.
    };
  }

  function reconnect() {
    if (closed || isOpen) {
      return;
    }
    if (retry) {
      clearTimeout(retry);
      retry = null;
    }
    if (ws) {
      return; // a connection attempt is in flight
    }
    open();
  }

  function onOnline() {
    attempt = 0;
    reconnect();
  }
  if (root.addEventListener) {
    root.addEventListener("online", onOnline);
  }

  open();

  return {
    send: send,
    on: function (type, fn) {
      if (typeof fn !== "function") {
        throw new TypeError("AskUser: on(type, fn) needs a function");
      }
      (listeners[type] = listeners[type] || []).push(fn);
      return function () {
        var fns = listeners[type] || [];
        var i = fns.indexOf(fn);
        if (i >= 0) {
          fns.splice(i, 1);
        }
      };
    },
    connected: function () { return isOpen; },
    requestIds: panel.requestIds,
    approvalIds: panel.approvalIds,
    setAnswers: panel.setAnswers,
    lang: panel.lang,
    reconnect: reconnect,
    close: function () {
      closed = true;
      if (retry) {
        clearTimeout(retry);
        retry = null;
      }
      if (root.removeEventListener) {
        root.removeEventListener("online", onOnline);
      }
      var sock = ws;
      ws = null;
      isOpen = false;
      if (sock) {
        sock.close(1000, "closed by the page");
      }
      panel.destroy();
      if (attention) {
        attention.destroy();
      }
    }
  };
}
