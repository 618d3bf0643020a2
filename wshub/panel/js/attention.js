// createAttention: reaching the person whose page is hidden: the title, notifications.
//
// While anything is pending, the page's title carries a count ("(2) Waiting for you ·
// …"). With the person's permission, asked for only on a click of the panel's "Notify
// me", a desktop notification tells of each new request while the page is hidden;
// clicking it focuses the tab and that request, and it closes when the request ends on
// any device. The hub is told whenever the page is hidden or shown again (the event
// device_visibility), so that the server knows whether anyone is looking.
//
// Exports: createAttention, EVENT_VISIBILITY.

var EVENT_VISIBILITY = "device_visibility";
// NOTIFY_KEY remembers, per origin, that the person chose: "granted" or "denied".
var NOTIFY_KEY = "askuser.notify";

(function (tables) {
  tables.en.notifyMe = "Notify me";
  tables.en.notifyMeHint = "Show a desktop notification when the agent needs you and this tab is hidden.";
  tables.en.notifyOn = "Notifications on";
  tables.en.notifyBlocked = "Notifications are blocked for this site.";
  tables.en.waitingTitle = function (n) { return "(" + n + ") Waiting for you"; };
  tables.en.notifyQuestion = "The agent asks you";
  tables.en.notifyApproval = "The agent waits for your approval";
  tables.zh.notifyMe = "\u901a\u77e5\u6211";
  tables.zh.notifyMeHint = "\u5f53 Agent \u9700\u8981\u4f60\u800c\u672c\u6807\u7b7e\u9875\u5728\u540e\u53f0\u65f6\uff0c\u663e\u793a\u684c\u9762\u901a\u77e5\u3002";
  tables.zh.notifyOn = "\u901a\u77e5\u5df2\u5f00\u542f";
  tables.zh.notifyBlocked = "\u672c\u7ad9\u7684\u901a\u77e5\u5df2\u88ab\u963b\u6b62\u3002";
  tables.zh.waitingTitle = function (n) { return "(" + n + ") \u7b49\u4f60\u56de\u590d"; };
  tables.zh.notifyQuestion = "Agent \u5411\u4f60\u63d0\u95ee";
  tables.zh.notifyApproval = "Agent \u7b49\u4f60\u6279\u51c6";
})(STRINGS);

/**
 * createAttention keeps the title and the notifications in step with the panel's
 * requests. opts: container (where the "Notify me" control goes, at its end), notify
 * (false: no such control, nor notifications), S (the texts), send(obj), pending() (how
 * many requests are pending), focus(requestId, session) (brings a request into view; session
 * as sessionOf has it). Returns {opened(), arrived(event), ended(event), changed(),
 * destroy()}: arrived and ended take the request's event.
 */
function createAttention(opts) {
  var doc = root.document;
  var S = opts.S;
  var baseTitle = doc.title;
  var shown = {}; // requestKey -> Notification
  var canNotify = opts.notify !== false && typeof root.Notification === "function";

  var bar = el("div", "askuser-root askuser-attention");
  bar.setAttribute("data-testid", "attention");
  var button = el("button", "askuser-notify-me", S.notifyMe);
  button.type = "button";
  button.title = S.notifyMeHint;
  button.setAttribute("data-testid", "notify-me");
  var state = el("span", "askuser-notify-state");
  state.setAttribute("data-testid", "notify-state");
  state.setAttribute("role", "status");
  bar.appendChild(button);
  bar.appendChild(state);
  if (opts.notify !== false) {
    opts.container.appendChild(bar); // after the requests, when it is the panel's: a keyboard reaches them first
  }

  function permission() {
    return canNotify ? root.Notification.permission : "denied";
  }
  function remembered() {
    try {
      return root.localStorage.getItem(NOTIFY_KEY);
    } catch (e) {
      return null;
    }
  }
  function drawControl() {
    var p = permission();
    bar.hidden = !canNotify;
    var r = remembered();
    // Offered until the person chose on this origin: while the browser has not been
    // asked, and when it allows notifications but nobody turned them on here.
    button.hidden = !(p === "default" && r !== "denied" || p === "granted" && r !== "granted");
    state.textContent = p === "granted" && remembered() === "granted" ? S.notifyOn : p === "denied" ? S.notifyBlocked : "";
  }
  button.addEventListener("click", function () {
    if (!canNotify) {
      return;
    }
    var ask = root.Notification.requestPermission(function (p) { choose(p); });
    if (ask && typeof ask.then === "function") {
      ask.then(choose, function () {});
    }
  });
  function choose(p) {
    try {
      root.localStorage.setItem(NOTIFY_KEY, p === "granted" ? "granted" : "denied");
    } catch (e) {
      // Storage off: the browser remembers the permission anyway.
    }
    drawControl();
  }
  drawControl();

  function hidden() {
    return doc.visibilityState === "hidden" || doc.hidden === true;
  }
  function report(visible) {
    opts.send({type: EVENT_VISIBILITY, data: {visible: visible}});
  }
  function onVisibility() {
    report(!hidden());
  }
  function onPageHide() {
    report(false);
  }
  function onPageShow() {
    report(!hidden());
  }
  doc.addEventListener("visibilitychange", onVisibility);
  root.addEventListener("pagehide", onPageHide);
  root.addEventListener("pageshow", onPageShow);

  // changed puts the count in the title; later, after the next paint: a title set costs
  // the page a millisecond or more, which a new request's first paint need not wait for.
  var titleDue = false;
  var destroyed = false;
  function setTitle() {
    var n = opts.pending();
    var title = n > 0 ? S.waitingTitle(n) + (baseTitle ? " \u00b7 " + baseTitle : "") : baseTitle;
    if (!destroyed && doc.title !== title) {
      doc.title = title;
    }
  }
  function changed(later) {
    if (!later) {
      setTitle();
    } else if (!titleDue) {
      titleDue = true;
      afterPaint(function () {
        titleDue = false;
        setTitle();
      });
    }
  }

  function arrived(ev) {
    changed(true);
    var d = ev.data || {};
    var id = str(d.requestId);
    var session = sessionOf(ev);
    var key = requestKey(session, id);
    if (!id || shown[key] || !hidden() || permission() !== "granted" || remembered() !== "granted") {
      return;
    }
    var approval = ev.type === EVENT_APPROVAL;
    var q = d.questions && d.questions[0];
    var body = approval ? clean(d.tool) : q ? clean(q.question) : "";
    var n;
    try {
      n = new root.Notification(approval ? S.notifyApproval : S.notifyQuestion, {body: body, tag: "askuser-" + id});
    } catch (e) {
      return; // some browsers make notifications from a service worker only
    }
    shown[key] = n;
    n.onclick = function () {
      try {
        root.focus();
      } catch (e) {
        // focus is best effort
      }
      opts.focus(id, session);
      n.close();
    };
  }

  function ended(ev) {
    changed();
    var key = requestKey(sessionOf(ev), str(ev.data && ev.data.requestId));
    var n = shown[key];
    if (n) {
      delete shown[key];
      n.close();
    }
  }

  return {
    opened: function () {
      report(!hidden());
      changed();
    },
    arrived: arrived,
    ended: ended,
    changed: changed,
    destroy: function () {
      doc.removeEventListener("visibilitychange", onVisibility);
      root.removeEventListener("pagehide", onPageHide);
      root.removeEventListener("pageshow", onPageShow);
      for (var id in shown) {
        if (Object.prototype.hasOwnProperty.call(shown, id)) {
          shown[id].close();
        }
      }
      shown = {};
      destroyed = true;
      doc.title = baseTitle;
      if (bar.parentNode) {
        bar.parentNode.removeChild(bar);
      }
    }
  };
}
