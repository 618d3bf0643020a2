// parseEvent, stringifyEvent: JSON that keeps numeric session ids exact.
//
// The events' names, and their JSON. JavaScript numbers are doubles: JSON.parse turns
// the session 1234567890123456789 into 1234567890123456800. parseEvent keeps the raw text
// of a numeric top-level sessionId as the event's (non-enumerable) rawSessionId, and the
// panel echoes that text verbatim, as a JSON number, through stringifyEvent.
//
// Exports: EVENT_*, parseEvent, stringifyEvent, sessionOf, sessionValue, sessionText,
// sessionKey.

var EVENT_ASK = "ask_user_questions";
var EVENT_RESULT = "ask_user_questions_result";
var EVENT_RESOLVED = "ask_user_questions_resolved";
var EVENT_ERROR = "ask_user_questions_error";
var EVENT_INBOX = "inbox";

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
 * value. An approval's arguments keep theirs as ev.data.rawArguments. Throws like
 * JSON.parse on bad JSON.
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
  // The arguments of an approval are shown as the server wrote them (numbers beyond 2^53
  // included): their text is kept as data.rawArguments (not enumerable).
  if (ev && (ev.type === "tool_approval" || ev.type === "tool_approval_resolved" || ev.type === "tool_approval_progress") && ev.data && typeof ev.data === "object") {
    var data = scanTopLevel(text, "data");
    var args = data === null ? null : scanTopLevel(data, "arguments");
    if (args !== null) {
      Object.defineProperty(ev.data, "rawArguments", {value: args, enumerable: false, configurable: true});
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

// sessionText is a session from sessionOf as people read its id ("" for none); sessionKey
// tells sessions apart, a number 7 from a string "7".
function sessionText(session) {
  return !session ? "" : session.raw !== undefined ? session.raw : session.value;
}

function sessionKey(session) {
  return !session ? "" : session.raw !== undefined ? "n" + session.raw : "s" + session.value;
}
