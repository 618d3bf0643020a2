// The approval stack's texts, in English and Chinese, added to STRINGS.
//
// The texts of approval cards, their notes and their JSON checks, as more keys of the
// panel's one strings table, so that options.strings overrides them as it does the
// question panel's. A text that depends on a value is a function.
//
// Exports: none (it adds to STRINGS).

(function (tables) {
  function add(table, texts) {
    for (var k in texts) {
      if (Object.prototype.hasOwnProperty.call(texts, k)) {
        table[k] = texts[k];
      }
    }
  }
  var TYPES_EN = {string: "a string", number: "a number", integer: "an integer", object: "an object",
    array: "an array", boolean: "true or false", "null": "null"};
  var TYPES_ZH = {string: "\u5b57\u7b26\u4e32", number: "\u6570\u5b57", integer: "\u6574\u6570",
    object: "\u5bf9\u8c61", array: "\u6570\u7ec4", boolean: "true \u6216 false", "null": "null"};
  function typeList(types, names, or) {
    return types.map(function (t) { return names[t] || t; }).join(or);
  }

  add(tables.en, {
    approvalKicker: "Approval needed",
    approvalLabel: function (tool) { return "Approval needed: " + tool; },
    approvalArguments: function (tool) { return "Arguments of " + tool; },
    approvalServer: "A tool of the server ",
    approvalTrusted: " (marked trusted by the host)",
    approvalUntrusted: " (not marked trusted)",
    approvalHints: function (list) { return "The server says this tool is: " + list + "."; },
    approvalHintSep: ", ",
    approvalNoHints: "The server says nothing of what this tool does.",
    approvalHint: {
      readOnly: ["read-only", "not read-only"],
      destructive: ["destructive", "not destructive"],
      idempotent: ["idempotent", "not idempotent"],
      openWorld: ["reaching outside systems", "not reaching outside systems"]
    },
    approvalInvalid: "The model's arguments are not valid JSON. You can deny the call, or edit it into valid arguments.",
    approve: "Approve",
    deny: "Deny",
    edit: "Edit",
    always: "Always allow for this session",
    alwaysCovers: function (what) { return "\u201cAlways allow\u201d covers " + what + "."; },
    denyReason: "Reason (optional; the agent reads it)",
    denyPlaceholder: "Why not?",
    denyPresets: "Or pick a reason:",
    denyConfirm: "Deny the call",
    editLabel: "The arguments to run the tool with (JSON)",
    editConfirm: "Run with these arguments",
    editKeys: "Ctrl+Enter runs it; Esc goes back.",
    editFix: "Fix the problems above to run the tool.",
    editRefused: "The server refused the edit:",
    editOK: "Valid arguments.",
    back: "Back",
    showAll: function (n) { return "show all (" + n + " characters)"; },
    showLess: "show less",
    moreItems: function (n) { return n + " more"; },
    approvalAsked: function (tool) { return "The agent asks to run " + tool + ". Approve or deny it."; },
    approvalTimeLeftSpoken: function (seconds) {
      if (seconds >= 60) {
        var m = Math.round(seconds / 60);
        return m === 1 ? "One minute left to decide." : m + " minutes left to decide.";
      }
      return seconds + " seconds left to decide.";
    },
    approvalGone: "This approval is no longer open.",
    approvalWaiting: function (left, names, approved) {
      var more = left === 1 ? "1 more approval" : left + " more approvals";
      return "Waiting for " + more + (names ? " from " + names : "") + (approved ? ": " + approved + " approved." : ".");
    },
    approvalNames: ", ",
    notApprover: "You are not among the approvers of this call: it waits for them.",
    approvalReadOnly: "You cannot decide this call: it waits for its approvers.",
    approvalAskedReadOnly: function (tool) { return "The agent asks to run " + tool + "; it waits for its approvers."; },
    approvalNowYours: function (tool) { return "You may now decide " + tool + "."; },
    approvalSession: function (title) { return "Session: " + title; },
    approvalNotConnected: "Not connected; your decision could not be sent. Try again once reconnected.",
    approvalLostReply: "The connection dropped before the server replied. If the approval is still open, decide again.",
    approvalLate: "Another device decided first; your decision was not used.",
    approvalDone: {
      approve: "Approved.",
      deny: "Denied.",
      edit: "Edited: the tool runs with your arguments.",
      always: "Always allowed for this session."
    },
    approvedElsewhere: "Approved on another device.",
    alwaysElsewhere: function (grant) { return "Always allowed on another device: " + grant + "."; },
    editedElsewhere: function (args) { return "Edited on another device; the tool runs with " + args + "."; },
    deniedElsewhere: function (reason) { return reason ? "Denied on another device: " + reason : "Denied on another device."; },
    approvalEnded: function (tool) { return "The approval of " + tool + " has ended."; },
    approvalResolved: {
      timed_out: function (tool) { return "Timed out: " + tool + " did not run."; },
      cancelled: function (tool) { return "Cancelled: " + tool + " did not run."; },
      shutdown: function (tool) { return "The approval service shut down: " + tool + " did not run."; },
      undelivered: function (tool) { return "The approval could not be delivered: " + tool + " did not run."; },
      disconnected: function (tool) { return "No device was connected: " + tool + " did not run."; }
    },
    jsonProblem: function (code, found) {
      switch (code) {
        case "empty": return "empty: write the arguments as JSON, e.g. {}";
        case "end": return "the JSON ends too soon";
        case "key": return "expected a property name in double quotes" + (found ? ", not " + found : "");
        case "colon": return "expected : after the property name";
        case "object": return "expected , or } after a property";
        case "array": return "expected , or ] after an item";
        case "string": return "a string cannot hold a line break or a control character (write \\n)";
        case "escape": return "not a valid escape in a string";
        case "number": return "not a valid number";
        case "trailing": return "more text after the JSON value";
        case "deep": return "nested too deeply";
      }
      return "unexpected " + (found || "text");
    },
    jsonAt: function (line, column, text) { return "Not valid JSON, line " + line + ", column " + column + ": " + text; },
    schema: {
      type: function (types, got) { return "must be " + typeList(types, TYPES_EN, " or ") + ", not " + (TYPES_EN[got] || got); },
      required: "is required",
      additional: function (allowed) {
        return allowed.length ? "is not a field of this tool (it takes " + allowed.join(", ") + ")" : "is not a field of this tool";
      },
      minLength: function (n) { return n === 1 ? "must not be empty" : "must be at least " + n + " characters long"; },
      maxLength: function (n) { return "must be at most " + n + " characters long"; },
      enumOf: function (values) { return "must be one of " + values.join(", "); },
      constant: function (value) { return "must be " + value; },
      minimum: function (n) { return "must be at least " + n; },
      maximum: function (n) { return "must be at most " + n; },
      exclusiveMinimum: function (n) { return "must be greater than " + n; },
      exclusiveMaximum: function (n) { return "must be less than " + n; },
      minItems: function (n) { return "must have at least " + n + " items"; },
      maxItems: function (n) { return "must have at most " + n + " items"; },
      pattern: function (p) { return "must match the pattern " + p; },
      never: "is not allowed"
    }
  });

  add(tables.zh, {
    approvalKicker: "\u9700\u8981\u4f60\u7684\u6279\u51c6",
    approvalLabel: function (tool) { return "\u9700\u8981\u6279\u51c6\uff1a" + tool; },
    approvalArguments: function (tool) { return tool + " \u7684\u53c2\u6570"; },
    approvalServer: "\u6765\u81ea\u670d\u52a1\u5668 ",
    approvalTrusted: "\uff08\u4e3b\u673a\u6807\u8bb0\u4e3a\u53ef\u4fe1\uff09",
    approvalUntrusted: "\uff08\u672a\u6807\u8bb0\u4e3a\u53ef\u4fe1\uff09",
    approvalHints: function (list) { return "\u670d\u52a1\u5668\u79f0\u6b64\u5de5\u5177\uff1a" + list + "\u3002"; },
    approvalHintSep: "\u3001",
    approvalNoHints: "\u670d\u52a1\u5668\u672a\u8bf4\u660e\u6b64\u5de5\u5177\u7684\u4f5c\u7528\u3002",
    approvalHint: {
      readOnly: ["\u53ea\u8bfb", "\u975e\u53ea\u8bfb"],
      destructive: ["\u6709\u7834\u574f\u6027", "\u65e0\u7834\u574f\u6027"],
      idempotent: ["\u5e42\u7b49", "\u975e\u5e42\u7b49"],
      openWorld: ["\u8bbf\u95ee\u5916\u90e8\u7cfb\u7edf", "\u4e0d\u8bbf\u95ee\u5916\u90e8\u7cfb\u7edf"]
    },
    approvalInvalid: "\u6a21\u578b\u7ed9\u51fa\u7684\u53c2\u6570\u4e0d\u662f\u6709\u6548\u7684 JSON\u3002\u4f60\u53ef\u4ee5\u62d2\u7edd\uff0c\u6216\u628a\u5b83\u6539\u6210\u6709\u6548\u7684\u53c2\u6570\u3002",
    approve: "\u6279\u51c6",
    deny: "\u62d2\u7edd",
    edit: "\u4fee\u6539",
    always: "\u672c\u4f1a\u8bdd\u5185\u603b\u662f\u5141\u8bb8",
    alwaysCovers: function (what) { return "\u201c\u603b\u662f\u5141\u8bb8\u201d\u9002\u7528\u4e8e\uff1a" + what + "\u3002"; },
    denyReason: "\u7406\u7531\uff08\u53ef\u9009\uff0cAgent \u4f1a\u770b\u5230\uff09",
    denyPlaceholder: "\u4e3a\u4ec0\u4e48\u4e0d\u884c\uff1f",
    denyPresets: "\u6216\u9009\u4e00\u4e2a\u7406\u7531\uff1a",
    denyConfirm: "\u62d2\u7edd\u8fd9\u6b21\u8c03\u7528",
    editLabel: "\u7528\u6765\u8fd0\u884c\u5de5\u5177\u7684\u53c2\u6570\uff08JSON\uff09",
    editConfirm: "\u7528\u8fd9\u4e9b\u53c2\u6570\u8fd0\u884c",
    editKeys: "Ctrl+Enter \u8fd0\u884c\uff0cEsc \u8fd4\u56de\u3002",
    editFix: "\u6539\u597d\u4e0a\u9762\u7684\u95ee\u9898\u540e\u624d\u80fd\u8fd0\u884c\u3002",
    editRefused: "\u670d\u52a1\u5668\u62d2\u7edd\u4e86\u8fd9\u6b21\u4fee\u6539\uff1a",
    editOK: "\u53c2\u6570\u6709\u6548\u3002",
    back: "\u8fd4\u56de",
    showAll: function (n) { return "\u663e\u793a\u5168\u90e8\uff08" + n + " \u4e2a\u5b57\u7b26\uff09"; },
    showLess: "\u6536\u8d77",
    moreItems: function (n) { return "\u8fd8\u6709 " + n + " \u9879"; },
    approvalAsked: function (tool) { return "Agent \u8bf7\u6c42\u8fd0\u884c " + tool + "\uff0c\u8bf7\u6279\u51c6\u6216\u62d2\u7edd\u3002"; },
    approvalTimeLeftSpoken: function (seconds) {
      if (seconds >= 60) {
        return "\u8fd8\u5269 " + Math.round(seconds / 60) + " \u5206\u949f\u53ef\u4ee5\u51b3\u5b9a\u3002";
      }
      return "\u8fd8\u5269 " + seconds + " \u79d2\u53ef\u4ee5\u51b3\u5b9a\u3002";
    },
    approvalGone: "\u8fd9\u4e2a\u6279\u51c6\u8bf7\u6c42\u5df2\u7ecf\u7ed3\u675f\u4e86\u3002",
    approvalWaiting: function (left, names, approved) {
      return "\u8fd8\u9700 " + left + " \u4e2a\u6279\u51c6" + (names ? "\uff08" + names + "\uff09" : "") +
        (approved ? "\uff1a" + approved + " \u5df2\u6279\u51c6\u3002" : "\u3002");
    },
    approvalNames: "\u3001",
    notApprover: "\u4f60\u4e0d\u5728\u8fd9\u4e2a\u8c03\u7528\u7684\u6279\u51c6\u4eba\u4e2d\uff1a\u5b83\u7b49\u5f85\u4ed6\u4eec\u51b3\u5b9a\u3002",
    approvalReadOnly: "\u4f60\u4e0d\u80fd\u51b3\u5b9a\u8fd9\u4e2a\u8c03\u7528\uff1a\u5b83\u5728\u7b49\u5f85\u6279\u51c6\u4eba\u51b3\u5b9a\u3002",
    approvalAskedReadOnly: function (tool) { return "Agent \u8bf7\u6c42\u8fd0\u884c " + tool + "\uff0c\u6b63\u5728\u7b49\u5f85\u6279\u51c6\u4eba\u51b3\u5b9a\u3002"; },
    approvalNowYours: function (tool) { return "\u73b0\u5728\u4f60\u53ef\u4ee5\u51b3\u5b9a " + tool + " \u4e86\u3002"; },
    approvalSession: function (title) { return "\u4f1a\u8bdd\uff1a" + title; },
    approvalNotConnected: "\u672a\u8fde\u63a5\uff0c\u4f60\u7684\u51b3\u5b9a\u6ca1\u6709\u53d1\u51fa\u3002\u91cd\u65b0\u8fde\u63a5\u540e\u8bf7\u518d\u8bd5\u4e00\u6b21\u3002",
    approvalLostReply: "\u670d\u52a1\u5668\u56de\u590d\u4e4b\u524d\u8fde\u63a5\u5c31\u65ad\u4e86\u3002\u5982\u679c\u6279\u51c6\u8bf7\u6c42\u4ecd\u672a\u7ed3\u675f\uff0c\u8bf7\u518d\u51b3\u5b9a\u4e00\u6b21\u3002",
    approvalLate: "\u5176\u4ed6\u8bbe\u5907\u5148\u505a\u4e86\u51b3\u5b9a\uff0c\u4f60\u7684\u51b3\u5b9a\u6ca1\u6709\u88ab\u91c7\u7528\u3002",
    approvalDone: {
      approve: "\u5df2\u6279\u51c6\u3002",
      deny: "\u5df2\u62d2\u7edd\u3002",
      edit: "\u5df2\u4fee\u6539\uff1a\u5de5\u5177\u5c06\u7528\u4f60\u7684\u53c2\u6570\u8fd0\u884c\u3002",
      always: "\u672c\u4f1a\u8bdd\u5185\u5df2\u603b\u662f\u5141\u8bb8\u3002"
    },
    approvedElsewhere: "\u5df2\u5728\u5176\u4ed6\u8bbe\u5907\u4e0a\u6279\u51c6\u3002",
    alwaysElsewhere: function (grant) { return "\u5df2\u5728\u5176\u4ed6\u8bbe\u5907\u4e0a\u603b\u662f\u5141\u8bb8\uff1a" + grant + "\u3002"; },
    editedElsewhere: function (args) { return "\u5df2\u5728\u5176\u4ed6\u8bbe\u5907\u4e0a\u4fee\u6539\uff0c\u5de5\u5177\u5c06\u7528 " + args + " \u8fd0\u884c\u3002"; },
    deniedElsewhere: function (reason) { return reason ? "\u5df2\u5728\u5176\u4ed6\u8bbe\u5907\u4e0a\u62d2\u7edd\uff1a" + reason : "\u5df2\u5728\u5176\u4ed6\u8bbe\u5907\u4e0a\u62d2\u7edd\u3002"; },
    approvalEnded: function (tool) { return tool + " \u7684\u6279\u51c6\u8bf7\u6c42\u5df2\u7ecf\u7ed3\u675f\u3002"; },
    approvalResolved: {
      timed_out: function (tool) { return "\u5df2\u8d85\u65f6\uff1a" + tool + " \u6ca1\u6709\u8fd0\u884c\u3002"; },
      cancelled: function (tool) { return "\u5df2\u53d6\u6d88\uff1a" + tool + " \u6ca1\u6709\u8fd0\u884c\u3002"; },
      shutdown: function (tool) { return "\u6279\u51c6\u670d\u52a1\u5df2\u5173\u95ed\uff1a" + tool + " \u6ca1\u6709\u8fd0\u884c\u3002"; },
      undelivered: function (tool) { return "\u6279\u51c6\u8bf7\u6c42\u672a\u80fd\u9001\u8fbe\uff1a" + tool + " \u6ca1\u6709\u8fd0\u884c\u3002"; },
      disconnected: function (tool) { return "\u6ca1\u6709\u8bbe\u5907\u5728\u7ebf\uff1a" + tool + " \u6ca1\u6709\u8fd0\u884c\u3002"; }
    },
    jsonProblem: function (code, found) {
      switch (code) {
        case "empty": return "\u5185\u5bb9\u4e3a\u7a7a\uff1a\u8bf7\u7528 JSON \u5199\u53c2\u6570\uff0c\u4f8b\u5982 {}";
        case "end": return "JSON \u63d0\u524d\u7ed3\u675f\u4e86";
        case "key": return "\u8fd9\u91cc\u5e94\u662f\u7528\u53cc\u5f15\u53f7\u62ec\u8d77\u7684\u5c5e\u6027\u540d" + (found ? "\uff0c\u800c\u4e0d\u662f " + found : "");
        case "colon": return "\u5c5e\u6027\u540d\u540e\u5e94\u662f :";
        case "object": return "\u5c5e\u6027\u540e\u5e94\u662f , \u6216 }";
        case "array": return "\u6570\u7ec4\u9879\u540e\u5e94\u662f , \u6216 ]";
        case "string": return "\u5b57\u7b26\u4e32\u91cc\u4e0d\u80fd\u6709\u6362\u884c\u6216\u63a7\u5236\u5b57\u7b26\uff08\u8bf7\u5199 \\n\uff09";
        case "escape": return "\u5b57\u7b26\u4e32\u91cc\u6709\u65e0\u6548\u7684\u8f6c\u4e49";
        case "number": return "\u4e0d\u662f\u6709\u6548\u7684\u6570\u5b57";
        case "trailing": return "JSON \u503c\u540e\u9762\u8fd8\u6709\u591a\u4f59\u7684\u5185\u5bb9";
        case "deep": return "\u5d4c\u5957\u592a\u6df1";
      }
      return "\u610f\u5916\u7684 " + (found || "\u5185\u5bb9");
    },
    jsonAt: function (line, column, text) { return "\u4e0d\u662f\u6709\u6548\u7684 JSON\uff0c\u7b2c " + line + " \u884c\u7b2c " + column + " \u5217\uff1a" + text; },
    schema: {
      type: function (types, got) { return "\u5e94\u662f" + typeList(types, TYPES_ZH, "\u6216") + "\uff0c\u800c\u4e0d\u662f" + (TYPES_ZH[got] || got); },
      required: "\u662f\u5fc5\u586b\u9879",
      additional: function (allowed) {
        return allowed.length ? "\u4e0d\u662f\u8fd9\u4e2a\u5de5\u5177\u7684\u5b57\u6bb5\uff08\u5b83\u53ea\u63a5\u53d7 " + allowed.join("\u3001") + "\uff09" : "\u4e0d\u662f\u8fd9\u4e2a\u5de5\u5177\u7684\u5b57\u6bb5";
      },
      minLength: function (n) { return n === 1 ? "\u4e0d\u80fd\u4e3a\u7a7a" : "\u81f3\u5c11\u8981\u6709 " + n + " \u4e2a\u5b57\u7b26"; },
      maxLength: function (n) { return "\u6700\u591a " + n + " \u4e2a\u5b57\u7b26"; },
      enumOf: function (values) { return "\u5e94\u662f\u5176\u4e2d\u4e4b\u4e00\uff1a" + values.join("\u3001"); },
      constant: function (value) { return "\u5e94\u662f " + value; },
      minimum: function (n) { return "\u4e0d\u80fd\u5c0f\u4e8e " + n; },
      maximum: function (n) { return "\u4e0d\u80fd\u5927\u4e8e " + n; },
      exclusiveMinimum: function (n) { return "\u5e94\u5927\u4e8e " + n; },
      exclusiveMaximum: function (n) { return "\u5e94\u5c0f\u4e8e " + n; },
      minItems: function (n) { return "\u81f3\u5c11\u8981\u6709 " + n + " \u9879"; },
      maxItems: function (n) { return "\u6700\u591a " + n + " \u9879"; },
      pattern: function (p) { return "\u5e94\u5339\u914d\u6a21\u5f0f " + p; },
      never: "\u4e0d\u5141\u8bb8"
    }
  });
})(STRINGS);
