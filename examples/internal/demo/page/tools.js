// The demo page's cards of host tool calls (examples/web): how the policy's gate decided
// each call and whether the tool ran, in the page's language. app.js uses it when the
// page loads it; a page without host tools leaves it out.
(function () {
  "use strict";

  var TEXT = {
    en: {
      byRule: "Ran without asking: a rule allows it",
      byGrant: "Ran without asking: always allowed in this session",
      approved: "Approved; ran",
      failed: "Approved, but the tool failed",
      noSuchTool: "Allowed, but there is no such tool: nothing ran",
      edited: "Edited; ran with ",
      deniedByRule: "Not allowed here: a rule denies it; did not run",
      denied: "Denied; did not run",
      deniedWith: "Denied; did not run. Reason: ",
      timeout: "No decision: timed out; did not run",
      cancelled: "Cancelled; did not run",
      undelivered: "Not asked: no device reached; did not run",
      disconnected: "No decision: disconnected; did not run",
      shutdown: "Did not run: the service is shutting down",
      invalid: function (n) { return "Invalid call (" + n + " problems); did not run"; },
      unknown: "Unrecognized result"
    },
    zh: {
      byRule: "\u672a\u8be2\u95ee\u5373\u8fd0\u884c\uff1a\u89c4\u5219\u5141\u8bb8",
      byGrant: "\u672a\u8be2\u95ee\u5373\u8fd0\u884c\uff1a\u672c\u4f1a\u8bdd\u5185\u603b\u662f\u5141\u8bb8",
      approved: "\u5df2\u6279\u51c6\uff0c\u5df2\u8fd0\u884c",
      failed: "\u5df2\u6279\u51c6\uff0c\u4f46\u5de5\u5177\u51fa\u9519\u4e86",
      noSuchTool: "\u5df2\u5141\u8bb8\uff0c\u4f46\u6ca1\u6709\u8fd9\u4e2a\u5de5\u5177\uff1a\u4ec0\u4e48\u4e5f\u6ca1\u6709\u8fd0\u884c",
      edited: "\u5df2\u4fee\u6539\uff0c\u8fd0\u884c\u65f6\u7684\u53c2\u6570\uff1a",
      deniedByRule: "\u4e0d\u5141\u8bb8\uff1a\u89c4\u5219\u62d2\u7edd\uff0c\u672a\u8fd0\u884c",
      denied: "\u5df2\u62d2\u7edd\uff0c\u672a\u8fd0\u884c",
      deniedWith: "\u5df2\u62d2\u7edd\uff0c\u672a\u8fd0\u884c\u3002\u7406\u7531\uff1a",
      timeout: "\u672a\u51b3\u5b9a\uff1a\u5df2\u8d85\u65f6\uff0c\u672a\u8fd0\u884c",
      cancelled: "\u5df2\u53d6\u6d88\uff0c\u672a\u8fd0\u884c",
      undelivered: "\u672a\u8be2\u95ee\uff1a\u6ca1\u6709\u53ef\u7528\u8bbe\u5907\uff0c\u672a\u8fd0\u884c",
      disconnected: "\u672a\u51b3\u5b9a\uff1a\u8fde\u63a5\u5df2\u65ad\u5f00\uff0c\u672a\u8fd0\u884c",
      shutdown: "\u672a\u8fd0\u884c\uff1a\u670d\u52a1\u6b63\u5728\u5173\u95ed",
      invalid: function (n) { return "\u8c03\u7528\u65e0\u6548(" + n + " \u4e2a\u95ee\u9898)\uff0c\u672a\u8fd0\u884c"; },
      unknown: "\u65e0\u6cd5\u8bc6\u522b\u7684\u7ed3\u679c"
    }
  };

  window.demoTools = {
    // summarize writes into node how the call of tool_result d went: how the gate
    // decided, with the person's reason or edit, and whether the tool ran. result is its
    // content parsed; modelText(tag, className, text) makes an element of model text.
    summarize: function (lang, node, d, result, modelText) {
      var W = TEXT[lang] || TEXT.en;
      var text = {timeout: W.timeout, cancelled: W.cancelled, undelivered: W.undelivered,
        disconnected: W.disconnected, shutdown: W.shutdown}[d.outcome];
      if (d.noSuchTool) {
        text = W.noSuchTool;
      } else if (d.outcome === "approved") {
        text = d.rule ? W.byRule : d.grant ? W.byGrant : d.isError ? W.failed : W.approved;
      } else if (d.outcome === "edited") {
        node.appendChild(document.createTextNode(W.edited));
        node.appendChild(modelText("code", null, JSON.stringify(result.arguments)));
        return;
      } else if (d.outcome === "denied" && typeof result.reason === "string") {
        node.appendChild(document.createTextNode(W.deniedWith));
        node.appendChild(modelText("q", null, result.reason));
        return;
      } else if (d.outcome === "denied") {
        text = d.rule ? W.deniedByRule : W.denied;
      } else if (d.outcome === "invalid") {
        text = W.invalid((result.problems || []).length);
      }
      node.textContent = text || W.unknown;
    }
  };
})();
