// The inbox's texts, in English and Chinese, added to STRINGS.
//
// The texts of the inbox bar and view, as more keys of the panel's one strings table, so
// that options.strings overrides them as it does the others. A text that depends on a
// value is a function.
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
  add(tables.en, {
    inboxToggle: function (n) { return "Inbox (" + n + ")"; },
    inboxWho: function (user, groups) { return "Signed in as " + user + (groups ? " (" + groups + ")" : ""); },
    inboxTitle: "Inbox",
    inboxPending: function (n) { return "Pending (" + n + ")"; },
    inboxNothing: "Nothing is pending.",
    inboxDecided: "Decided lately",
    inboxNoneDecided: "Nothing decided lately.",
    inboxKind: {question: "Question", approval: "Approval"},
    inboxReadOnly: "read-only",
    inboxSep: " \u00b7 ",
    inboxAgo: function (seconds) {
      if (seconds < 45) {
        return "just now";
      }
      var m = Math.round(seconds / 60);
      if (m < 60) {
        return m + " min ago";
      }
      var h = Math.round(m / 60);
      return h < 48 ? h + " h ago" : Math.round(h / 24) + " d ago";
    },
    inboxOutcome: function (outcome, by) {
      var what = {approved: "Approved", edited: "Edited and approved", denied: "Denied", timed_out: "Timed out",
        cancelled: "Cancelled", shutdown: "Ended by a shutdown", undelivered: "Not delivered",
        disconnected: "Ended: no device connected"}[outcome] || "Ended";
      return by ? what + " by " + by : what;
    }
  });
  add(tables.zh, {
    inboxToggle: function (n) { return "\u6536\u4ef6\u7bb1\uff08" + n + "\uff09"; },
    inboxWho: function (user, groups) { return "\u5df2\u767b\u5f55\uff1a" + user + (groups ? "\uff08" + groups + "\uff09" : ""); },
    inboxTitle: "\u6536\u4ef6\u7bb1",
    inboxPending: function (n) { return "\u5f85\u5904\u7406\uff08" + n + "\uff09"; },
    inboxNothing: "\u6ca1\u6709\u5f85\u5904\u7406\u7684\u8bf7\u6c42\u3002",
    inboxDecided: "\u6700\u8fd1\u5df2\u51b3\u5b9a",
    inboxNoneDecided: "\u6700\u8fd1\u6ca1\u6709\u5df2\u51b3\u5b9a\u7684\u8bf7\u6c42\u3002",
    inboxKind: {question: "\u95ee\u9898", approval: "\u6279\u51c6"},
    inboxReadOnly: "\u53ea\u8bfb",
    inboxSep: " \u00b7 ",
    inboxAgo: function (seconds) {
      if (seconds < 45) {
        return "\u521a\u521a";
      }
      var m = Math.round(seconds / 60);
      if (m < 60) {
        return m + " \u5206\u949f\u524d";
      }
      var h = Math.round(m / 60);
      return h < 48 ? h + " \u5c0f\u65f6\u524d" : Math.round(h / 24) + " \u5929\u524d";
    },
    inboxOutcome: function (outcome, by) {
      var what = {approved: "\u5df2\u6279\u51c6", edited: "\u5df2\u4fee\u6539\u5e76\u6279\u51c6", denied: "\u5df2\u62d2\u7edd",
        timed_out: "\u5df2\u8d85\u65f6", cancelled: "\u5df2\u53d6\u6d88", shutdown: "\u56e0\u670d\u52a1\u5173\u95ed\u800c\u7ed3\u675f",
        undelivered: "\u672a\u80fd\u9001\u8fbe", disconnected: "\u5df2\u7ed3\u675f\uff1a\u6ca1\u6709\u8bbe\u5907\u5728\u7ebf"}[outcome] || "\u5df2\u7ed3\u675f";
      return by ? what + "\uff08" + by + "\uff09" : what;
    }
  });
})(STRINGS);
