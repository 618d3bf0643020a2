// Approval: one tool call waiting for the person's decision, their draft, how it ended; no DOM.
//
// The approval as the server sent it (tool_approval) and what the person has begun: the
// form open (a denial's reason, an edit), what is being sent, the server's refusals.
//
// Exports: Approval, DECISIONS, decidedAs, approvalNoteText.

// DECISIONS are the decisions the panel knows, in the order the protocol lists them.
var DECISIONS = ["approve", "deny", "edit", "always"];

var APPROVAL_NOTE_ARGS = 200; // the longest arguments a note quotes, in characters

// The outcome each decision ends its approval with, when it is the decision that counts.
function decidedAs(decision, outcome, grant) {
  switch (decision) {
    case "approve":
      return outcome === "approved" && !grant;
    case "always":
      return outcome === "approved" && !!grant;
    case "deny":
      return outcome === "denied";
    case "edit":
      return outcome === "edited";
  }
  return false;
}

// approvalNoteText says how approval a ended on another device, or otherwise.
function approvalNoteText(S, a, outcome, data) {
  switch (outcome) {
    case "approved":
      return data.grant ? S.alwaysElsewhere(clean(data.grant)) : S.approvedElsewhere;
    case "edited":
      var raw = typeof data.rawArguments === "string" ? data.rawArguments : JSON.stringify(data.arguments);
      var parsed = parseJSONText(str(raw)).node;
      var args = Array.from(parsed ? printJSON(parsed, 0) : str(raw));
      return S.editedElsewhere(args.length > APPROVAL_NOTE_ARGS ? args.slice(0, APPROVAL_NOTE_ARGS).join("") + "\u2026" : args.join(""));
    case "denied":
      return S.deniedElsewhere(clean(str(data.reason)));
  }
  var text = S.approvalResolved[outcome] || S.approvalEnded;
  return typeof text === "function" ? text(clean(a.tool)) : text;
}

/**
 * Approval is the data of a tool_approval event and the person's work on it. session is
 * how the event named its session (sessionOf).
 */
function Approval(data, session) {
  this.requestId = str(data.requestId);
  this.session = session;
  this.data = data; // as the server sent it, for a card made anew after an edit
  this.update(data);
  // mode is the form open: "" (the decisions), "deny" or "edit".
  this.mode = "";
  this.reason = "";
  this.editText = this.invalid ? this.text : printJSON(this.node, 2);
  // sending is the decision sent that awaits the server's word, or "".
  this.sending = "";
  this.sent = null; // the data of the decision this device sent last
  this.gone = false; // the server no longer has it
  this.error = null; // {message, problems} of a refusal not about an edit
  this.refused = null; // the problems of the server's refusal of an edit
  // readOnly says that the person the panel is connected as is not among the approvers:
  // the card shows who it waits for, without the decisions (set by the stack).
  this.readOnly = false;
}

// update takes the event's data: the same approval may be sent again (a reconnect), with
// a later expiry.
Approval.prototype.update = function (data) {
  this.tool = str(data.tool);
  this.description = str(data.description);
  this.source = sourceOf(data.source);
  var offered = Array.isArray(data.decisions) ? data.decisions : [];
  this.decisions = offered.filter(function (d, i) {
    return DECISIONS.indexOf(d) >= 0 && offered.indexOf(d) === i;
  });
  this.schema = data.argumentsSchema && typeof data.argumentsSchema === "object" ? data.argumentsSchema : null;
  this.always = str(data.always);
  this.reasons = (Array.isArray(data.reasons) ? data.reasons : []).map(str).filter(function (r) { return r !== ""; });
  this.digest = str(data.digest);
  this.approvers = approversOf(data.approvers);
  this.sessionTitle = str(data.sessionTitle);
  this.askedAt = data.askedAt ? Date.parse(str(data.askedAt)) : NaN;
  this.expiresAt = data.expiresAt ? Date.parse(str(data.expiresAt)) : NaN;
  this.invalid = data.argumentsInvalid === true;
  // text is the arguments as the model wrote them: its text when it is not JSON, else
  // the JSON as the event carried it (rawArguments, kept by parseEvent), else as parsed.
  var parsed = null;
  if (this.invalid) {
    this.text = str(data.arguments);
  } else {
    this.text = typeof data.rawArguments === "string" ? data.rawArguments : JSON.stringify(data.arguments === undefined ? null : data.arguments);
    parsed = parseJSONText(this.text).node || null;
    if (!parsed) {
      this.invalid = true; // cannot happen with a well-behaved server; show it as text
    }
  }
  this.node = parsed;
};

Approval.prototype.offers = function (decision) {
  return !this.readOnly && this.decisions.indexOf(decision) >= 0;
};

// mayDecide reports whether person ({user, groups}, from the inbox event; null when the
// panel does not know who it is connected as) may decide: the approvers name no users
// or groups, or name the person or one of their groups.
Approval.prototype.mayDecide = function (person) {
  var ap = this.approvers;
  if (!person || !ap || (ap.users.length === 0 && ap.groups.length === 0)) {
    return true;
  }
  return ap.users.indexOf(person.user) >= 0 ||
    person.groups.some(function (g) { return ap.groups.indexOf(g) >= 0; });
};

// checkEdit reads the edit: {node} when it is valid JSON that fits the schema as far as
// the browser can tell, else {node, syntax (a problem text, or ""), problems}.
Approval.prototype.checkEdit = function (S) {
  var r = parseJSONText(this.editText);
  if (r.error) {
    var e = r.error;
    return {node: null, syntax: S.jsonAt(e.line, e.column, S.jsonProblem(e.code, e.found)), problems: []};
  }
  return {node: r.node, syntax: "", problems: this.schema ? checkSchema(this.schema, r.node, S) : []};
};

// decision returns the data of a tool_approval_result for decision, or null when it
// cannot be sent: an edit that is not valid.
Approval.prototype.decision = function (decision, S) {
  var data = {requestId: this.requestId, decision: decision};
  if (decision === "deny") {
    var reason = this.reason.trim();
    if (reason !== "") {
      data.reason = reason;
    }
  }
  if (decision === "edit") {
    var c = this.checkEdit(S);
    if (!c.node || c.problems.length) {
      return null;
    }
    data.arguments = jsonValue(c.node);
  }
  if (this.digest) {
    data.digest = this.digest;
  }
  return data;
};

// typed returns what the person had written that the end of the approval would lose.
Approval.prototype.typed = function () {
  var out = [];
  if (this.reason.trim() !== "") {
    out.push(this.reason.trim());
  }
  var original = this.invalid ? this.text : printJSON(this.node, 2);
  if (this.mode === "edit" && this.editText.trim() !== "" && this.editText !== original) {
    out.push(this.editText.trim());
  }
  return out;
};

// draft and restore keep the form open and its text across a reload (the draft store
// keeps a list, as it does for a question set's questions).
Approval.prototype.draft = function () {
  return [{tool: this.tool, mode: this.mode, reason: this.reason, edit: this.editText}];
};

Approval.prototype.restore = function (draft) {
  var d = Array.isArray(draft) && draft[0];
  if (!d || d.tool !== this.tool) {
    return;
  }
  if ((d.mode === "deny" || d.mode === "edit") && this.offers(d.mode)) {
    this.mode = d.mode;
  }
  this.reason = typeof d.reason === "string" ? d.reason : "";
  if (typeof d.edit === "string" && d.edit !== "") {
    this.editText = d.edit;
  }
};

// HINTS are the hints of an MCP tool in the order a card shows them; others follow by
// name.
var HINTS = ["readOnly", "destructive", "idempotent", "openWorld"];

// sourceOf reads the source of a tool that is not the host's own (an MCP server's):
// {server, trusted, title, hints: [{name, value}]}, or null.
// approversOf reads who may decide, how many must approve and who has (approvers in
// tool_approval): {names, quorum, approved, users, groups}, or null when anyone of the
// session decides.
function approversOf(ap) {
  if (!ap || typeof ap !== "object") {
    return null;
  }
  function names(list) {
    return (Array.isArray(list) ? list : []).map(str).filter(function (n) { return n !== ""; });
  }
  var q = typeof ap.quorum === "number" && isFinite(ap.quorum) ? Math.max(1, Math.floor(ap.quorum)) : 1;
  return {names: names(ap.names), quorum: q, approved: names(ap.approved), users: names(ap.users), groups: names(ap.groups)};
}

function sourceOf(src) {
  if (!src || typeof src !== "object" || Array.isArray(src)) {
    return null;
  }
  var hints = [];
  if (src.hints && typeof src.hints === "object" && !Array.isArray(src.hints)) {
    var names = Object.keys(src.hints).filter(function (n) { return typeof src.hints[n] === "boolean"; });
    names.sort(function (a, b) {
      var ia = HINTS.indexOf(a), ib = HINTS.indexOf(b);
      if (ia < 0 && ib < 0) {
        return a < b ? -1 : a > b ? 1 : 0;
      }
      return (ia < 0 ? HINTS.length : ia) - (ib < 0 ? HINTS.length : ib);
    });
    hints = names.map(function (n) { return {name: n, value: src.hints[n]}; });
  }
  return {server: str(src.server), trusted: src.trusted === true, title: str(src.title), hints: hints};
}
