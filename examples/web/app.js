// The demo page: a transcript of the scripted agent's run, a message box, and the askuser
// panel, all on the one WebSocket that AskUser.connect opens.
(function () {
  "use strict";

  var params = new URLSearchParams(location.search);
  var raw = params.get("session");
  if (!raw) {
    raw = String(100000 + Math.floor(Math.random() * 900000000));
    params.set("session", raw);
    history.replaceState(null, "", location.pathname + "?" + params.toString());
  }
  // A decimal id is a numeric session: a number in every event, as the server sends it.
  var sessionId = /^-?\d{1,15}$/.test(raw) ? Number(raw) : raw;

  var transcript = document.getElementById("transcript");
  var conn = document.getElementById("conn");
  var agentState = document.getElementById("agent-state");
  var form = document.getElementById("composer");
  var box = document.getElementById("message");
  document.getElementById("session-id").textContent = raw;

  // window.demo is for debugging and for the end-to-end tests: every event received, and
  // every Content-Security-Policy violation of the page.
  var demo = (window.demo = {sessionId: sessionId, events: [], cspViolations: [], client: null});
  document.addEventListener("securitypolicyviolation", function (e) {
    demo.cspViolations.push({directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample});
  });

  var ask = AskUser.connect({
    url: "/ws?session=" + encodeURIComponent(raw),
    container: document.getElementById("questions")
  });
  demo.client = ask;

  function el(tag, className, text) {
    var n = document.createElement(tag);
    if (className) {
      n.className = className;
    }
    if (text !== undefined && text !== null) {
      n.textContent = String(text);
    }
    return n;
  }

  function setConn(state, text) {
    conn.setAttribute("data-state", state);
    conn.textContent = text;
  }

  ask.on("*", function (data, ev) {
    demo.events.push(ev);
  });
  ask.on("open", function () {
    setConn("open", "Connected");
  });
  ask.on("close", function () {
    setConn("closed", "Disconnected");
  });
  ask.on("reconnecting", function (info) {
    setConn("reconnecting", "Reconnecting in " + Math.max(1, Math.round(info.delay / 1000)) + "s\u2026");
  });

  // ---- transcript ---------------------------------------------------------------------

  var lastSeq = 0;
  var toolCards = new Map(); // requestId -> card

  function append(li) {
    var atBottom = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
    transcript.appendChild(li);
    if (atBottom) {
      transcript.scrollTop = transcript.scrollHeight;
    }
  }

  function message(who, cls, text, extra) {
    var li = el("li", "entry " + cls);
    li.appendChild(el("div", "who", who));
    li.appendChild(el("div", "text", text));
    if (extra) {
      li.appendChild(extra);
    }
    append(li);
    return li;
  }

  function pretty(v) {
    if (typeof v === "string") {
      try {
        return JSON.stringify(JSON.parse(v), null, 2);
      } catch (e) {
        return v;
      }
    }
    return JSON.stringify(v, null, 2);
  }

  function toolCard(requestId, name) {
    var li = el("li", "entry tool");
    li.setAttribute("data-tool-call-id", requestId);
    var details = el("details");
    var summary = el("summary");
    summary.appendChild(el("span", "tool-name", name || "tool"));
    var state = el("span", "tool-state", "waiting for your answer\u2026");
    summary.appendChild(state);
    details.appendChild(summary);
    details.appendChild(el("div", "label", "Input"));
    var input = el("pre", "json");
    details.appendChild(input);
    details.appendChild(el("div", "label", "Output"));
    var output = el("pre", "json", "\u2026");
    details.appendChild(output);
    li.appendChild(details);
    var card = {li: li, state: state, input: input, output: output};
    toolCards.set(requestId, card);
    append(li);
    return card;
  }

  var render = {
    user_message: function (d) {
      message("You", "user", d.text, d.queued ? el("span", "queued", "queued until the agent is free") : null);
    },
    agent_message: function (d) {
      message("Agent", "agent", d.text);
    },
    tool_call: function (d) {
      var card = toolCard(String(d.requestId), d.name);
      card.input.textContent = pretty(d.arguments);
    },
    tool_result: function (d) {
      var card = toolCards.get(String(d.requestId)) || toolCard(String(d.requestId), "ask_user_questions");
      card.output.textContent = String(d.content);
      card.state.textContent = d.summary || d.outcome || "done";
      card.li.classList.toggle("is-error", !!d.isError);
      card.li.setAttribute("data-outcome", String(d.outcome || ""));
    },
    status: function (d) {
      var text = {idle: "Agent idle", running: "Agent working\u2026", waiting: "Agent waiting for your answer"}[d.state] || String(d.state);
      if (d.queued > 0) {
        text += " \u00b7 " + d.queued + " queued";
      }
      agentState.setAttribute("data-state", String(d.state));
      agentState.textContent = text;
    }
  };

  function show(ev) {
    var d = ev && ev.data;
    var fn = ev && render[ev.type];
    if (!fn || !d || typeof d.seq !== "number" || d.seq <= lastSeq) {
      return; // unknown, or already shown (it was in the history too)
    }
    lastSeq = d.seq;
    fn(d);
  }

  Object.keys(render).forEach(function (type) {
    ask.on(type, function (data, ev) {
      show(ev);
    });
  });

  // On every (re)connect the server sends the whole history: start over from it. Replaying
  // tool calls here never opens a panel; only ask_user_questions events do.
  ask.on("history", function (data) {
    while (transcript.firstChild) {
      transcript.removeChild(transcript.firstChild);
    }
    toolCards.clear();
    lastSeq = 0;
    ((data && data.events) || []).forEach(show);
    transcript.scrollTop = transcript.scrollHeight;
  });

  // Refusals that name no question are about the page's own messages.
  ask.on("ask_user_questions_error", function (data) {
    if (data && !data.requestId) {
      message("Server", "error", data.message || data.code);
    }
  });

  // ---- composer -----------------------------------------------------------------------

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var text = box.value;
    if (text.trim() === "") {
      return;
    }
    if (ask.send({type: "user_message", sessionId: sessionId, data: {text: text}})) {
      box.value = "";
    } else {
      message("Page", "error", "Not connected; the message was not sent.");
    }
  });
  box.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  document.getElementById("cancel").addEventListener("click", function () {
    if (!ask.send({type: "cancel", sessionId: sessionId})) {
      message("Page", "error", "Not connected; nothing was cancelled.");
    }
  });
})();
