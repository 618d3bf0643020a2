// The demo page: a transcript of the scripted agent's run, a message box, and the askuser
// panel, all on the one WebSocket that AskUser.connect opens. English or Chinese: ?lang=en
// or ?lang=zh, else the browser's language.
(function () {
  "use strict";

  var TEXT = {
    en: {
      title: "askuser demo",
      session: "Session",
      newSession: "New session",
      otherLanguage: "\u4e2d\u6587",
      notice: "Demo only: anyone with this URL can read and answer its questions; a real host authenticates each connection.",
      noticeTip: "Open it in a second tab to see two devices: answer in one and the other clears.",
      transcript: "Transcript",
      empty: "Send any message to start: the agent will ask you a few questions on this page, and your answers go back to it.",
      questions: "Questions and approvals from the agent",
      messageLabel: "Message to the agent",
      placeholder: "Send any message to start the tour, or /help for the commands. Enter sends, Shift+Enter makes a new line.",
      placeholderShort: "Send any message to start, or /help",
      send: "Send",
      cancel: "Cancel run",
      connecting: "Connecting\u2026",
      connected: "Connected",
      disconnected: "Disconnected",
      reconnecting: function (s) { return "Reconnecting in " + s + "s\u2026"; },
      states: {idle: "Agent idle", running: "Agent working\u2026", waiting: "Agent waiting for your answer",
        approval: "Agent waiting for your approval"},
      queuedCount: function (n) { return " \u00b7 " + n + " queued"; },
      below: function (questions, approvals) {
        var n = questions + approvals;
        var what = n > 1 ? n + " more requests" : approvals ? "An approval" : "A question";
        return what + " below";
      },
      you: "You",
      agent: "Agent",
      server: "Server",
      page: "Page",
      queued: "queued until the agent is free",
      waitingForAnswer: "waiting for your answer\u2026",
      running: "running\u2026",
      waitingForApproval: "waiting for your approval\u2026",
      input: "Input",
      output: "Output",
      notSent: "Not connected; the message was not sent.",
      notCancelled: "Not connected; nothing was cancelled.",
      // The tool card's summary, as askuser.Summary words it.
      answered: function (n) { return n === 1 ? "Answered 1 question" : "Answered " + n + " questions"; },
      outcomes: {
        timeout: "No answer: timed out",
        cancelled: "No answer: session cancelled",
        declined: "Declined to answer",
        undelivered: "Not asked: no device reached",
        disconnected: "No answer: disconnected",
        shutdown: "No answer: service shutting down"
      },
      invalid: function (n) { return "Invalid question (" + n + " problems)"; },
      unknown: "Unrecognized result",
      colon: ": ",
      separator: ", "
    },
    zh: {
      title: "askuser \u6f14\u793a",
      session: "\u4f1a\u8bdd",
      newSession: "\u65b0\u4f1a\u8bdd",
      otherLanguage: "English",
      notice: "\u4ec5\u4f9b\u6f14\u793a\uff1a\u4efb\u4f55\u62ff\u5230\u8fd9\u4e2a URL \u7684\u4eba\u90fd\u80fd\u67e5\u770b\u5e76\u56de\u7b54\u5b83\u7684\u95ee\u9898\uff1b" +
        "\u771f\u6b63\u7684\u5bbf\u4e3b\u4f1a\u8ba4\u8bc1\u6bcf\u4e2a\u8fde\u63a5\u3002",
      noticeTip: "\u5728\u7b2c\u4e8c\u4e2a\u6807\u7b7e\u9875\u4e2d\u6253\u5f00\u5b83\uff0c\u5c31\u662f\u4e24\u53f0\u8bbe\u5907\uff1a\u5728\u4e00\u4e2a\u91cc\u56de\u7b54\uff0c\u53e6\u4e00\u4e2a\u5c31\u4f1a\u6e05\u9664\u3002",
      transcript: "\u5bf9\u8bdd\u8bb0\u5f55",
      empty: "\u53d1\u9001\u4efb\u610f\u6d88\u606f\u5373\u53ef\u5f00\u59cb\uff1aAgent \u4f1a\u5728\u672c\u9875\u5411\u4f60\u63d0\u51e0\u4e2a\u95ee\u9898\uff0c\u4f60\u7684\u56de\u7b54\u4f1a\u53d1\u56de\u7ed9\u5b83\u3002",
      questions: "Agent \u7684\u95ee\u9898\u548c\u6279\u51c6\u8bf7\u6c42",
      messageLabel: "\u53d1\u7ed9 Agent \u7684\u6d88\u606f",
      placeholder: "\u53d1\u9001\u4efb\u610f\u6d88\u606f\u5f00\u59cb\u6f14\u793a\uff0c\u6216\u8f93\u5165 /help \u67e5\u770b\u547d\u4ee4\u3002Enter \u53d1\u9001\uff0cShift+Enter \u6362\u884c\u3002",
      placeholderShort: "\u53d1\u9001\u4efb\u610f\u6d88\u606f\u5f00\u59cb\uff0c\u6216\u8f93\u5165 /help",
      send: "\u53d1\u9001",
      cancel: "\u53d6\u6d88\u8fd0\u884c",
      connecting: "\u6b63\u5728\u8fde\u63a5\u2026",
      connected: "\u5df2\u8fde\u63a5",
      disconnected: "\u5df2\u65ad\u5f00",
      reconnecting: function (s) { return s + " \u79d2\u540e\u91cd\u8fde\u2026"; },
      states: {idle: "Agent \u7a7a\u95f2", running: "Agent \u5de5\u4f5c\u4e2d\u2026", waiting: "Agent \u5728\u7b49\u4f60\u56de\u7b54",
        approval: "Agent \u5728\u7b49\u4f60\u6279\u51c6"},
      queuedCount: function (n) { return " \u00b7 \u6392\u961f " + n + " \u6761"; },
      below: function (questions, approvals) {
        var n = questions + approvals;
        return "\u4e0b\u9762\u8fd8\u6709" + (n > 1 ? " " + n + " \u4e2a\u8bf7\u6c42" : approvals ? "\u4e00\u4e2a\u6279\u51c6\u8bf7\u6c42" : "\u4e00\u4e2a\u95ee\u9898");
      },
      you: "\u4f60",
      agent: "Agent",
      server: "\u670d\u52a1\u5668",
      page: "\u9875\u9762",
      queued: "\u6392\u961f\u4e2d\uff0cAgent \u7a7a\u95f2\u540e\u8bfb\u53d6",
      waitingForAnswer: "\u7b49\u5f85\u4f60\u7684\u56de\u7b54\u2026",
      running: "\u8fd0\u884c\u4e2d\u2026",
      waitingForApproval: "\u7b49\u5f85\u4f60\u7684\u6279\u51c6\u2026",
      input: "\u8f93\u5165",
      output: "\u8f93\u51fa",
      notSent: "\u672a\u8fde\u63a5\uff0c\u6d88\u606f\u6ca1\u6709\u53d1\u51fa\u3002",
      notCancelled: "\u672a\u8fde\u63a5\uff0c\u4ec0\u4e48\u4e5f\u6ca1\u6709\u53d6\u6d88\u3002",
      answered: function (n) { return "\u56de\u7b54\u4e86 " + n + " \u4e2a\u95ee\u9898"; },
      outcomes: {
        timeout: "\u672a\u56de\u7b54:\u5df2\u8d85\u65f6",
        cancelled: "\u672a\u56de\u7b54:\u4f1a\u8bdd\u5df2\u53d6\u6d88",
        declined: "\u7528\u6237\u62d2\u7edd\u56de\u7b54",
        undelivered: "\u672a\u63d0\u95ee:\u6ca1\u6709\u53ef\u7528\u8bbe\u5907",
        disconnected: "\u672a\u56de\u7b54:\u8fde\u63a5\u5df2\u65ad\u5f00",
        shutdown: "\u672a\u56de\u7b54:\u670d\u52a1\u6b63\u5728\u5173\u95ed"
      },
      invalid: function (n) { return "\u63d0\u95ee\u65e0\u6548(" + n + " \u4e2a\u95ee\u9898)"; },
      unknown: "\u65e0\u6cd5\u8bc6\u522b\u7684\u7ed3\u679c",
      colon: "\uff1a",
      separator: "\u3001"
    }
  };

  var params = new URLSearchParams(location.search);
  var raw = params.get("session");
  if (!raw) {
    raw = String(100000 + Math.floor(Math.random() * 900000000));
    params.set("session", raw);
    history.replaceState(null, "", location.pathname + "?" + params.toString());
  }
  var asked = params.get("lang") || (navigator.languages && navigator.languages[0]) || navigator.language || "";
  var lang = /^zh(?:-|_|$)/i.test(asked) ? "zh" : "en";
  var T = TEXT[lang];
  // A page may give texts of its own (its title, say), by language:
  // <script type="application/json" id="page-texts">{"en": {"title": "..."}, "zh": {...}}</script>
  var own = document.getElementById("page-texts");
  if (own) {
    T = Object.assign({}, T, JSON.parse(own.textContent)[lang]);
  }
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.title = T.title;

  var transcript = document.getElementById("transcript");
  var empty = document.getElementById("empty");
  var conn = document.getElementById("conn");
  var agentState = document.getElementById("agent-state");
  var form = document.getElementById("composer");
  var box = document.getElementById("message");
  var questions = document.getElementById("questions");
  document.getElementById("session-id").textContent = raw;

  // The page's own texts in the chosen language.
  Array.prototype.forEach.call(document.querySelectorAll("[data-text]"), function (n) {
    n.textContent = T[n.getAttribute("data-text")];
  });
  transcript.setAttribute("aria-label", T.transcript);
  questions.setAttribute("aria-label", T.questions);
  // A phone's message box is narrow: it gets the placeholder's first half, whole.
  var narrow = window.matchMedia("(max-width: 640px)");
  function placeholder() {
    box.placeholder = narrow.matches ? T.placeholderShort : T.placeholder;
  }
  placeholder();
  narrow.addEventListener("change", placeholder);
  conn.textContent = T.connecting;
  agentState.textContent = T.states.idle;
  var other = lang === "zh" ? "en" : "zh";
  var switchLink = document.getElementById("lang-switch");
  var switchParams = new URLSearchParams(params);
  switchParams.set("lang", other);
  switchLink.href = "?" + switchParams.toString();
  switchLink.textContent = T.otherLanguage;
  switchLink.lang = other === "zh" ? "zh-CN" : "en";
  switchLink.hreflang = other;
  // The person the page is (examples/web: ?as=alice; the developer without it) stays
  // with a new session.
  var person = params.get("as");
  document.getElementById("new-session").href = "/?lang=" + lang + (person ? "&as=" + encodeURIComponent(person) : "");

  // window.demo is for debugging and for the end-to-end tests: every event received, and
  // every Content-Security-Policy violation of the page.
  var demo = (window.demo = {session: raw, person: person, lang: lang, events: [], cspViolations: [], client: null});
  document.addEventListener("securitypolicyviolation", function (e) {
    demo.cspViolations.push({directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample});
  });

  var ask = AskUser.connect({
    url: "/ws?session=" + encodeURIComponent(raw) + (person ? "&as=" + encodeURIComponent(person) : ""),
    container: questions,
    notifyContainer: document.getElementById("notify"),
    lang: lang
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

  // modelText is text a model wrote: shown as text, in its own direction, without the
  // bidirectional controls that could disguise it.
  function modelText(tag, className, text) {
    var n = el(tag, className, String(text).replace(/[\u202A-\u202E\u2066-\u2069]/g, ""));
    n.dir = "auto";
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
    setConn("open", T.connected);
  });
  ask.on("close", function () {
    setConn("closed", T.disconnected);
  });
  ask.on("reconnecting", function (info) {
    setConn("reconnecting", T.reconnecting(Math.max(1, Math.round(info.delay / 1000))));
  });

  // ---- transcript ---------------------------------------------------------------------

  // The transcript follows its newest entry unless the person has scrolled up to read:
  // when entries come, and when its box changes size because a question panel comes or
  // goes. Only the person's own scrolling says which. The box also scrolls by itself when
  // its size changes (the browser clamps or anchors its position), and such a scroll says
  // nothing of what the person wants to see: taken for theirs, it left the transcript
  // stuck above its newest entry once the next question's panel took the room back.
  var follow = true;
  // touched: the person has turned the wheel, touched, clicked or pressed a key in the
  // transcript (or a key on the page's body, which scrolls what was clicked last) since
  // the page last scrolled it; the scroll events until then are theirs.
  var touched = false;
  var pinFrame = 0;

  function toBottom() {
    touched = false;
    transcript.scrollTop = transcript.scrollHeight;
  }
  // followNow scrolls to the newest entry now, and again at the next frame, once the rest
  // of what came with this entry (the panel of the next question, say) is laid out too.
  function followNow() {
    toBottom();
    if (!pinFrame) {
      pinFrame = requestAnimationFrame(function () {
        pinFrame = 0;
        if (follow) {
          toBottom();
        }
      });
    }
  }
  ["wheel", "touchstart", "pointerdown", "keydown"].forEach(function (type) {
    document.addEventListener(type, function (e) {
      touched = transcript.contains(e.target) || (e.type === "keydown" && e.target === document.body);
    }, {capture: true, passive: true});
  });
  transcript.addEventListener("scroll", function () {
    if (touched) {
      follow = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 24;
    }
  });
  if (window.ResizeObserver) {
    new ResizeObserver(function () {
      if (follow) {
        toBottom();
      }
    }).observe(transcript);
  }

  var lastSeq = 0;
  var toolCards = new Map(); // requestId -> card

  function append(li) {
    transcript.appendChild(li);
    empty.hidden = true;
    if (follow) {
      followNow();
    }
  }

  function message(who, cls, text, extra) {
    var li = el("li", "entry " + cls);
    li.appendChild(el("div", "who", who));
    li.appendChild(modelText("div", "text", text));
    if (extra) {
      li.appendChild(extra);
    }
    append(li);
    return li;
  }

  function parse(v) {
    if (typeof v !== "string") {
      return v;
    }
    try {
      return JSON.parse(v);
    } catch (e) {
      return undefined;
    }
  }

  function pretty(v) {
    var parsed = parse(v);
    return parsed === undefined ? String(v) : JSON.stringify(parsed, null, 2);
  }

  function toolCard(requestId, name) {
    var host = name !== "ask_user_questions";
    var li = el("li", "entry tool" + (host ? " host-tool" : ""));
    li.setAttribute("data-tool-call-id", requestId);
    var details = el("details");
    var summary = el("summary");
    summary.appendChild(modelText("span", "tool-name", name || "tool"));
    var state = el("span", "tool-state", !host ? T.waitingForAnswer : ask.approvalIds().indexOf(requestId) >= 0 ? T.waitingForApproval : T.running);
    state.setAttribute("data-testid", "tool-summary");
    summary.appendChild(state);
    details.appendChild(summary);
    details.appendChild(el("div", "label", T.input));
    var input = el("pre", "json");
    details.appendChild(input);
    details.appendChild(el("div", "label", T.output));
    var output = el("pre", "json", "\u2026");
    details.appendChild(output);
    li.appendChild(details);
    var card = {li: li, state: state, input: input, output: output, questions: [], host: host, done: false};
    toolCards.set(requestId, card);
    append(li);
    return card;
  }

  // summarize writes into node what a tool result says, in the page's language: what was
  // chosen ("Answered 1 question: Framework: React"), or why there is no answer.
  function summarize(node, d, card) {
    while (node.firstChild) {
      node.removeChild(node.firstChild);
    }
    var result = parse(d.content) || {};
    if (card.host && window.demoTools) {
      window.demoTools.summarize(lang, node, d, result, modelText);
      return;
    }
    if (d.outcome === "answered" && Array.isArray(result.answers)) {
      node.appendChild(document.createTextNode(T.answered(result.answers.length) + T.colon));
      var headers = {};
      card.questions.forEach(function (q) {
        headers[q && q.question] = q && q.header;
      });
      result.answers.forEach(function (a, i) {
        if (i > 0) {
          node.appendChild(document.createTextNode("; "));
        }
        var part = el("span", "tool-answer");
        part.appendChild(modelText("span", "tool-answer-header", headers[a.question] || a.question));
        part.appendChild(document.createTextNode(T.colon));
        var choices = (a.selectedLabels || []).map(function (l) { return modelText("b", null, l); });
        if (typeof a.customInput === "string") {
          choices.push(modelText("q", null, a.customInput));
        }
        choices.forEach(function (c, k) {
          if (k > 0) {
            part.appendChild(document.createTextNode(T.separator));
          }
          part.appendChild(c);
        });
        node.appendChild(part);
      });
      return;
    }
    var text = T.outcomes[d.outcome];
    if (!text && d.outcome === "invalid") {
      text = T.invalid((result.problems || []).length);
    }
    node.textContent = text || T.unknown;
  }

  var render = {
    user_message: function (d) {
      message(T.you, "user", d.text, d.queued ? el("span", "queued", T.queued) : null);
    },
    agent_message: function (d) {
      message(T.agent, "agent", d.text);
    },
    tool_call: function (d) {
      var card = toolCard(String(d.requestId), d.name);
      card.input.textContent = pretty(d.arguments);
      var args = parse(d.arguments);
      card.questions = args && Array.isArray(args.questions) ? args.questions : [];
    },
    tool_result: function (d) {
      var card = toolCards.get(String(d.requestId)) || toolCard(String(d.requestId), "ask_user_questions");
      card.done = true;
      card.output.textContent = String(d.content);
      summarize(card.state, d, card);
      card.li.classList.toggle("is-error", !!d.isError);
      card.li.setAttribute("data-outcome", String(d.outcome || ""));
      var result = parse(d.content);
      if (result && Array.isArray(result.answers)) {
        // A panel that ended because another device answered says what was chosen.
        ask.setAnswers(String(d.requestId), result.answers);
      }
    },
    status: function (d) {
      lastStatus = d;
      showState();
    }
  };

  // showState shows the agent's last state; waiting, with no question shown but an
  // approval, it waits for the approval. It is shown again as those come and go.
  var lastStatus = {state: "idle", queued: 0};
  function showState() {
    var d = lastStatus;
    var approval = d.state === "waiting" && ask.approvalIds().length > 0 && ask.requestIds().length === 0;
    var text = approval ? T.states.approval : T.states[d.state] || String(d.state);
    if (d.queued > 0) {
      text += T.queuedCount(d.queued);
    }
    agentState.setAttribute("data-state", String(d.state));
    agentState.textContent = text;
  }
  ["ask_user_questions", "ask_user_questions_resolved", "tool_approval", "tool_approval_resolved"].forEach(function (type) {
    ask.on(type, showState);
  });

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
    empty.hidden = transcript.firstElementChild !== null;
    follow = true;
    toBottom();
  });

  // A host tool call that waits for the person's approval says so on its card. (The
  // pending approvals come before the history when a device connects.)
  ask.on("tool_approval", function (data) {
    var card = toolCards.get(String(data && data.requestId));
    if (card && card.host && !card.done) {
      card.state.textContent = T.waitingForApproval;
    }
  });

  // Refusals that name no question are about the page's own messages.
  ask.on("ask_user_questions_error", function (data) {
    if (data && !data.requestId) {
      message(T.server, "error", data.message || data.code);
    }
  });

  // ---- what waits below --------------------------------------------------------------

  // The question section scrolls on its own: a request that is wholly below its visible
  // part (the approval of /parallel, under a question, on a phone) gets a button under
  // it that says so and brings it into view.
  //
  // The button takes its room, or gives it back, only when the requests change or the
  // window does. When the person scrolls to what it points to, it only turns invisible
  // in its room: giving the room back would grow the section under a scroll at its end,
  // and the browser would move the content under the person's pointer (a click on
  // Approve would land beside it).
  var more = el("button", "more-below");
  more.type = "button";
  more.id = "more-below";
  more.hidden = true;
  questions.parentNode.insertBefore(more, questions.nextSibling);
  var moreFrame = 0;
  var moreRoom = true; // whether the next measure may add or remove the button's room
  var hiddenBelow = [];
  var requestsSel = '[data-testid="panel"], [data-testid="approval"], .askuser-note';

  function measureBelow() {
    moreFrame = 0;
    // Measured as laid out now, with the button or without: the button only takes room
    // from the section, so showing it never shows what it points to, nor hiding it hides.
    var box = questions.getBoundingClientRect();
    var nq = 0;
    var na = 0;
    hiddenBelow = [];
    Array.prototype.forEach.call(questions.querySelectorAll('[data-testid="panel"], [data-testid="approval"]'), function (n) {
      // Hidden: less of it shows than a line of text.
      if (box.height > 0 && n.getBoundingClientRect().top > box.bottom - 32) {
        hiddenBelow.push(n);
        if (n.getAttribute("data-testid") === "approval") {
          na++;
        } else {
          nq++;
        }
      }
    });
    if (hiddenBelow.length) {
      var text = "\u2193 " + T.below(nq, na);
      if (more.textContent !== text) {
        more.textContent = text;
      }
      more.hidden = false;
    } else if (moreRoom) {
      more.hidden = true;
    }
    more.classList.toggle("idle", !more.hidden && hiddenBelow.length === 0);
    moreRoom = false;
  }
  function checkBelow() {
    if (!moreFrame) {
      moreFrame = requestAnimationFrame(measureBelow);
    }
  }
  function requestsChanged(records) {
    var changed = records.some(function (r) {
      return [r.addedNodes, r.removedNodes].some(function (nodes) {
        return Array.prototype.some.call(nodes, function (n) {
          return n.nodeType === 1 && (n.matches(requestsSel) || n.querySelector(requestsSel) !== null);
        });
      });
    });
    if (changed) {
      moreRoom = true;
    }
    checkBelow();
  }
  questions.addEventListener("scroll", checkBelow, {passive: true});
  window.addEventListener("resize", function () {
    moreRoom = true;
    checkBelow();
  });
  new MutationObserver(requestsChanged).observe(questions, {childList: true, subtree: true});
  if (window.ResizeObserver) {
    new ResizeObserver(checkBelow).observe(questions);
  }
  more.addEventListener("click", function () {
    var n = hiddenBelow[0];
    if (!n) {
      return;
    }
    questions.scrollTop += n.getBoundingClientRect().top - questions.getBoundingClientRect().top;
    var target = n.getAttribute("tabindex") !== null ? n : n.querySelector("input, button, textarea");
    if (target) {
      target.focus({preventScroll: true});
    }
  });

  // ---- composer -----------------------------------------------------------------------

  // The page's own events name no session: the hub takes them for the connection's one
  // session, whatever its id and type, so nothing is lost turning the URL's id into JSON.
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var text = box.value;
    if (text.trim() === "") {
      return;
    }
    if (ask.send({type: "user_message", data: {text: text}})) {
      box.value = "";
      follow = true; // a person who sends wants to see the reply
      toBottom();
    } else {
      message(T.page, "error", T.notSent);
    }
  });
  box.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  document.getElementById("cancel").addEventListener("click", function () {
    if (ask.send({type: "cancel"})) {
      follow = true;
      toBottom();
    } else {
      message(T.page, "error", T.notCancelled);
    }
  });
})();
