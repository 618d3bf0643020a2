/*
 * askuser link pages. An answer link's: the panel for the one request the link is for, on
 * the page's own WebSocket (the link's path + "/ws"), which carries that request's events
 * alone. An action link's confirmation page: the tool call, shown by the panel's own rules
 * (AskUser.showApproval), then the form that decides it. Served by wshub's LinkHandler
 * beside panel.js; nothing else is needed on the page.
 */
(function () {
  "use strict";
  var call = document.getElementById("askuser-link-call");
  if (call && window.AskUser) {
    window.AskUser.showApproval(call, window.AskUser.parse(call.getAttribute("data-event")));
    // The form only once the call is shown: nobody decides what they have not seen.
    call.parentNode.querySelector("form").hidden = false;
    return;
  }
  var container = document.getElementById("askuser-link-panel");
  if (!container || !window.AskUser) {
    return;
  }
  var path = window.location.pathname.replace(/\/+$/, "");
  // No "Notify me": this page's socket carries its one request, never a new one to tell of.
  var ask = window.AskUser.connect({url: path + "/ws", container: container, autoFocus: true, notify: false});

  // What the page says once the request has ended, in the panel's column. The panel leaves
  // a note when the request ended otherwise (another device, the timeout); when this
  // page's own answer or decision ended it, the panel only tells a screen reader, and the
  // heading says it on screen, in the panel's words.
  var OWN = {
    answered: "Answer sent.",
    declined: "The question was declined.",
    approved: "Approved.",
    edited: "Edited: the tool runs with your arguments.",
    denied: "Denied."
  };
  var done = document.createElement("div");
  done.className = "askuser-link-done";
  done.setAttribute("data-testid", "link-done");
  done.hidden = true;
  var heading = document.createElement("h1");
  heading.tabIndex = -1;
  heading.hidden = true;
  var rest = document.createElement("p");
  rest.textContent = "There is nothing more to do here.";
  done.appendChild(heading);
  done.appendChild(rest);
  container.appendChild(done);

  function over(data) {
    var note = container.querySelector(".askuser-note");
    var own = !note && data && (data.outcome === "approved" && data.grant ? "Always allowed for this session." : OWN[data.outcome]);
    heading.textContent = own || "";
    heading.hidden = !own;
    done.hidden = false;
    var a = document.activeElement;
    if (own && (!a || a === document.body || a === document.documentElement)) {
      heading.focus();
    }
  }
  ask.on("ask_user_questions_resolved", over);
  ask.on("tool_approval_resolved", over);
  // The request may have ended between the page and its socket: the server then shows
  // nothing on the socket, and the page, loaded again, says how it ended.
  ask.on("open", function () {
    window.setTimeout(function () {
      if (ask.requestIds().length === 0 && ask.approvalIds().length === 0 && done.hidden && !window.sessionStorage.getItem("askuser-link-reloaded")) {
        window.sessionStorage.setItem("askuser-link-reloaded", "1");
        window.location.reload();
      }
    }, 2000);
  });
})();
