// STRINGS, stringsFor, chooseLanguage, el, modelEl: the texts in two languages, safe text.
//
// Which language to use: the lang option, else the nearest lang attribute around the
// container, else the browser's. Text nodes for what the model wrote are made with
// textContent, without bidi controls, and read in the text's own direction.
//
// Exports: STRINGS, chooseLanguage, stringsFor, el, modelEl, clean, str, joinList, newId,
// afterPaint.

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
    writeAnswer: "Write your answer.",
    freeTextLabel: "Your answer",
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
    writeAnswer: "\u5199\u4e0b\u4f60\u7684\u56de\u7b54\u3002",
    freeTextLabel: "\u4f60\u7684\u56de\u7b54",
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

// stringsFor returns the texts of lang with overrides; a table of texts (resolved, say)
// is merged key by key, so that an override of one of its texts keeps the others.
function stringsFor(lang, overrides) {
  var base = STRINGS[lang] || STRINGS.en;
  var S = merge(base, overrides);
  for (var k in base) {
    if (Object.prototype.hasOwnProperty.call(base, k) && base[k] && typeof base[k] === "object") {
      S[k] = merge(base[k], overrides && overrides[k]);
    }
  }
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

// afterPaint runs fn once the browser has painted what the page holds now (the task after
// the next frame), or at once when the page is hidden and paints nothing (a hidden
// page's timers may wait a minute). What lays the page out at once, such as focus(),
// waits there rather than hold a new question back from the screen.
function afterPaint(fn) {
  if (typeof root.requestAnimationFrame !== "function" || document.hidden) {
    fn();
    return;
  }
  root.requestAnimationFrame(function () {
    setTimeout(fn, 0);
  });
}
