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
 *     ask.send({type: "user_message", data: {text: "hi"}});
 *   </script>
 *
 * The file is in parts, each readable on its own; later parts use earlier ones only through
 * the few names each part's comment lists:
 *
 *   1. Wire       parseEvent, stringifyEvent: JSON that keeps numeric session ids exact.
 *   2. Text       the texts in English and Chinese, the language choice, safe text nodes.
 *   3. Markdown   the safe markdown subset of previews.
 *   4. State      QuestionSet: one question set and the person's choices (§4.4); no DOM.
 *   5. Drafts     choices kept in sessionStorage per request id, for a reload.
 *   6. Question   buildQuestion: the DOM of one question.
 *   7. Set        buildSetView, buildNote: the DOM of a question set and of its note.
 *   8. Announcer  createAnnouncer, createCountdown: the live region and the time left.
 *   9. Notes      createNotes: what an ended set leaves behind ("Answered on another device").
 *  10. Keys       bindKeys: 1–4, Enter and Esc; focus kept clear of sticky header and footer.
 *  11. Panel      createPanel: the sets of a session, kept in step with the events.
 *  12. Connection connect: the WebSocket, reconnecting with backoff.
 *
 * Everything the model wrote (questions, headers, labels, descriptions, previews) is put in
 * the page as text: elements are made with createElement and filled with textContent, never
 * innerHTML, so no model content can run script or load anything.
 */
(function (root) {
  "use strict";

  // =======================================================================================
  // 1. Wire: event names, and JSON that keeps numeric session ids exact.
  //
  // JavaScript numbers are doubles: JSON.parse turns the session 1234567890123456789 into
  // 1234567890123456800. parseEvent keeps the raw text of a numeric top-level sessionId as
  // the event's (non-enumerable) rawSessionId, and the panel echoes that text verbatim, as
  // a JSON number, through stringifyEvent.
  // Exports: EVENT_*, parseEvent, stringifyEvent, sessionOf, sessionValue.

  var EVENT_ASK = "ask_user_questions";
  var EVENT_RESULT = "ask_user_questions_result";
  var EVENT_RESOLVED = "ask_user_questions_resolved";
  var EVENT_ERROR = "ask_user_questions_error";

  var JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

  // RawNumber stands for a number's JSON text where the browser has no JSON.rawJSON;
  // stringifyEvent writes it out verbatim.
  function RawNumber(text) {
    this.text = text;
  }

  function rawNumber(text) {
    if (typeof JSON.rawJSON === "function") {
      try {
        return JSON.rawJSON(text);
      } catch (e) {
        // fall through to the marker
      }
    }
    return new RawNumber(text);
  }

  // scanTopLevel returns the raw JSON text of the top-level member name of the object in
  // text, or null. It walks the JSON grammar (strings with their escapes, nested objects
  // and arrays), so nothing inside another member's value, model text included, can pass
  // for the member.
  function scanTopLevel(text, name) {
    var i = 0;
    var n = text.length;
    function ws() {
      while (i < n && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) {
        i++;
      }
    }
    function skipString() {
      i++; // the opening quote
      while (i < n) {
        var c = text[i];
        if (c === "\\") {
          i += 2;
        } else if (c === "\"") {
          i++;
          return true;
        } else {
          i++;
        }
      }
      return false;
    }
    function skipValue() {
      ws();
      var c = text[i];
      if (c === "\"") {
        return skipString();
      }
      if (c === "{" || c === "[") {
        var depth = 0;
        while (i < n) {
          c = text[i];
          if (c === "\"") {
            if (!skipString()) {
              return false;
            }
            continue;
          }
          if (c === "{" || c === "[") {
            depth++;
          } else if (c === "}" || c === "]") {
            depth--;
            if (depth === 0) {
              i++;
              return true;
            }
          }
          i++;
        }
        return false;
      }
      var start = i;
      while (i < n && ",}] \t\n\r".indexOf(text[i]) < 0) {
        i++;
      }
      return i > start;
    }
    var found = null;
    ws();
    if (text[i] !== "{") {
      return null;
    }
    i++;
    for (;;) {
      ws();
      if (text[i] === "}") {
        return found;
      }
      if (text[i] !== "\"") {
        return null;
      }
      var keyStart = i;
      if (!skipString()) {
        return null;
      }
      var key;
      try {
        key = JSON.parse(text.slice(keyStart, i));
      } catch (e) {
        return null;
      }
      ws();
      if (text[i] !== ":") {
        return null;
      }
      i++;
      ws();
      var valueStart = i;
      if (!skipValue()) {
        return null;
      }
      if (key === name) {
        found = text.slice(valueStart, i); // the last one counts, as in JSON.parse
      }
      ws();
      if (text[i] === ",") {
        i++;
      } else if (text[i] !== "}") {
        return null;
      }
    }
  }

  /**
   * parseEvent parses one message of the hub. A numeric top-level sessionId keeps its exact
   * JSON text as ev.rawSessionId (not enumerable); ev.sessionId is the usual JavaScript
   * value. Throws like JSON.parse on bad JSON.
   */
  function parseEvent(text) {
    var holders = [];
    var sources = [];
    var ev = JSON.parse(text, function (key, value, context) {
      if (key === "sessionId" && typeof value === "number" && context && typeof context.source === "string") {
        holders.push(this);
        sources.push(context.source);
      }
      return value;
    });
    if (ev && typeof ev === "object" && typeof ev.sessionId === "number") {
      var raw = null;
      var k = holders.lastIndexOf(ev);
      if (k >= 0) {
        raw = sources[k];
      } else {
        raw = scanTopLevel(text, "sessionId"); // a browser without JSON.parse source text
      }
      if (raw !== null && JSON_NUMBER.test(raw)) {
        Object.defineProperty(ev, "rawSessionId", {value: raw, enumerable: false, configurable: true});
      }
    }
    return ev;
  }

  /**
   * stringifyEvent is JSON.stringify for an event envelope whose sessionId may be an exact
   * number made by the panel (JSON.rawJSON, or the panel's own marker where the browser has
   * no JSON.rawJSON). A string is returned as it is.
   */
  function stringifyEvent(obj) {
    if (typeof obj === "string") {
      return obj;
    }
    if (!obj || typeof obj !== "object" || !(obj.sessionId instanceof RawNumber)) {
      return JSON.stringify(obj);
    }
    var parts = [];
    Object.keys(obj).forEach(function (k) {
      var v = k === "sessionId" ? obj.sessionId.text : JSON.stringify(obj[k]);
      if (v !== undefined) {
        parts.push(JSON.stringify(k) + ":" + v);
      }
    });
    return "{" + parts.join(",") + "}";
  }

  // sessionOf returns how an event names its session, to echo it: {raw} for a number (its
  // exact text when known), {value} for a string, or null when it names none.
  function sessionOf(ev) {
    if (typeof ev.rawSessionId === "string" && JSON_NUMBER.test(ev.rawSessionId)) {
      return {raw: ev.rawSessionId};
    }
    if (typeof ev.sessionId === "number" && isFinite(ev.sessionId)) {
      return {raw: JSON.stringify(ev.sessionId)};
    }
    if (typeof ev.sessionId === "string") {
      return {value: ev.sessionId};
    }
    return null;
  }

  // sessionValue is the sessionId to put in an outgoing event for a session from sessionOf.
  function sessionValue(session) {
    if (!session) {
      return undefined;
    }
    return session.raw !== undefined ? rawNumber(session.raw) : session.value;
  }

  // =======================================================================================
  // 2. Text: the panel's texts in English and Chinese, which language to use, and safe
  // text nodes for what the model wrote.
  // Exports: STRINGS, chooseLanguage, stringsFor, el, modelEl, clean, str, joinList.

  var STRINGS = {
    en: {
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
      waitingForConnection: "Waiting for the connection\u2026",
      notConnected: "Not connected; your answer could not be sent. Try again once reconnected.",
      lostReply: "The connection dropped before the server replied. If the question is still open, answer again.",
      noReply: "No reply from the server yet. Try again.",
      gone: "This question is no longer open.",
      answerSent: "Answer sent.",
      and: " and ",
      listSeparator: ", ",
      needAnswer: "Answer {names} to submit.",
      progress: function (answered, total) {
        return answered + " of " + total + " answered";
      },
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
      answeredElsewhere: "Answered on another device",
      declinedElsewhere: "Declined on another device.",
      lostRace: "Another device answered first; your answer was not used",
      yourAnswer: "Your answer: ",
      yourText: "What you had written: ",
      ended: "This question has ended.",
      resolved: {
        answered: "The question was answered.",
        declined: "The question was declined.",
        timeout: "Timed out: the agent went on without an answer.",
        cancelled: "The question was cancelled.",
        undelivered: "The question could not be delivered.",
        disconnected: "The question ended because no device was connected.",
        shutdown: "The question service shut down."
      }
    },
    zh: {
      title: "Agent \u60f3\u77e5\u9053\uff1a",
      submit: "\u63d0\u4ea4",
      decline: "\u62d2\u7edd\u56de\u7b54",
      dismiss: "\u5173\u95ed",
      other: "\u5176\u4ed6",
      otherPlaceholder: "\u8f93\u5165\u4f60\u81ea\u5df1\u7684\u56de\u7b54\u2026",
      recommended: "\u63a8\u8350",
      chooseOne: "\u9009\u62e9\u4e00\u9879\uff0c\u6216\u81ea\u5df1\u586b\u5199\u3002",
      chooseAny: "\u53ef\u591a\u9009\uff0c\u4e5f\u53ef\u81ea\u5df1\u586b\u5199\u3002",
      preview: "\u9884\u89c8",
      noPreview: "\u6b64\u9009\u9879\u6ca1\u6709\u9884\u89c8\u3002",
      sending: "\u6b63\u5728\u53d1\u9001\u2026",
      timeUp: "\u65f6\u95f4\u5230",
      disconnected: "\u8fde\u63a5\u5df2\u65ad\u5f00\uff0c\u6b63\u5728\u91cd\u8fde\u2026",
      waitingForConnection: "\u6b63\u5728\u7b49\u5f85\u8fde\u63a5\u2026",
      notConnected: "\u672a\u8fde\u63a5\uff0c\u56de\u7b54\u6ca1\u6709\u53d1\u51fa\u3002\u91cd\u65b0\u8fde\u63a5\u540e\u8bf7\u518d\u8bd5\u4e00\u6b21\u3002",
      lostReply: "\u670d\u52a1\u5668\u56de\u590d\u4e4b\u524d\u8fde\u63a5\u5c31\u65ad\u4e86\u3002\u5982\u679c\u95ee\u9898\u4ecd\u672a\u7ed3\u675f\uff0c\u8bf7\u518d\u56de\u7b54\u4e00\u6b21\u3002",
      noReply: "\u670d\u52a1\u5668\u8fd8\u6ca1\u6709\u56de\u590d\uff0c\u8bf7\u518d\u8bd5\u4e00\u6b21\u3002",
      gone: "\u8fd9\u4e2a\u95ee\u9898\u5df2\u7ecf\u7ed3\u675f\u4e86\u3002",
      answerSent: "\u56de\u7b54\u5df2\u53d1\u9001\u3002",
      and: "\u548c",
      listSeparator: "\u3001",
      needAnswer: "\u56de\u7b54 {names} \u540e\u5373\u53ef\u63d0\u4ea4\u3002",
      progress: function (answered, total) {
        return "\u5df2\u7b54 " + answered + "/" + total;
      },
      questionsAsked: function (n) {
        return n === 1 ? "Agent \u63d0\u4e86\u4e00\u4e2a\u95ee\u9898\u3002" : "Agent \u63d0\u4e86 " + n + " \u4e2a\u95ee\u9898\u3002";
      },
      timeLeft: function (seconds) {
        var m = Math.floor(seconds / 60);
        var s = seconds % 60;
        return "\u5269\u4f59 " + m + ":" + (s < 10 ? "0" : "") + s;
      },
      timeLeftSpoken: function (seconds) {
        if (seconds >= 60) {
          return "\u8fd8\u5269 " + Math.round(seconds / 60) + " \u5206\u949f\u53ef\u4ee5\u56de\u7b54\u3002";
        }
        return "\u8fd8\u5269 " + seconds + " \u79d2\u53ef\u4ee5\u56de\u7b54\u3002";
      },
      answeredElsewhere: "\u5df2\u5728\u5176\u4ed6\u8bbe\u5907\u4e0a\u56de\u7b54",
      declinedElsewhere: "\u5df2\u5728\u5176\u4ed6\u8bbe\u5907\u4e0a\u62d2\u7edd\u56de\u7b54\u3002",
      lostRace: "\u5176\u4ed6\u8bbe\u5907\u5148\u56de\u7b54\u4e86\uff0c\u4f60\u7684\u56de\u7b54\u6ca1\u6709\u88ab\u91c7\u7528",
      yourAnswer: "\u4f60\u7684\u56de\u7b54\uff1a",
      yourText: "\u4f60\u5199\u4e0b\u7684\u5185\u5bb9\uff1a",
      ended: "\u8fd9\u4e2a\u95ee\u9898\u5df2\u7ecf\u7ed3\u675f\u3002",
      resolved: {
        answered: "\u95ee\u9898\u5df2\u56de\u7b54\u3002",
        declined: "\u95ee\u9898\u5df2\u88ab\u62d2\u7edd\u56de\u7b54\u3002",
        timeout: "\u5df2\u8d85\u65f6\uff1aAgent \u6ca1\u7b49\u5230\u56de\u7b54\u5c31\u7ee7\u7eed\u4e86\u3002",
        cancelled: "\u95ee\u9898\u5df2\u53d6\u6d88\u3002",
        undelivered: "\u95ee\u9898\u672a\u80fd\u9001\u8fbe\u3002",
        disconnected: "\u6ca1\u6709\u8bbe\u5907\u5728\u7ebf\uff0c\u95ee\u9898\u5df2\u7ed3\u675f\u3002",
        shutdown: "\u63d0\u95ee\u670d\u52a1\u5df2\u5173\u95ed\u3002"
      }
    }
  };

  // chooseLanguage returns "zh" or "en": the lang option, else the nearest lang attribute
  // around the container, else the browser's language.
  function chooseLanguage(option, container) {
    var tag = typeof option === "string" ? option : "";
    for (var n = container; !tag && n && n.nodeType === 1; n = n.parentElement) {
      tag = n.getAttribute("lang") || "";
    }
    if (!tag && root.navigator) {
      tag = (root.navigator.languages && root.navigator.languages[0]) || root.navigator.language || "";
    }
    return /^zh(?:-|_|$)/i.test(tag) ? "zh" : "en";
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

  function stringsFor(lang, overrides) {
    var base = STRINGS[lang] || STRINGS.en;
    var S = merge(base, overrides);
    S.resolved = merge(base.resolved, overrides && overrides.resolved);
    return S;
  }

  function str(v) {
    return typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);
  }

  // Bidirectional embeddings, overrides and isolates: in model text they can make a label
  // read as something else (U+202E turns "exe.txt" into "txt.exe"). Shown text drops them;
  // what is sent back is always the model's exact text.
  var BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

  function clean(v) {
    return str(v).replace(BIDI_CONTROLS, "");
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

  // modelEl makes an element holding model text: as text, without bidi controls, and with
  // its direction taken from the text itself.
  function modelEl(tag, className, text) {
    var n = el(tag, className, clean(text));
    n.dir = "auto";
    return n;
  }

  // joinList appends items (nodes) to parent as "a, b and c" in the strings' language.
  function joinList(parent, items, S) {
    items.forEach(function (item, i) {
      if (i > 0) {
        parent.appendChild(document.createTextNode(i === items.length - 1 ? S.and : S.listSeparator));
      }
      parent.appendChild(item);
    });
  }

  var counter = 0;
  function newId(what) {
    counter += 1;
    return "askuser-" + what + "-" + counter;
  }

  // =======================================================================================
  // 3. Markdown, the safe subset: headings, lists, block quotes, rules, code fences, and
  // inline bold, italic and code. Everything else, links and HTML included, stays literal
  // text. Only fixed tag names are created and text goes in through text nodes.
  // Exports: markdown.

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
    var lines = clean(src).replace(/\r\n?/g, "\n").split("\n");
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

  // =======================================================================================
  // 4. State: one question set as the model asked it, and what the person has chosen so
  // far. It holds the §4.4 rules and knows nothing of the DOM.
  // Exports: QuestionSet.

  var RECOMMENDED = /\s*\(recommended\)\s*$/i;

  /**
   * QuestionSet is a question set (the data of an ask_user_questions event) and the
   * person's choices in it. session is how the event named its session (sessionOf).
   */
  function QuestionSet(data, session) {
    this.requestId = str(data.requestId);
    this.session = session;
    this.expiresAt = NaN;
    this.questions = data.questions.map(function (q) {
      q = q || {};
      var multi = q.multiSelect === true;
      var options = (Array.isArray(q.options) ? q.options : []).map(function (o) {
        return {
          label: str(o && o.label),
          description: str(o && o.description),
          preview: str(o && o.preview)
        };
      });
      var hasPreview = !multi && options.some(function (o) { return o.preview !== ""; });
      return {
        text: str(q.question),
        header: str(q.header),
        multi: multi,
        options: options,
        hasPreview: hasPreview,
        chosen: options.map(function () { return false; }),
        other: ""
      };
    });
    this.setExpiry(data.expiresAt);
    // sending is what was sent and awaits the server's word: "answers", "decline" or "".
    this.sending = "";
    // lost is set when the server refused an answer of this device because the question
    // had ended (another device was first); gone when the server no longer has it at all.
    this.lost = false;
    this.gone = false;
    this.error = null; // {message, problems}
    this.answersSent = null; // the answers this device sent last
  }

  QuestionSet.prototype.setExpiry = function (expiresAt) {
    this.expiresAt = expiresAt ? Date.parse(str(expiresAt)) : NaN;
  };

  // choose sets option oi of question qi on or off. A single-select question is a radio
  // group, and choosing an option clears its Other text (§4.4).
  QuestionSet.prototype.choose = function (qi, oi, on) {
    var q = this.questions[qi];
    if (!q || oi < 0 || oi >= q.options.length) {
      return;
    }
    if (!q.multi) {
      if (!on) {
        return; // a radio is unchosen only by choosing another or typing in Other
      }
      q.chosen = q.chosen.map(function (_, i) { return i === oi; });
      q.other = "";
      return;
    }
    q.chosen[oi] = !!on;
  };

  // setOther sets the Other text of question qi. In a single-select question, text clears
  // the chosen option (§4.4).
  QuestionSet.prototype.setOther = function (qi, text) {
    var q = this.questions[qi];
    if (!q) {
      return;
    }
    q.other = str(text);
    if (!q.multi && q.other !== "") {
      q.chosen = q.chosen.map(function () { return false; });
    }
  };

  // answered reports whether question qi has a choice or Other text that is not blank.
  QuestionSet.prototype.answered = function (qi) {
    var q = this.questions[qi];
    return q.other.trim() !== "" || q.chosen.indexOf(true) >= 0;
  };

  // missing returns the indices of the questions not answered yet.
  QuestionSet.prototype.missing = function () {
    var out = [];
    for (var i = 0; i < this.questions.length; i++) {
      if (!this.answered(i)) {
        out.push(i);
      }
    }
    return out;
  };

  QuestionSet.prototype.complete = function () {
    return this.missing().length === 0;
  };

  // answers returns the answers as the server takes them: Other text trimmed, null when
  // empty.
  QuestionSet.prototype.answers = function () {
    return this.questions.map(function (q) {
      var labels = [];
      q.chosen.forEach(function (c, i) {
        if (c) {
          labels.push(q.options[i].label);
        }
      });
      var other = q.other.trim();
      return {question: q.text, selectedLabels: labels, customInput: other === "" ? null : other};
    });
  };

  // typed returns the non-blank Other texts, the words that would be lost with the set.
  QuestionSet.prototype.typed = function () {
    return this.questions
      .map(function (q) { return q.other.trim(); })
      .filter(function (t) { return t !== ""; });
  };

  // draft returns the choices as plain data for the draft store; restore takes them back,
  // matching options by label and questions by text, so a stale draft does no harm.
  QuestionSet.prototype.draft = function () {
    return this.questions.map(function (q) {
      return {
        question: q.text,
        labels: q.options.filter(function (_, i) { return q.chosen[i]; }).map(function (o) { return o.label; }),
        other: q.other
      };
    });
  };

  QuestionSet.prototype.restore = function (draft) {
    var self = this;
    if (!Array.isArray(draft)) {
      return;
    }
    draft.forEach(function (d, qi) {
      var q = self.questions[qi];
      if (!q || !d || d.question !== q.text) {
        return;
      }
      (Array.isArray(d.labels) ? d.labels : []).forEach(function (label) {
        for (var i = 0; i < q.options.length; i++) {
          if (q.options[i].label === label) {
            self.choose(qi, i, true);
          }
        }
      });
      if (typeof d.other === "string" && d.other !== "") {
        self.setOther(qi, d.other);
      }
    });
  };

  // =======================================================================================
  // 5. Drafts: the choices of each pending set in sessionStorage, per request id, so that a
  // reload keeps them for the life of the tab. Nothing breaks where storage is refused.
  // Exports: createDrafts.

  var DRAFT_PREFIX = "askuser:draft:";
  var DRAFT_LIMIT = 50;

  function createDrafts(enabled) {
    var store = null;
    if (enabled) {
      try {
        store = root.sessionStorage;
        var probe = DRAFT_PREFIX + "probe";
        store.setItem(probe, "1");
        store.removeItem(probe);
      } catch (e) {
        store = null;
      }
    }
    function keys() {
      var out = [];
      for (var i = 0; i < store.length; i++) {
        var k = store.key(i);
        if (k && k.indexOf(DRAFT_PREFIX) === 0) {
          out.push(k);
        }
      }
      return out;
    }
    // prune keeps the newest DRAFT_LIMIT drafts: sets that ended while this tab was away
    // leave theirs behind.
    function prune() {
      var ks = keys();
      if (ks.length <= DRAFT_LIMIT) {
        return;
      }
      ks.map(function (k) {
        var t = 0;
        try {
          t = JSON.parse(store.getItem(k)).t || 0;
        } catch (e) {
          t = 0;
        }
        return {k: k, t: t};
      }).sort(function (a, b) { return a.t - b.t; })
        .slice(0, ks.length - DRAFT_LIMIT)
        .forEach(function (e) { store.removeItem(e.k); });
    }
    return {
      load: function (requestId) {
        if (!store) {
          return null;
        }
        try {
          var v = JSON.parse(store.getItem(DRAFT_PREFIX + requestId));
          return v && Array.isArray(v.q) ? v.q : null;
        } catch (e) {
          return null;
        }
      },
      save: function (set) {
        if (!store) {
          return;
        }
        try {
          store.setItem(DRAFT_PREFIX + set.requestId, JSON.stringify({t: Date.now(), q: set.draft()}));
          prune();
        } catch (e) {
          // full or refused: the draft is a convenience
        }
      },
      remove: function (requestId) {
        if (store) {
          try {
            store.removeItem(DRAFT_PREFIX + requestId);
          } catch (e) {
            // nothing to do
          }
        }
      }
    };
  }

  // =======================================================================================
  // 6. Rendering a question: a fieldset with the header chip, the question, the options,
  // Other, and the preview when the options have previews. Text only; model text through
  // modelEl. It reports what the person does through the handlers it is given.
  // Exports: buildQuestion.

  // buildQuestion renders question q (index qi) of a set. ctx is the set view's (see
  // buildSetView); onChoose and onOther report the person's input. Returns {fieldset,
  // inputs, labels, other, sync(locked)}: sync puts q's state into the controls.
  function buildQuestion(q, qi, set, ctx) {
    var S = ctx.S;
    var qv = {fieldset: null, inputs: [], labels: [], other: null, preview: null, focused: -1, sync: null};
    var fs = el("fieldset", "askuser-question");
    fs.setAttribute("data-testid", "question");
    fs.setAttribute("data-index", String(qi));
    fs.setAttribute("data-multi-select", q.multi ? "true" : "false");
    qv.fieldset = fs;

    var legend = el("legend", "askuser-legend");
    var chip = modelEl("span", "askuser-chip", q.header);
    chip.setAttribute("data-testid", "header");
    var qtext = modelEl("span", "askuser-question-text", q.text);
    qtext.id = newId("q");
    qtext.setAttribute("data-testid", "question-text");
    legend.appendChild(chip);
    legend.appendChild(document.createTextNode(" "));
    legend.appendChild(qtext);
    fs.appendChild(legend);

    var hintText = el("p", "askuser-hint", q.multi ? S.chooseAny : S.chooseOne);
    hintText.id = newId("hint");
    fs.appendChild(hintText);

    var body = el("div", "askuser-body");
    var main = el("div", "askuser-main");
    var group = el("div", "askuser-options");
    group.setAttribute("role", q.multi ? "group" : "radiogroup");
    group.setAttribute("aria-labelledby", qtext.id);
    group.setAttribute("aria-describedby", hintText.id);
    var name = newId("name");

    q.options.forEach(function (o, oi) {
      var opt = el("label", "askuser-option");
      opt.setAttribute("data-testid", "option");
      opt.setAttribute("data-index", String(oi));
      // An attribute value is never parsed as markup, so the exact label is safe here.
      opt.setAttribute("data-label", o.label);

      var input = el("input", "askuser-option-input");
      input.type = q.multi ? "checkbox" : "radio";
      input.name = name;
      input.value = String(oi);
      input.id = newId("opt");
      input.setAttribute("data-testid", "option-input");

      var text = el("span", "askuser-option-text");
      var title = el("span", "askuser-option-title");
      title.id = newId("title");
      var recommended = RECOMMENDED.test(o.label);
      var shown = recommended ? o.label.replace(RECOMMENDED, "") : o.label;
      var key = el("span", "askuser-key", String(oi + 1));
      key.setAttribute("aria-hidden", "true");
      title.appendChild(key);
      var labelSpan = modelEl("span", "askuser-option-label", shown || o.label);
      labelSpan.setAttribute("data-testid", "option-label");
      title.appendChild(labelSpan);
      if (recommended && shown) {
        title.appendChild(document.createTextNode(" "));
        var badge = el("span", "askuser-badge", S.recommended);
        badge.setAttribute("data-testid", "recommended");
        title.appendChild(badge);
        opt.classList.add("askuser-recommended");
      }
      var desc = modelEl("span", "askuser-option-desc", o.description);
      desc.id = newId("desc");
      desc.setAttribute("data-testid", "option-description");
      text.appendChild(title);
      text.appendChild(desc);
      input.setAttribute("aria-labelledby", title.id);
      input.setAttribute("aria-describedby", desc.id);

      opt.appendChild(input);
      opt.appendChild(text);
      group.appendChild(opt);
      qv.inputs.push(input);
      qv.labels.push(opt);

      input.addEventListener("change", function () {
        ctx.onChoose(qi, oi, input.checked);
        showPreview();
      });
      input.addEventListener("focus", function () {
        qv.focused = oi;
        showPreview();
      });
      input.addEventListener("blur", function () {
        if (qv.focused === oi) {
          qv.focused = -1;
        }
        showPreview();
      });
    });
    main.appendChild(group);

    var otherWrap = el("div", "askuser-other");
    var other = el("input", "askuser-other-input");
    other.type = "text";
    other.id = newId("other");
    other.placeholder = S.otherPlaceholder;
    other.maxLength = ctx.maxCustomInput;
    other.autocomplete = "off";
    other.dir = "auto";
    other.setAttribute("data-testid", "other-input");
    other.setAttribute("aria-describedby", qtext.id);
    var otherLabel = el("label", "askuser-other-label", S.other);
    otherLabel.htmlFor = other.id;
    otherWrap.appendChild(otherLabel);
    otherWrap.appendChild(other);
    main.appendChild(otherWrap);
    qv.other = other;
    other.addEventListener("input", function () {
      ctx.onOther(qi, other.value);
      showPreview();
    });
    body.appendChild(main);

    if (q.hasPreview) {
      fs.classList.add("askuser-has-preview");
      var pv = el("div", "askuser-preview");
      pv.setAttribute("data-testid", "preview");
      pv.setAttribute("role", "region");
      var cap = el("div", "askuser-preview-caption");
      cap.id = newId("cap");
      cap.dir = "auto";
      cap.setAttribute("data-testid", "preview-caption");
      pv.setAttribute("aria-labelledby", cap.id);
      var pvBody = el("div", "askuser-preview-body askuser-md");
      pvBody.dir = "auto";
      pvBody.setAttribute("data-testid", "preview-body");
      // A scrollable box must be reachable by keyboard.
      pvBody.tabIndex = 0;
      pvBody.setAttribute("aria-labelledby", cap.id);
      pv.appendChild(cap);
      pv.appendChild(pvBody);
      body.appendChild(pv);
      qv.preview = {box: pv, caption: cap, body: pvBody, shown: -2, cache: []};
    }
    fs.appendChild(body);

    // showPreview shows the preview of the focused option, else the chosen one, else the
    // first that has one.
    function showPreview() {
      var p = qv.preview;
      if (!p) {
        return;
      }
      var idx = qv.focused >= 0 ? qv.focused : q.chosen.indexOf(true);
      if (idx < 0) {
        for (var i = 0; i < q.options.length; i++) {
          if (q.options[i].preview !== "") {
            idx = i;
            break;
          }
        }
      }
      if (idx === p.shown) {
        return;
      }
      p.shown = idx;
      var o = q.options[idx];
      p.box.setAttribute("data-option-index", String(idx));
      p.caption.textContent = S.preview + " \u2014 " + clean(o.label);
      if (!p.cache[idx]) {
        var holder = el("div", "askuser-md-doc");
        if (o.preview !== "") {
          holder.appendChild(markdown(o.preview));
        } else {
          holder.appendChild(el("p", "askuser-md-p askuser-preview-none", S.noPreview));
        }
        p.cache[idx] = holder;
      }
      while (p.body.firstChild) {
        p.body.removeChild(p.body.firstChild);
      }
      p.body.appendChild(p.cache[idx]);
      p.body.scrollTop = 0;
    }

    // sync puts the state's choices into the controls. The Other box is written only when
    // it differs, so that the caret of someone typing stays where it is.
    qv.sync = function (locked) {
      fs.disabled = locked;
      qv.inputs.forEach(function (inp, i) {
        if (inp.checked !== q.chosen[i]) {
          inp.checked = q.chosen[i];
        }
        qv.labels[i].classList.toggle("askuser-checked", q.chosen[i]);
      });
      if (other.value !== q.other) {
        other.value = q.other;
      }
      showPreview();
    };
    showPreview();
    return qv;
  }

  // =======================================================================================
  // 7. Rendering a set, and the note an ended set leaves: the sticky header (title,
  // progress, countdown), the questions, and the sticky footer (what is missing, errors,
  // the buttons). A view reads a QuestionSet and decides nothing.
  // Exports: buildSetView, buildNote, describeAnswers.

  /**
   * buildSetView renders set. ctx: {S, maxCustomInput, onChoose(qi, oi, on),
   * onOther(qi, text), onSubmit(), onDecline(), onDismiss()}.
   * Returns the view: {form, update(connected), setCountdown(left), focusQuestion(qi),
   * focusOption(qi, oi), questionOf(node), head, foot}.
   */
  function buildSetView(set, ctx) {
    var S = ctx.S;
    var form = el("form", "askuser-panel");
    form.noValidate = true;
    form.setAttribute("data-testid", "panel");
    form.setAttribute("data-request-id", set.requestId);

    var head = el("div", "askuser-head");
    var title = el("p", "askuser-title", S.title);
    title.id = newId("ptitle");
    form.setAttribute("aria-labelledby", title.id);
    var progress = el("span", "askuser-progress");
    progress.setAttribute("data-testid", "progress");
    progress.hidden = set.questions.length < 2;
    var countdown = el("span", "askuser-countdown");
    countdown.setAttribute("role", "timer");
    countdown.setAttribute("data-testid", "countdown");
    head.appendChild(title);
    head.appendChild(progress);
    head.appendChild(countdown);
    form.appendChild(head);

    var qwrap = el("div", "askuser-questions");
    var qviews = set.questions.map(function (q, qi) {
      var qv = buildQuestion(q, qi, set, ctx);
      qwrap.appendChild(qv.fieldset);
      return qv;
    });
    form.appendChild(qwrap);

    var foot = el("div", "askuser-foot");
    var error = el("div", "askuser-error");
    error.setAttribute("role", "alert");
    error.setAttribute("data-testid", "error");
    error.hidden = true;
    var row = el("div", "askuser-foot-row");
    var words = el("div", "askuser-foot-notes");
    var hint = el("p", "askuser-hint-missing");
    hint.id = newId("hint");
    hint.setAttribute("data-testid", "hint");
    var status = el("p", "askuser-status");
    status.setAttribute("role", "status");
    status.setAttribute("data-testid", "status");
    words.appendChild(hint);
    words.appendChild(status);
    var buttons = el("div", "askuser-buttons");
    var dismiss = el("button", "askuser-button askuser-dismiss", S.dismiss);
    dismiss.type = "button";
    dismiss.setAttribute("data-testid", "dismiss");
    dismiss.hidden = true;
    var decline = el("button", "askuser-button askuser-decline", S.decline);
    decline.type = "button";
    decline.setAttribute("data-testid", "decline");
    // Submit stays focusable while the answers are incomplete (aria-disabled, not disabled),
    // so that a keyboard reaches it and it can say what is missing.
    var submit = el("button", "askuser-button askuser-submit", S.submit);
    submit.type = "submit";
    submit.setAttribute("data-testid", "submit");
    submit.setAttribute("aria-describedby", hint.id);
    buttons.appendChild(dismiss);
    buttons.appendChild(decline);
    buttons.appendChild(submit);
    row.appendChild(words);
    row.appendChild(buttons);
    foot.appendChild(error);
    foot.appendChild(row);
    form.appendChild(foot);

    form.addEventListener("submit", function (e) {
      e.preventDefault();
      ctx.onSubmit();
    });
    decline.addEventListener("click", function () {
      ctx.onDecline();
    });
    dismiss.addEventListener("click", function () {
      ctx.onDismiss();
    });

    var shownError = null;

    function renderError() {
      if (set.error === shownError) {
        return;
      }
      shownError = set.error;
      while (error.firstChild) {
        error.removeChild(error.firstChild);
      }
      var e = set.error;
      if (!e || (!e.message && !(e.problems && e.problems.length))) {
        error.hidden = true;
        return;
      }
      var msg = el("p", "askuser-error-message", e.message);
      msg.dir = "auto";
      error.appendChild(msg);
      if (Array.isArray(e.problems) && e.problems.length) {
        var ul = el("ul", "askuser-error-problems");
        e.problems.forEach(function (pr) {
          ul.appendChild(modelEl("li", null, pr));
        });
        error.appendChild(ul);
      }
      error.hidden = false;
    }

    function renderHint(missing) {
      while (hint.firstChild) {
        hint.removeChild(hint.firstChild);
      }
      if (!missing.length) {
        hint.hidden = true;
        return;
      }
      var names = missing.map(function (qi) {
        var q = set.questions[qi];
        var b = modelEl("b", "askuser-hint-name", q.header || q.text);
        return b;
      });
      var parts = S.needAnswer.split("{names}");
      hint.appendChild(document.createTextNode(parts[0]));
      joinList(hint, names, S);
      hint.appendChild(document.createTextNode(parts.slice(1).join("")));
      hint.hidden = false;
    }

    function update(connected) {
      var missing = set.missing();
      var complete = missing.length === 0;
      var locked = !!set.sending || set.gone;
      var blocked = !complete || locked || !connected;
      submit.setAttribute("aria-disabled", blocked ? "true" : "false");
      decline.setAttribute("aria-disabled", locked || !connected ? "true" : "false");
      decline.hidden = set.gone;
      dismiss.hidden = !set.gone;
      form.setAttribute("data-complete", complete ? "true" : "false");
      form.setAttribute("aria-busy", set.sending ? "true" : "false");
      var answered = set.questions.length - missing.length;
      progress.textContent = S.progress(answered, set.questions.length);
      qviews.forEach(function (qv, qi) {
        qv.sync(locked);
        qv.fieldset.setAttribute("data-answered", set.answered(qi) ? "true" : "false");
      });
      renderHint(set.gone || set.sending ? [] : missing);
      status.textContent = set.sending ? S.sending : connected ? "" : S.waitingForConnection;
      renderError();
    }

    function setCountdown(left, text) {
      if (left === null) {
        countdown.hidden = true;
        return;
      }
      countdown.hidden = false;
      countdown.textContent = text;
      countdown.classList.toggle("askuser-urgent", left <= 30);
      form.setAttribute("data-seconds-left", String(left));
    }

    function focusQuestion(qi) {
      var qv = qviews[qi];
      if (!qv) {
        return;
      }
      var q = set.questions[qi];
      var k = q.chosen.indexOf(true);
      var target = qv.inputs[k >= 0 ? k : 0] || qv.other;
      target.focus();
    }

    return {
      form: form,
      head: head,
      foot: foot,
      hint: hint,
      update: update,
      setCountdown: setCountdown,
      focusQuestion: focusQuestion,
      focusOption: function (qi, oi) {
        var qv = qviews[qi];
        if (qv && qv.inputs[oi]) {
          qv.inputs[oi].focus();
        }
      },
      questionOf: function (node) {
        for (var i = 0; i < qviews.length; i++) {
          if (qviews[i].fieldset.contains(node)) {
            return i;
          }
        }
        return -1;
      }
    };
  }

  // describeAnswers appends to parent what answers (as in a tool result) chose: "React",
  // or, for several questions, "Database: PostgreSQL; Testing: Unit tests, “Fuzz tests”".
  function describeAnswers(parent, answers, set, S) {
    var headers = {};
    if (set) {
      set.questions.forEach(function (q) {
        headers[q.text] = q.header || q.text;
      });
    }
    answers.forEach(function (a, i) {
      if (i > 0) {
        parent.appendChild(document.createTextNode("; "));
      }
      a = a || {};
      if (answers.length > 1) {
        parent.appendChild(modelEl("span", "askuser-note-header", headers[a.question] || a.question));
        parent.appendChild(document.createTextNode(": "));
      }
      var items = (Array.isArray(a.selectedLabels) ? a.selectedLabels : []).map(function (l) {
        return modelEl("span", "askuser-note-choice", l);
      });
      if (typeof a.customInput === "string" && a.customInput !== "") {
        items.push(modelEl("q", "askuser-note-choice", a.customInput));
      }
      items.forEach(function (item, k) {
        if (k > 0) {
          parent.appendChild(document.createTextNode(S.listSeparator));
        }
        parent.appendChild(item);
      });
    });
  }

  /**
   * buildNote renders the read-only note an ended set leaves where it was. info: {set,
   * text, answers (or null), mine (the answers this device sent and that were not used, or
   * null), typed (Other texts that would be lost)}. Returns {node, setAnswers(answers)}.
   */
  function buildNote(info, S, onDismiss) {
    var node = el("div", "askuser-note");
    node.setAttribute("data-testid", "ended");
    node.setAttribute("data-request-id", info.set.requestId);
    node.setAttribute("data-outcome", info.outcome);
    node.setAttribute("role", "group");
    node.tabIndex = -1;
    var body = el("div", "askuser-note-body");
    var line = el("p", "askuser-note-text");
    line.setAttribute("data-testid", "ended-text");
    var lead = el("span", null, info.text);
    var answersSpan = el("span", "askuser-note-answers");
    answersSpan.setAttribute("data-testid", "ended-answers");
    line.appendChild(lead);
    line.appendChild(answersSpan);
    body.appendChild(line);
    node.setAttribute("aria-label", info.text);

    function setAnswers(answers) {
      if (!info.withAnswers || !Array.isArray(answers) || !answers.length) {
        return;
      }
      while (answersSpan.firstChild) {
        answersSpan.removeChild(answersSpan.firstChild);
      }
      answersSpan.appendChild(document.createTextNode(": "));
      describeAnswers(answersSpan, answers, info.set, S);
    }
    setAnswers(info.answers);

    if (info.mine) {
      var mine = el("p", "askuser-note-extra");
      mine.setAttribute("data-testid", "ended-mine");
      mine.appendChild(document.createTextNode(S.yourAnswer));
      describeAnswers(mine, info.mine, info.set, S);
      body.appendChild(mine);
    } else if (info.typed.length) {
      var typed = el("p", "askuser-note-extra");
      typed.setAttribute("data-testid", "ended-typed");
      typed.appendChild(document.createTextNode(S.yourText));
      info.typed.forEach(function (t, i) {
        if (i > 0) {
          typed.appendChild(document.createTextNode(S.listSeparator));
        }
        // Kept as selectable text, so that it can be copied into a message.
        typed.appendChild(modelEl("q", "askuser-note-typed", t));
      });
      body.appendChild(typed);
    }
    var dismiss = el("button", "askuser-button askuser-note-dismiss", S.dismiss);
    dismiss.type = "button";
    dismiss.setAttribute("data-testid", "dismiss");
    dismiss.addEventListener("click", onDismiss);
    node.appendChild(body);
    node.appendChild(dismiss);
    return {node: node, setAnswers: setAnswers};
  }

  // =======================================================================================
  // 8. Announcer and countdown: what screen readers are told, and the time left of each set.
  // Exports: createAnnouncer, createCountdown.

  // Moments at which the time left is announced to screen readers, in seconds.
  var ANNOUNCE_AT = [60, 10];

  // createAnnouncer returns say(text), which a polite live region inside parent speaks.
  function createAnnouncer(parent) {
    var node = el("div", "askuser-sr-only");
    node.setAttribute("aria-live", "polite");
    node.setAttribute("data-testid", "announcer");
    parent.appendChild(node);
    return function say(text) {
      // Clear first so that the same text twice is still announced.
      node.textContent = "";
      setTimeout(function () {
        node.textContent = text;
      }, 50);
    };
  }

  // createCountdown ticks once a second while any entry of entries() has an expiry: it
  // shows the time left in each entry's view and announces it as it passes ANNOUNCE_AT.
  // Returns {tick(), stop()}; tick also starts and stops the ticking as needed.
  function createCountdown(entries, S, now, say) {
    var ticker = null;
    var stopped = false;
    function tick() {
      var any = false;
      var t = now();
      entries().forEach(function (entry) {
        var set = entry.set;
        if (isNaN(set.expiresAt)) {
          entry.view.setCountdown(null);
          return;
        }
        any = true;
        var left = Math.max(0, Math.ceil((set.expiresAt - t) / 1000));
        entry.view.setCountdown(left, left > 0 ? S.timeLeft(left) : S.timeUp);
        ANNOUNCE_AT.forEach(function (at) {
          if (left <= at && left > 0 && !entry.announced[at]) {
            entry.announced[at] = true;
            // Only announce a threshold as it passes, not all of them for a late arrival.
            if (left > at - 3) {
              say(S.timeLeftSpoken(left));
            }
          }
        });
        if (left === 0 && !entry.announced[0]) {
          entry.announced[0] = true;
          say(S.timeUp);
        }
      });
      if (any && !ticker && !stopped) {
        ticker = setInterval(tick, 1000);
      } else if (!any && ticker) {
        clearInterval(ticker);
        ticker = null;
      }
    }
    return {
      tick: tick,
      stop: function () {
        stopped = true;
        if (ticker) {
          clearInterval(ticker);
          ticker = null;
        }
      }
    };
  }

  // =======================================================================================
  // 9. Notes: what an ended set leaves where it was, unless this device's own answer or
  // decline ended it: "Answered on another device: React", "Timed out", with any text the
  // person had typed. The last few ended sets are remembered, for a refusal that arrives
  // after the end (this device lost the race) and for answers learned later.
  // Exports: createNotes.

  var NOTE_LIMIT = 3; // notes shown at most; the oldest goes first
  var ENDED_LIMIT = 20; // ended sets remembered

  function createNotes(listEl, S, say, onRemoved) {
    var ended = new Map(); // requestId -> {set, outcome, own, answers, note}, oldest first

    function show(record, before, text, withAnswers, mine) {
      var set = record.set;
      record.note = buildNote({
        set: set,
        outcome: record.outcome,
        text: text,
        withAnswers: withAnswers,
        answers: record.answers,
        mine: mine,
        typed: mine ? [] : set.typed()
      }, S, function () {
        dismiss(record);
      });
      listEl.insertBefore(record.note.node, before && before.parentNode === listEl ? before : null);
      var all = listEl.querySelectorAll(".askuser-note");
      for (var i = 0; i < all.length - NOTE_LIMIT; i++) {
        listEl.removeChild(all[i]);
      }
      say(text);
    }

    function dismiss(record) {
      if (!record.note) {
        return;
      }
      var node = record.note.node;
      var hadFocus = node.contains(document.activeElement);
      var next = node.nextElementSibling;
      if (node.parentNode) {
        node.parentNode.removeChild(node);
      }
      record.note = null;
      if (hadFocus) {
        onRemoved(next);
      }
    }

    return {
      // ended records how set ended and shows its note in place of before (its form); it
      // returns the note's node, or null when this device's own answer or decline ended it.
      ended: function (set, outcome, before) {
        var record = {set: set, outcome: outcome, own: false, answers: null, note: null};
        ended.delete(set.requestId);
        ended.set(set.requestId, record);
        while (ended.size > ENDED_LIMIT) {
          ended.delete(ended.keys().next().value);
        }
        if (!set.lost && ((set.sending === "answers" && outcome === "answered") ||
          (set.sending === "decline" && outcome === "declined"))) {
          record.own = true;
          say(outcome === "answered" ? S.answerSent : S.resolved.declined);
          return null;
        }
        if (outcome === "answered" && (set.lost || set.sending === "answers")) {
          show(record, before, S.lostRace, true, set.answersSent);
        } else if (outcome === "answered") {
          show(record, before, S.answeredElsewhere, true, null);
        } else if (outcome === "declined") {
          show(record, before, S.declinedElsewhere, false, null);
        } else {
          show(record, before, S.resolved[outcome] || S.ended, false, null);
        }
        return record.note.node;
      },
      // refused takes a not_pending refusal of a set that has ended here: an answer taken
      // for this device's own was refused, so another device was first.
      refused: function (requestId) {
        var record = ended.get(requestId);
        if (record && record.own && record.set.answersSent) {
          record.own = false;
          show(record, null, S.lostRace, true, record.set.answersSent);
        }
      },
      setAnswers: function (requestId, answers) {
        var record = ended.get(requestId);
        if (record) {
          record.answers = answers;
          if (record.note) {
            record.note.setAnswers(answers);
          }
        }
      },
      // forget drops what is known of a set asked again.
      forget: function (requestId) {
        var record = ended.get(requestId);
        if (record) {
          dismiss(record);
          ended.delete(requestId);
        }
      },
      clear: function () {
        ended.forEach(dismiss);
        ended.clear();
      }
    };
  }

  // =======================================================================================
  // 10. Keys and focus: 1–4 choose an option of the question in focus (or of the first
  // unanswered), Enter submits or goes to what is missing, Esc declines; a focused control
  // is scrolled clear of its set's sticky header and footer.
  // Exports: bindKeys.

  // scrollerOf returns the nearest ancestor of node that scrolls vertically, or null for
  // the page.
  function scrollerOf(node) {
    for (var n = node.parentElement; n && n !== document.body && n !== document.documentElement; n = n.parentElement) {
      var oy = getComputedStyle(n).overflowY;
      if ((oy === "auto" || oy === "scroll") && n.scrollHeight > n.clientHeight) {
        return n;
      }
    }
    return null;
  }

  // reveal scrolls so that target, a control of view, is seen whole.
  function reveal(view, target) {
    if (view.head.contains(target) || view.foot.contains(target)) {
      return;
    }
    var box = target.closest(".askuser-option, .askuser-other, .askuser-preview-body") || target;
    var r = box.getBoundingClientRect();
    var scroller = scrollerOf(view.form);
    var sr = scroller ? scroller.getBoundingClientRect() : {top: 0, bottom: root.innerHeight};
    var top = Math.max(sr.top, view.head.getBoundingClientRect().bottom);
    var bottom = Math.min(sr.bottom, view.foot.getBoundingClientRect().top);
    var margin = 8;
    var delta = 0;
    if (r.bottom > bottom - margin) {
      delta = r.bottom - bottom + margin;
    }
    if (r.top - delta < top + margin) {
      delta = r.top - top - margin;
    }
    if (Math.abs(delta) >= 1) {
      if (scroller) {
        scroller.scrollTop += delta;
      } else {
        root.scrollBy(0, delta);
      }
    }
  }

  /**
   * bindKeys listens on rootEl. panel: {entryOf(node) (the entry of the set node is in, or
   * null), submit(entry), decline(entry), dismiss(entry), choose(entry, qi, oi, on)};
   * shortcuts: whether the keys are on. Returns a function that stops listening.
   */
  function bindKeys(rootEl, panel, shortcuts) {
    function onKey(e) {
      if (!shortcuts || e.defaultPrevented || e.isComposing || e.keyCode === 229 || e.altKey || e.ctrlKey || e.metaKey) {
        return;
      }
      var t = e.target;
      var entry = panel.entryOf(t);
      if (!entry) {
        return;
      }
      var set = entry.set;
      if (e.key === "Escape") {
        e.preventDefault();
        if (set.gone) {
          panel.dismiss(entry);
        } else if (!set.sending) {
          panel.decline(entry);
        }
        return;
      }
      if (e.key === "Enter") {
        if (t.tagName === "BUTTON" || e.shiftKey) {
          return; // a button does what it says
        }
        e.preventDefault();
        panel.submit(entry);
        return;
      }
      var typing = t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type === "text");
      if (typing || e.shiftKey || !/^[1-9]$/.test(e.key) || set.sending || set.gone) {
        return;
      }
      var qi = entry.view.questionOf(t);
      if (qi < 0) {
        var missing = set.missing();
        qi = missing.length ? missing[0] : 0;
      }
      var q = set.questions[qi];
      var oi = Number(e.key) - 1;
      if (!q || oi >= q.options.length) {
        return;
      }
      e.preventDefault();
      panel.choose(entry, qi, oi, q.multi ? !q.chosen[oi] : true);
      entry.view.focusOption(qi, oi);
    }
    function onFocusIn(e) {
      var t = e.target;
      // After the browser's own scrolling into view.
      root.requestAnimationFrame(function () {
        var entry = panel.entryOf(t);
        if (entry && document.activeElement === t) {
          reveal(entry.view, t);
        }
      });
    }
    rootEl.addEventListener("keydown", onKey);
    rootEl.addEventListener("focusin", onFocusIn);
    return function () {
      rootEl.removeEventListener("keydown", onKey);
      rootEl.removeEventListener("focusin", onFocusIn);
    };
  }

  // =======================================================================================
  // 11. Panel: every pending question set of a session, kept in step with the events it is
  // given. It ties the parts above together and sends answers through options.send.
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
   * Returns {handle(event), setConnected(bool), setAnswers(requestId, answers),
   * requestIds(), lang, clear(), destroy()}; handle takes a parsed event envelope (best
   * parsed with AskUser.parse) and returns true when it was one of the panel's.
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
    var sets = new Map(); // requestId -> entry, oldest first
    var connected = opts.connected === undefined ? true : !!opts.connected;
    var destroyed = false;
    var countdown = createCountdown(function () { return Array.from(sets.values()); }, S,
      typeof opts.now === "function" ? opts.now : function () { return Date.now(); }, say);
    var notes = createNotes(listEl, S, say, focusFrom);

    function refresh(entry) {
      entry.view.update(connected);
      banner.hidden = connected || sets.size === 0;
    }

    // focusFrom keeps keyboard users in the list when what had the focus goes: node (the
    // next set or note) or else the last one.
    function focusFrom(node) {
      var target = node && node.parentNode === listEl ? node : listEl.lastElementChild;
      var entry = target && sets.get(target.getAttribute("data-request-id"));
      if (entry && target === entry.view.form) {
        focusSet(entry);
      } else if (target) {
        target.focus();
      }
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
      return !a || a === document.body || a === document.documentElement || rootEl.contains(a);
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
        hint.classList.remove("askuser-attention");
        void hint.offsetWidth; // restart the animation
        hint.classList.add("askuser-attention");
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
      var existing = sets.get(data.requestId);
      if (existing) {
        // The same ask again (a reconnect, another device connecting): keep what the person
        // has chosen so far, take the newer expiry.
        existing.set.session = sessionOf(ev);
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
      notes.forget(data.requestId); // asked again after it ended: a host may retry an id
      var set = new QuestionSet(data, sessionOf(ev));
      set.restore(drafts.load(set.requestId));
      var entry = {set: set, view: null, replyTimer: null, announced: {}, hadFocus: false};
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
          endSet(set.requestId, null);
        }
      });
      var focus = shouldFocus();
      sets.set(set.requestId, entry);
      listEl.appendChild(entry.view.form);
      refresh(entry);
      countdown.tick();
      say(S.questionsAsked(set.questions.length));
      if (focus) {
        focusSet(entry);
      }
    }

    // endSet removes a set: outcome is how it ended on the server, or null when the person
    // dismissed it here.
    function endSet(requestId, outcome) {
      var entry = sets.get(requestId);
      if (!entry) {
        return;
      }
      sets.delete(requestId);
      drafts.remove(requestId);
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
      banner.hidden = connected || sets.size === 0;
      countdown.tick();
    }

    // errorFor shows a refusal in the set it names. One that names no set is not about an
    // answer (the panel always names its set) and is left to the host page's listeners.
    function errorFor(data) {
      data = data || {};
      var id = typeof data.requestId === "string" ? data.requestId : "";
      var entry = sets.get(id);
      if (!entry) {
        if (data.code === "not_pending") {
          notes.refused(id);
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
        var form = node && node.closest ? node.closest("form.askuser-panel") : null;
        var entry = form ? sets.get(form.getAttribute("data-request-id")) : null;
        return entry && entry.view.form === form ? entry : null;
      },
      submit: function (entry) {
        entry.view.form.requestSubmit();
      },
      decline: decline,
      dismiss: function (entry) {
        endSet(entry.set.requestId, null);
      },
      choose: choose
    }, opts.shortcuts !== false);

    // ---- the panel's face ---------------------------------------------------------------

    function handle(ev) {
      if (destroyed || !ev || typeof ev !== "object") {
        return false;
      }
      switch (ev.type) {
        case EVENT_ASK:
          addSet(ev);
          return true;
        case EVENT_RESOLVED:
          if (ev.data && typeof ev.data.requestId === "string") {
            endSet(ev.data.requestId, str(ev.data.outcome) || "ended");
            // An answered question's resolution carries the answers, for its note.
            if (Array.isArray(ev.data.answers)) {
              notes.setAnswers(ev.data.requestId, ev.data.answers);
            }
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
      sets.forEach(function (entry) {
        if (!on && entry.set.sending) {
          entry.set.error = {message: S.lostReply};
          setSending(entry, "");
        }
        refresh(entry);
      });
      banner.hidden = connected || sets.size === 0;
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
      banner.hidden = true;
      countdown.tick();
    }

    function destroy() {
      clear();
      destroyed = true;
      countdown.stop();
      unbindKeys();
      if (rootEl.parentNode) {
        rootEl.parentNode.removeChild(rootEl);
      }
    }

    return {
      handle: handle,
      setConnected: setConnected,
      setAnswers: function (requestId, answers) {
        if (Array.isArray(answers)) {
          notes.setAnswers(str(requestId), answers);
        }
      },
      requestIds: function () { return Array.from(sets.keys()); },
      lang: lang,
      clear: clear,
      destroy: destroy
    };
  }

  // =======================================================================================
  // 12. Connection: the WebSocket to the hub, reopened with backoff; the page's own events
  // share it.
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
   * http becomes ws) and renders the session's questions into options.container.
   *
   * Options: url, container (both required); lang ("en", "zh"); strings (overrides of the
   * panel's texts); maxCustomInput; autoFocus; drafts; shortcuts; minDelay and maxDelay, in
   * milliseconds, of the reconnect backoff (default 500 and 30000). docs/WEB.md has each.
   *
   * Returns a client:
   *   send(obj)       sends obj (JSON-encoded unless a string); false when not connected.
   *   on(type, fn)    calls fn(data, event) for each server event of that type ("*" for
   *                   all), and fn(info) for "open", "close" and "reconnecting"; returns a
   *                   function that removes fn.
   *   connected()     whether the socket is open.
   *   requestIds()    the requestIds of the panels shown, oldest first.
   *   setAnswers(id, answers)  what a question set's answers were, for its note.
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
      }
    };
  }

  root.AskUser = {
    version: "2",
    connect: connect,
    createPanel: createPanel,
    markdown: markdown,
    parse: parseEvent,
    stringify: stringifyEvent
  };
})(typeof window !== "undefined" ? window : this);
