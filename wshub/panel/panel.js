/*
 * askuser question panel: shows an agent's ask_user_questions in a browser and sends the
 * person's answer back over a WebSocket.
 *
 * One script tag, no build step, no dependency, nothing fetched from elsewhere:
 *
 *   <link rel="stylesheet" href="/askuser/panel.css">
 *   <script src="/askuser/panel.js"></script>
 *   <div id="questions"></div>
 *   <script>
 *     const ask = AskUser.connect({url: "/ws?session=42", container: document.getElementById("questions")});
 *     ask.on("tool_result", (data) => console.log(data.content));
 *     ask.send({type: "user_message", sessionId: 42, data: {text: "hi"}});
 *   </script>
 *
 * AskUser.connect opens the WebSocket (and reopens it with exponential backoff), renders
 * every pending question set of the session into the container, and lets the host page use
 * the same socket for its own events. A page that already has its own connection can use
 * AskUser.createPanel instead and feed it events.
 *
 * Everything the model wrote (questions, headers, labels, descriptions, previews) is put in
 * the page as text: elements are made with createElement and filled with textContent, never
 * innerHTML, so no model content can run script or load anything.
 */
(function (root) {
  "use strict";

  var EVENT_ASK = "ask_user_questions";
  var EVENT_RESULT = "ask_user_questions_result";
  var EVENT_RESOLVED = "ask_user_questions_resolved";
  var EVENT_ERROR = "ask_user_questions_error";

  // The server's default bound of an answer's free text, in characters.
  var DEFAULT_MAX_CUSTOM_INPUT = 4000;
  // How long a sent answer waits for the server's verdict before the panel is usable again.
  var REPLY_TIMEOUT_MS = 20000;

  var DEFAULT_STRINGS = {
    title: "Agent wants to know:",
    submit: "Submit",
    decline: "Decline",
    dismiss: "Dismiss",
    other: "Other",
    otherPlaceholder: "Type your own answer\u2026",
    recommended: "Recommended",
    chooseOne: "Choose one, or write your own.",
    chooseAny: "Choose any number, and/or write your own.",
    preview: "Preview",
    noPreview: "No preview for this option.",
    sending: "Sending\u2026",
    timeUp: "Time is up",
    disconnected: "Disconnected \u2014 reconnecting\u2026",
    notConnected: "Not connected; your answer could not be sent. Try again once reconnected.",
    lostReply: "The connection dropped before the server replied. If the question is still open, answer again.",
    noReply: "No reply from the server yet. Try again.",
    gone: "This question is no longer open.",
    questionsAsked: function (n) {
      return n === 1 ? "The agent asked a question." : "The agent asked " + n + " questions.";
    },
    timeLeft: function (seconds) {
      var m = Math.floor(seconds / 60);
      var s = seconds % 60;
      return m + ":" + (s < 10 ? "0" : "") + s + " left";
    },
    timeLeftSpoken: function (seconds) {
      if (seconds >= 60) {
        var m = Math.round(seconds / 60);
        return m === 1 ? "One minute left to answer." : m + " minutes left to answer.";
      }
      return seconds + " seconds left to answer.";
    },
    resolved: {
      answered: "The question was answered.",
      declined: "The question was declined.",
      timeout: "The question timed out.",
      cancelled: "The question was cancelled.",
      undelivered: "The question could not be delivered.",
      disconnected: "The question ended because no device was connected.",
      shutdown: "The question service shut down."
    }
  };

  // Moments at which the time left is announced to screen readers, in seconds.
  var ANNOUNCE_AT = [60, 10];

  var counter = 0;
  function newId(what) {
    counter += 1;
    return "askuser-" + what + "-" + counter;
  }

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

  function str(v) {
    return typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);
  }

  function merge(base, over) {
    var out = {};
    var k;
    for (k in base) {
      if (Object.prototype.hasOwnProperty.call(base, k)) {
        out[k] = base[k];
      }
    }
    if (over) {
      for (k in over) {
        if (Object.prototype.hasOwnProperty.call(over, k)) {
          out[k] = over[k];
        }
      }
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------
  // Markdown, the safe subset: headings, lists, block quotes, rules, code fences, and inline
  // bold, italic and code. Everything else, links and HTML included, stays literal text.
  // Only fixed tag names are created and text goes in through text nodes.

  var INLINE_DEPTH = 8;

  function isSpace(c) {
    return c === "" || /\s/.test(c);
  }

  function isWordChar(c) {
    return c !== "" && /[0-9A-Za-z\u00C0-\uFFFF]/.test(c);
  }

  // canOpen reports whether the delimiter at i may open an emphasis.
  function canOpen(s, i, delim) {
    var after = s.charAt(i + delim.length);
    if (isSpace(after)) {
      return false;
    }
    if (delim.charAt(0) === "_" && isWordChar(s.charAt(i - 1))) {
      return false;
    }
    return true;
  }

  // findClose returns where the emphasis opened before from closes, or -1.
  function findClose(s, from, delim) {
    var c = delim.charAt(0);
    var k = s.indexOf(delim, from);
    while (k !== -1) {
      var ok = k > from && !isSpace(s.charAt(k - 1));
      if (ok && delim.length === 1 && (s.charAt(k + 1) === c || s.charAt(k - 1) === c)) {
        ok = false;
      }
      if (ok && c === "_" && isWordChar(s.charAt(k + delim.length))) {
        ok = false;
      }
      if (ok) {
        return k;
      }
      k = s.indexOf(delim, k + 1);
    }
    return -1;
  }

  function appendInline(parent, s, depth) {
    var buf = "";
    function flush() {
      if (buf) {
        parent.appendChild(document.createTextNode(buf));
        buf = "";
      }
    }
    var i = 0;
    while (i < s.length) {
      var c = s.charAt(i);
      if (c === "\\" && i + 1 < s.length && /[\\`*_#+\-.!\[\]()<>~|{}]/.test(s.charAt(i + 1))) {
        buf += s.charAt(i + 1);
        i += 2;
        continue;
      }
      if (c === "`") {
        var run = /^`+/.exec(s.slice(i))[0];
        var close = s.indexOf(run, i + run.length);
        while (close !== -1 && s.charAt(close + run.length) === "`") {
          close = s.indexOf(run, close + run.length + 1);
        }
        if (close !== -1) {
          flush();
          parent.appendChild(el("code", "askuser-md-code", s.slice(i + run.length, close)));
          i = close + run.length;
          continue;
        }
        buf += run;
        i += run.length;
        continue;
      }
      if ((c === "*" || c === "_") && depth < INLINE_DEPTH) {
        var delim = s.charAt(i + 1) === c ? c + c : c;
        if (canOpen(s, i, delim)) {
          var end = findClose(s, i + delim.length, delim);
          if (end !== -1) {
            flush();
            var node = el(delim.length === 2 ? "strong" : "em");
            appendInline(node, s.slice(i + delim.length, end), depth + 1);
            parent.appendChild(node);
            i = end + delim.length;
            continue;
          }
        }
        buf += delim;
        i += delim.length;
        continue;
      }
      buf += c;
      i += 1;
    }
    flush();
  }

  /**
   * markdown renders the safe markdown subset of src into a DocumentFragment. The caller
   * puts it in an element styled as a monospace box (class askuser-md).
   */
  function markdown(src) {
    var frag = document.createDocumentFragment();
    var lines = str(src).replace(/\r\n?/g, "\n").split("\n");
    var para = null;
    var list = null;
    var lastItem = null;

    function flushPara() {
      if (para) {
        var p = el("p", "askuser-md-p");
        appendInline(p, para.join("\n"), 0);
        frag.appendChild(p);
        para = null;
      }
    }
    function endList() {
      list = null;
      lastItem = null;
    }

    var i = 0;
    while (i < lines.length) {
      var line = lines[i];
      var m;

      if ((m = /^ {0,3}(`{3,}|~{3,})/.exec(line))) {
        flushPara();
        endList();
        var fence = m[1];
        var closing = new RegExp("^ {0,3}" + (fence.charAt(0) === "`" ? "`" : "~") + "{" + fence.length + ",}\\s*$");
        var body = [];
        i += 1;
        while (i < lines.length && !closing.test(lines[i])) {
          body.push(lines[i]);
          i += 1;
        }
        i += 1;
        var pre = el("pre", "askuser-md-pre");
        pre.appendChild(el("code", null, body.join("\n")));
        frag.appendChild(pre);
        continue;
      }
      if (/^\s*$/.test(line)) {
        flushPara();
        endList();
        i += 1;
        continue;
      }
      if ((m = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/.exec(line))) {
        flushPara();
        endList();
        var h = el("div", "askuser-md-h askuser-md-h" + m[1].length);
        appendInline(h, m[2], 0);
        frag.appendChild(h);
        i += 1;
        continue;
      }
      if (/^ {0,3}([-*_])(?:\s*\1){2,}\s*$/.test(line)) {
        flushPara();
        endList();
        frag.appendChild(el("hr", "askuser-md-hr"));
        i += 1;
        continue;
      }
      if (/^ {0,3}>/.test(line)) {
        flushPara();
        endList();
        var quoted = [];
        while (i < lines.length && (m = /^ {0,3}> ?(.*)$/.exec(lines[i]))) {
          quoted.push(m[1]);
          i += 1;
        }
        var q = el("div", "askuser-md-quote");
        appendInline(q, quoted.join("\n"), 0);
        frag.appendChild(q);
        continue;
      }
      if ((m = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line))) {
        flushPara();
        var ordered = /\d/.test(m[2]);
        if (!list || list.ordered !== ordered) {
          list = {ordered: ordered, node: el(ordered ? "ol" : "ul", "askuser-md-list")};
          if (ordered) {
            var start = parseInt(m[2], 10);
            if (start > 1) {
              list.node.start = start;
            }
          }
          frag.appendChild(list.node);
        }
        var li = el("li");
        var indent = Math.min(4, Math.floor(m[1].replace(/\t/g, "  ").length / 2));
        if (indent > 0) {
          li.className = "askuser-md-indent-" + indent;
        }
        appendInline(li, m[3], 0);
        list.node.appendChild(li);
        lastItem = li;
        i += 1;
        continue;
      }
      if (lastItem && /^\s+\S/.test(line)) {
        lastItem.appendChild(document.createTextNode("\n"));
        appendInline(lastItem, line.replace(/^\s+/, ""), 0);
        i += 1;
        continue;
      }
      endList();
      if (!para) {
        para = [];
      }
      para.push(line);
      i += 1;
    }
    flushPara();
    return frag;
  }

  // ---------------------------------------------------------------------------------------
  // The panel: the question sets of a session, each a form.

  var RECOMMENDED = /\s*\(recommended\)\s*$/i;

  /**
   * createPanel renders pending question sets into options.container and keeps them in step
   * with the events it is given. It does no networking: options.send(obj) must send obj (an
   * event envelope) to the server and return false when it could not.
   *
   * Returns {handle(event), setConnected(bool), requestIds(), clear(), destroy()}; handle
   * takes a parsed event envelope and returns true when it was one of the panel's.
   */
  function createPanel(options) {
    var opts = options || {};
    var container = opts.container;
    if (!container || typeof container.appendChild !== "function") {
      throw new TypeError("AskUser: options.container must be an element");
    }
    var send = typeof opts.send === "function" ? opts.send : function () { return false; };
    var S = merge(DEFAULT_STRINGS, opts.strings);
    S.resolved = merge(DEFAULT_STRINGS.resolved, opts.strings && opts.strings.resolved);
    var maxCustomInput = opts.maxCustomInput > 0 ? opts.maxCustomInput : DEFAULT_MAX_CUSTOM_INPUT;
    var now = typeof opts.now === "function" ? opts.now : function () { return Date.now(); };

    var rootEl = el("div", "askuser-root");
    rootEl.setAttribute("data-testid", "askuser-root");
    var banner = el("div", "askuser-connection", S.disconnected);
    banner.setAttribute("role", "status");
    banner.setAttribute("data-testid", "connection");
    banner.hidden = true;
    var listEl = el("div", "askuser-list");
    var announcer = el("div", "askuser-sr-only");
    announcer.setAttribute("aria-live", "polite");
    announcer.setAttribute("data-testid", "announcer");
    rootEl.appendChild(banner);
    rootEl.appendChild(listEl);
    rootEl.appendChild(announcer);
    container.appendChild(rootEl);

    var panels = new Map(); // requestId -> panel state, in the order first seen
    var connected = opts.connected === undefined ? true : !!opts.connected;
    var ticker = null;
    var destroyed = false;

    function announce(text) {
      // Clear first so that the same text twice is still announced.
      announcer.textContent = "";
      setTimeout(function () {
        announcer.textContent = text;
      }, 50);
    }

    function updateBanner() {
      banner.hidden = connected || panels.size === 0;
    }

    // ---- building ---------------------------------------------------------------------

    function buildQuestion(p, q, qi) {
      var multi = q.multiSelect === true;
      var qs = {
        text: str(q.question),
        multi: multi,
        options: [],
        inputs: [],
        labels: [],
        other: null,
        preview: null,
        fieldset: null,
        focused: -1
      };
      var fs = el("fieldset", "askuser-question");
      fs.setAttribute("data-testid", "question");
      fs.setAttribute("data-index", String(qi));
      fs.setAttribute("data-multi-select", multi ? "true" : "false");
      qs.fieldset = fs;

      var legend = el("legend", "askuser-legend");
      var chip = el("span", "askuser-chip", str(q.header));
      chip.setAttribute("data-testid", "header");
      var qtext = el("span", "askuser-question-text", qs.text);
      qtext.id = newId("q");
      qtext.setAttribute("data-testid", "question-text");
      legend.appendChild(chip);
      legend.appendChild(document.createTextNode(" "));
      legend.appendChild(qtext);
      fs.appendChild(legend);

      var hint = el("p", "askuser-hint", multi ? S.chooseAny : S.chooseOne);
      hint.id = newId("hint");
      fs.appendChild(hint);

      var rawOptions = Array.isArray(q.options) ? q.options : [];
      var hasPreview = !multi && rawOptions.some(function (o) { return o && str(o.preview) !== ""; });

      var body = el("div", "askuser-body");
      var main = el("div", "askuser-main");
      var group = el("div", "askuser-options");
      group.setAttribute("role", multi ? "group" : "radiogroup");
      group.setAttribute("aria-labelledby", qtext.id);
      group.setAttribute("aria-describedby", hint.id);
      var name = newId("name");

      rawOptions.forEach(function (o, oi) {
        var label = str(o && o.label);
        var description = str(o && o.description);
        var opt = el("label", "askuser-option");
        opt.setAttribute("data-testid", "option");
        opt.setAttribute("data-index", String(oi));
        // An attribute value is never parsed as markup, so the label is safe here.
        opt.setAttribute("data-label", label);

        var input = el("input", "askuser-option-input");
        input.type = multi ? "checkbox" : "radio";
        input.name = name;
        input.value = String(oi);
        input.id = newId("opt");
        input.setAttribute("data-testid", "option-input");

        var text = el("span", "askuser-option-text");
        var title = el("span", "askuser-option-title");
        title.id = newId("title");
        var recommended = RECOMMENDED.test(label);
        var shown = recommended ? label.replace(RECOMMENDED, "") : label;
        var labelSpan = el("span", "askuser-option-label", shown || label);
        labelSpan.setAttribute("data-testid", "option-label");
        title.appendChild(labelSpan);
        if (recommended && shown) {
          title.appendChild(document.createTextNode(" "));
          var badge = el("span", "askuser-badge", S.recommended);
          badge.setAttribute("data-testid", "recommended");
          title.appendChild(badge);
          opt.classList.add("askuser-recommended");
        }
        var desc = el("span", "askuser-option-desc", description);
        desc.id = newId("desc");
        desc.setAttribute("data-testid", "option-description");
        text.appendChild(title);
        text.appendChild(desc);
        input.setAttribute("aria-labelledby", title.id);
        input.setAttribute("aria-describedby", desc.id);

        opt.appendChild(input);
        opt.appendChild(text);
        group.appendChild(opt);

        qs.options.push({label: label, description: description, preview: hasPreview ? str(o && o.preview) : ""});
        qs.inputs.push(input);
        qs.labels.push(opt);

        input.addEventListener("change", function () {
          if (!multi && input.checked && qs.other.value !== "") {
            // §4.4: choosing an option clears Other.
            qs.other.value = "";
          }
          refresh(p);
          showPreview(qs);
        });
        input.addEventListener("focus", function () {
          qs.focused = oi;
          showPreview(qs);
        });
        input.addEventListener("blur", function () {
          if (qs.focused === oi) {
            qs.focused = -1;
          }
          showPreview(qs);
        });
      });
      main.appendChild(group);

      var otherWrap = el("div", "askuser-other");
      var other = el("input", "askuser-other-input");
      other.type = "text";
      other.id = newId("other");
      other.placeholder = S.otherPlaceholder;
      other.maxLength = maxCustomInput;
      other.autocomplete = "off";
      other.setAttribute("data-testid", "other-input");
      other.setAttribute("aria-describedby", qtext.id);
      var otherLabel = el("label", "askuser-other-label", S.other);
      otherLabel.htmlFor = other.id;
      otherWrap.appendChild(otherLabel);
      otherWrap.appendChild(other);
      main.appendChild(otherWrap);
      qs.other = other;
      other.addEventListener("input", function () {
        if (!multi && other.value !== "") {
          // §4.4: typing in Other clears the chosen option.
          qs.inputs.forEach(function (inp) { inp.checked = false; });
          showPreview(qs);
        }
        refresh(p);
      });

      body.appendChild(main);

      if (hasPreview) {
        fs.classList.add("askuser-has-preview");
        var pv = el("div", "askuser-preview");
        pv.setAttribute("data-testid", "preview");
        pv.setAttribute("role", "region");
        var cap = el("div", "askuser-preview-caption");
        cap.id = newId("cap");
        cap.setAttribute("data-testid", "preview-caption");
        pv.setAttribute("aria-labelledby", cap.id);
        var pvBody = el("div", "askuser-preview-body askuser-md");
        pvBody.setAttribute("data-testid", "preview-body");
        // A scrollable box must be reachable by keyboard.
        pvBody.tabIndex = 0;
        pvBody.setAttribute("aria-labelledby", cap.id);
        pv.appendChild(cap);
        pv.appendChild(pvBody);
        body.appendChild(pv);
        qs.preview = {box: pv, caption: cap, body: pvBody, shown: -2, cache: []};
      }

      fs.appendChild(body);
      showPreview(qs);
      return qs;
    }

    // showPreview shows the preview of the focused option, else the chosen one, else the
    // first that has one.
    function showPreview(qs) {
      var pv = qs.preview;
      if (!pv) {
        return;
      }
      var idx = qs.focused;
      if (idx < 0) {
        qs.inputs.forEach(function (inp, i) {
          if (inp.checked) {
            idx = i;
          }
        });
      }
      if (idx < 0) {
        for (var i = 0; i < qs.options.length; i++) {
          if (qs.options[i].preview !== "") {
            idx = i;
            break;
          }
        }
      }
      if (idx === pv.shown) {
        return;
      }
      pv.shown = idx;
      var o = qs.options[idx];
      pv.box.setAttribute("data-option-index", String(idx));
      pv.caption.textContent = S.preview + " \u2014 " + o.label;
      if (!pv.cache[idx]) {
        var holder = el("div", "askuser-md-doc");
        if (o.preview !== "") {
          holder.appendChild(markdown(o.preview));
        } else {
          holder.appendChild(el("p", "askuser-md-p askuser-preview-none", S.noPreview));
        }
        pv.cache[idx] = holder;
      }
      while (pv.body.firstChild) {
        pv.body.removeChild(pv.body.firstChild);
      }
      pv.body.appendChild(pv.cache[idx]);
      pv.body.scrollTop = 0;
    }

    function buildPanel(sessionId, data) {
      var p = {
        requestId: str(data.requestId),
        sessionId: sessionId,
        expiresAt: NaN,
        questions: [],
        sending: false,
        replyTimer: null,
        gone: false,
        announced: {},
        form: null
      };
      var form = el("form", "askuser-panel");
      form.noValidate = true;
      form.setAttribute("data-testid", "panel");
      form.setAttribute("data-request-id", p.requestId);
      p.form = form;

      var head = el("div", "askuser-head");
      var title = el("p", "askuser-title", S.title);
      title.id = newId("ptitle");
      form.setAttribute("aria-labelledby", title.id);
      var countdown = el("span", "askuser-countdown");
      countdown.setAttribute("role", "timer");
      countdown.setAttribute("data-testid", "countdown");
      head.appendChild(title);
      head.appendChild(countdown);
      form.appendChild(head);
      p.countdown = countdown;

      var qwrap = el("div", "askuser-questions");
      data.questions.forEach(function (q, qi) {
        var qs = buildQuestion(p, q || {}, qi);
        p.questions.push(qs);
        qwrap.appendChild(qs.fieldset);
      });
      form.appendChild(qwrap);

      var error = el("div", "askuser-error");
      error.setAttribute("role", "alert");
      error.setAttribute("data-testid", "error");
      error.hidden = true;
      form.appendChild(error);
      p.error = error;

      var foot = el("div", "askuser-foot");
      var status = el("p", "askuser-status");
      status.setAttribute("role", "status");
      status.setAttribute("data-testid", "status");
      var buttons = el("div", "askuser-buttons");
      var decline = el("button", "askuser-button askuser-decline", S.decline);
      decline.type = "button";
      decline.setAttribute("data-testid", "decline");
      var dismiss = el("button", "askuser-button askuser-dismiss", S.dismiss);
      dismiss.type = "button";
      dismiss.setAttribute("data-testid", "dismiss");
      dismiss.hidden = true;
      var submit = el("button", "askuser-button askuser-submit", S.submit);
      submit.type = "submit";
      submit.setAttribute("data-testid", "submit");
      buttons.appendChild(dismiss);
      buttons.appendChild(decline);
      buttons.appendChild(submit);
      foot.appendChild(status);
      foot.appendChild(buttons);
      form.appendChild(foot);
      p.status = status;
      p.submit = submit;
      p.decline = decline;
      p.dismiss = dismiss;

      form.addEventListener("submit", function (e) {
        e.preventDefault();
        submitAnswers(p);
      });
      decline.addEventListener("click", function () {
        sendResult(p, {requestId: p.requestId, declined: true});
      });
      dismiss.addEventListener("click", function () {
        removePanel(p.requestId, null);
      });

      setExpiry(p, data.expiresAt);
      return p;
    }

    // ---- state ------------------------------------------------------------------------

    function answered(qs) {
      if (qs.other.value.trim() !== "") {
        return true;
      }
      return qs.inputs.some(function (inp) { return inp.checked; });
    }

    function refresh(p) {
      var complete = p.questions.every(answered);
      var locked = p.sending || p.gone;
      p.submit.disabled = !complete || locked || !connected;
      p.decline.disabled = locked || !connected;
      p.decline.hidden = p.gone;
      p.dismiss.hidden = !p.gone;
      p.form.setAttribute("data-complete", complete ? "true" : "false");
      p.form.setAttribute("aria-busy", p.sending ? "true" : "false");
      p.questions.forEach(function (qs) {
        qs.fieldset.disabled = locked;
        qs.inputs.forEach(function (inp, i) {
          qs.labels[i].classList.toggle("askuser-checked", inp.checked);
        });
      });
    }

    function setStatus(p, text) {
      p.status.textContent = text || "";
    }

    function showError(p, message, problems) {
      while (p.error.firstChild) {
        p.error.removeChild(p.error.firstChild);
      }
      if (!message && !(problems && problems.length)) {
        p.error.hidden = true;
        return;
      }
      p.error.appendChild(el("p", "askuser-error-message", message));
      if (Array.isArray(problems) && problems.length) {
        var ul = el("ul", "askuser-error-problems");
        problems.forEach(function (pr) {
          ul.appendChild(el("li", null, str(pr)));
        });
        p.error.appendChild(ul);
      }
      p.error.hidden = false;
    }

    function setSending(p, on) {
      p.sending = on;
      if (p.replyTimer) {
        clearTimeout(p.replyTimer);
        p.replyTimer = null;
      }
      if (on) {
        setStatus(p, S.sending);
        p.replyTimer = setTimeout(function () {
          p.replyTimer = null;
          if (p.sending) {
            setSending(p, false);
            showError(p, S.noReply);
          }
        }, REPLY_TIMEOUT_MS);
      } else {
        setStatus(p, "");
      }
      refresh(p);
    }

    function collect(p) {
      return p.questions.map(function (qs) {
        var labels = [];
        qs.inputs.forEach(function (inp, i) {
          if (inp.checked) {
            labels.push(qs.options[i].label);
          }
        });
        var other = qs.other.value.trim();
        return {question: qs.text, selectedLabels: labels, customInput: other === "" ? null : other};
      });
    }

    function submitAnswers(p) {
      if (p.submit.disabled) {
        return;
      }
      sendResult(p, {requestId: p.requestId, answers: collect(p)});
    }

    function sendResult(p, data) {
      if (p.sending || p.gone) {
        return;
      }
      showError(p, "");
      var ok = false;
      try {
        ok = send({type: EVENT_RESULT, sessionId: p.sessionId, data: data}) !== false;
      } catch (e) {
        ok = false;
      }
      if (!ok) {
        showError(p, S.notConnected);
        return;
      }
      setSending(p, true);
    }

    function setExpiry(p, expiresAt) {
      var t = expiresAt ? Date.parse(str(expiresAt)) : NaN;
      p.expiresAt = t;
      p.announced = {};
      tick();
    }

    function tick() {
      var any = false;
      var t = now();
      panels.forEach(function (p) {
        if (isNaN(p.expiresAt)) {
          p.countdown.hidden = true;
          return;
        }
        any = true;
        p.countdown.hidden = false;
        var left = Math.max(0, Math.ceil((p.expiresAt - t) / 1000));
        p.countdown.textContent = left > 0 ? S.timeLeft(left) : S.timeUp;
        p.countdown.classList.toggle("askuser-urgent", left <= 30);
        p.form.setAttribute("data-seconds-left", String(left));
        ANNOUNCE_AT.forEach(function (at) {
          if (left <= at && left > 0 && !p.announced[at] && p.expiresAt - t > 0) {
            p.announced[at] = true;
            // Only announce a threshold as it passes, not all of them for a late arrival.
            if (left > at - 3) {
              announce(S.timeLeftSpoken(left));
            }
          }
        });
        if (left === 0 && !p.announced[0]) {
          p.announced[0] = true;
          announce(S.timeUp);
        }
      });
      if (any && !ticker && !destroyed) {
        ticker = setInterval(tick, 1000);
      } else if (!any && ticker) {
        clearInterval(ticker);
        ticker = null;
      }
    }

    // ---- events -----------------------------------------------------------------------

    function addPanel(sessionId, data) {
      if (!data || typeof data.requestId !== "string" || data.requestId === "" || !Array.isArray(data.questions)) {
        return;
      }
      var existing = panels.get(data.requestId);
      if (existing) {
        // The same ask again (a reconnect, another device connecting): keep what the person
        // has chosen so far, take the newer expiry.
        existing.sessionId = sessionId;
        if (existing.gone) {
          existing.gone = false;
          showError(existing, "");
        }
        setExpiry(existing, data.expiresAt);
        refresh(existing);
        return;
      }
      var p = buildPanel(sessionId, data);
      panels.set(p.requestId, p);
      listEl.appendChild(p.form);
      refresh(p);
      updateBanner();
      tick();
      announce(S.questionsAsked(p.questions.length));
    }

    function removePanel(requestId, outcome) {
      var p = panels.get(requestId);
      if (!p) {
        return;
      }
      panels.delete(requestId);
      if (p.replyTimer) {
        clearTimeout(p.replyTimer);
      }
      var hadFocus = p.form.contains(document.activeElement);
      if (p.form.parentNode) {
        p.form.parentNode.removeChild(p.form);
      }
      if (hadFocus) {
        // Keep keyboard users inside the panel list rather than back at the page's start.
        var next = listEl.querySelector("input:not([disabled]), button:not([disabled])");
        if (next) {
          next.focus();
        }
      }
      if (outcome && S.resolved[outcome]) {
        announce(S.resolved[outcome]);
      }
      updateBanner();
      tick();
    }

    // errorFor shows a refusal in the panel of the question it names. One that names no
    // question is not about an answer (the panel always names its question) and is left to
    // the host page's listeners.
    function errorFor(data) {
      data = data || {};
      var p = typeof data.requestId === "string" ? panels.get(data.requestId) : null;
      if (!p) {
        return;
      }
      setSending(p, false);
      if (data.code === "not_pending") {
        p.gone = true;
        showError(p, S.gone);
        refresh(p);
        return;
      }
      showError(p, str(data.message) || str(data.code), data.problems);
    }

    function handle(ev) {
      if (destroyed || !ev || typeof ev !== "object") {
        return false;
      }
      switch (ev.type) {
        case EVENT_ASK:
          addPanel(ev.sessionId, ev.data);
          return true;
        case EVENT_RESOLVED:
          if (ev.data && typeof ev.data.requestId === "string") {
            removePanel(ev.data.requestId, str(ev.data.outcome));
          }
          return true;
        case EVENT_ERROR:
          errorFor(ev.data);
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
      panels.forEach(function (p) {
        if (!on && p.sending) {
          setSending(p, false);
          showError(p, S.lostReply);
        }
        refresh(p);
      });
      updateBanner();
    }

    function clear() {
      Array.from(panels.keys()).forEach(function (id) {
        removePanel(id, null);
      });
    }

    function destroy() {
      clear();
      destroyed = true;
      if (ticker) {
        clearInterval(ticker);
        ticker = null;
      }
      if (rootEl.parentNode) {
        rootEl.parentNode.removeChild(rootEl);
      }
    }

    return {
      handle: handle,
      setConnected: setConnected,
      requestIds: function () { return Array.from(panels.keys()); },
      clear: clear,
      destroy: destroy
    };
  }

  // ---------------------------------------------------------------------------------------
  // The connection.

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
   * http becomes ws) and renders the session's questions into options.container.
   *
   * Options: url, container (both required); strings (overrides of the panel's texts);
   * maxCustomInput; minDelay and maxDelay, in milliseconds, of the reconnect backoff
   * (default 500 and 30000).
   *
   * Returns a client:
   *   send(obj)       sends obj (JSON-encoded unless a string); false when not connected.
   *   on(type, fn)    calls fn(data, event) for each server event of that type ("*" for
   *                   all), and fn(info) for "open", "close" and "reconnecting"; returns a
   *                   function that removes fn.
   *   connected()     whether the socket is open.
   *   requestIds()    the requestIds of the panels shown, oldest first.
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
        ws.send(typeof obj === "string" ? obj : JSON.stringify(obj));
        return true;
      } catch (e) {
        return false;
      }
    }

    var panel = createPanel({
      container: opts.container,
      strings: opts.strings,
      maxCustomInput: opts.maxCustomInput,
      send: send,
      connected: false
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
        emit("open", {});
      };
      sock.onmessage = function (m) {
        if (ws !== sock || typeof m.data !== "string") {
          return;
        }
        var ev;
        try {
          ev = JSON.parse(m.data);
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
      }
    };
  }

  root.AskUser = {
    version: "1",
    connect: connect,
    createPanel: createPanel,
    markdown: markdown
  };
})(typeof window !== "undefined" ? window : this);
