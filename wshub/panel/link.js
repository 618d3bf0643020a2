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
  var ask = window.AskUser.connect({url: path + "/ws", container: container, autoFocus: true});
  var done = document.createElement("p");
  done.className = "askuser-link-done";
  done.hidden = true;
  done.textContent = "There is nothing more to do here.";
  container.parentNode.insertBefore(done, container.nextSibling);
  function over() {
    done.hidden = false;
  }
  ask.on("ask_user_questions_resolved", over);
  ask.on("tool_approval_resolved", over);
  // The request may have ended between the page and its socket: the server then shows
  // nothing on the socket, and the page, loaded again, says how it ended.
  ask.on("open", function () {
    window.setTimeout(function () {
      if (ask.requestIds().length === 0 && done.hidden && !window.sessionStorage.getItem("askuser-link-reloaded")) {
        window.sessionStorage.setItem("askuser-link-reloaded", "1");
        window.location.reload();
      }
    }, 2000);
  });
})();
