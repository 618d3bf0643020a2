// parseJSONText, printJSON: JSON read as it was written, numbers and member order kept.
//
// What a person approves must be what runs, so the arguments of a tool call are shown and
// edited as their own text: JSON.parse would round numbers beyond 2^53 and move keys
// like "1" to the front. parseJSONText reads JSON into nodes that keep each number's text
// and the members in order, and says where the text stops being JSON; printJSON writes
// the nodes back, and jsonValue turns them into the value to send, numbers exact where
// the browser has JSON.rawJSON.
//
// Exports: parseJSONText, printJSON, quoteJSON, showHidden, jsonValue, jsonEqual.

// The deepest nesting read; deeper text is refused, as no tool's arguments need it.
var JSON_MAX_DEPTH = 128;

var JSON_NUMBER_AT = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * parseJSONText reads text as one JSON value. It returns {node} or {error: {code, found,
 * line, column}}; a node is {t: "object", members: [{key, value}]}, {t: "array",
 * items}, {t: "string", v}, {t: "number", raw, v}, {t: "bool", v} or {t: "null"}.
 */
function parseJSONText(text) {
  var i = 0;
  var n = text.length;
  function fail(code) {
    var found = i < n ? text.charAt(i) : "";
    var line = 1;
    var col = 1;
    for (var k = 0; k < i && k < n; k++) {
      if (text.charAt(k) === "\n") {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    throw {jsonError: {code: i >= n && code !== "empty" && code !== "deep" ? "end" : code, found: found, line: line, column: col}};
  }
  function ws() {
    while (i < n) {
      var c = text.charAt(i);
      if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r") {
        return;
      }
      i++;
    }
  }
  function string() {
    i++; // the opening quote
    var out = "";
    var start = i;
    for (;;) {
      if (i >= n) {
        fail("end");
      }
      var c = text.charCodeAt(i);
      if (c === 34) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < 32) {
        fail("string");
      }
      if (c !== 92) {
        i++;
        continue;
      }
      out += text.slice(start, i);
      var e = text.charAt(i + 1);
      var simple = {"\"": "\"", "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t"}[e];
      if (simple !== undefined) {
        out += simple;
        i += 2;
      } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
        i += 6;
      } else {
        i++;
        fail("escape");
      }
      start = i;
    }
  }
  function value(depth) {
    if (depth > JSON_MAX_DEPTH) {
      fail("deep");
    }
    ws();
    var c = text.charAt(i);
    if (c === "{") {
      i++;
      var members = [];
      ws();
      if (text.charAt(i) === "}") {
        i++;
        return {t: "object", members: members};
      }
      for (;;) {
        ws();
        if (text.charAt(i) !== "\"") {
          fail("key");
        }
        var key = string();
        ws();
        if (text.charAt(i) !== ":") {
          fail("colon");
        }
        i++;
        members.push({key: key, value: value(depth + 1)});
        ws();
        c = text.charAt(i);
        i++;
        if (c === "}") {
          return {t: "object", members: members};
        }
        if (c !== ",") {
          i--;
          fail("object");
        }
      }
    }
    if (c === "[") {
      i++;
      var items = [];
      ws();
      if (text.charAt(i) === "]") {
        i++;
        return {t: "array", items: items};
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        c = text.charAt(i);
        i++;
        if (c === "]") {
          return {t: "array", items: items};
        }
        if (c !== ",") {
          i--;
          fail("array");
        }
      }
    }
    if (c === "\"") {
      return {t: "string", v: string()};
    }
    if (c === "-" || (c >= "0" && c <= "9")) {
      JSON_NUMBER_AT.lastIndex = i;
      var m = JSON_NUMBER_AT.exec(text);
      if (!m || /[0-9.eE+-]/.test(text.charAt(i + m[0].length))) {
        fail("number");
      }
      i += m[0].length;
      return {t: "number", raw: m[0], v: Number(m[0])};
    }
    var words = {"true": {t: "bool", v: true}, "false": {t: "bool", v: false}, "null": {t: "null"}};
    for (var w in words) {
      if (text.slice(i, i + w.length) === w) {
        i += w.length;
        return words[w];
      }
    }
    fail("token");
  }
  try {
    ws();
    if (i >= n) {
      fail("empty");
    }
    var node = value(0);
    ws();
    if (i < n) {
      fail("trailing");
    }
    return {node: node};
  } catch (e) {
    if (e && e.jsonError) {
      return {error: e.jsonError};
    }
    throw e;
  }
}

// Characters a string shows escaped, as JSON allows: besides what JSON.stringify
// escapes, the invisible and direction-changing ones, so that no model text can hide
// from or disguise itself to the person approving it.
var JSON_HIDDEN = /[\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

// showHidden writes those characters of s as JSON escapes (\u202e), the rest as it is.
function showHidden(s) {
  return s.replace(JSON_HIDDEN, function (c) {
    return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
  });
}

// quoteJSON writes s as a JSON string.
function quoteJSON(s) {
  return showHidden(JSON.stringify(s));
}

// printJSON writes node as JSON text: indented by indent spaces a level, or compact
// when indent is 0.
function printJSON(node, indent) {
  function pr(nd, pad) {
    var inner = pad + (indent ? new Array(indent + 1).join(" ") : "");
    var nl = indent ? "\n" : "";
    switch (nd.t) {
      case "object":
        if (!nd.members.length) {
          return "{}";
        }
        return "{" + nl + nd.members.map(function (m) {
          return inner + quoteJSON(m.key) + (indent ? ": " : ":") + pr(m.value, inner);
        }).join("," + nl) + nl + pad + "}";
      case "array":
        if (!nd.items.length) {
          return "[]";
        }
        return "[" + nl + nd.items.map(function (it) { return inner + pr(it, inner); }).join("," + nl) + nl + pad + "]";
      case "string":
        return quoteJSON(nd.v);
      case "number":
        return nd.raw;
      case "bool":
        return nd.v ? "true" : "false";
    }
    return "null";
  }
  return pr(node, "");
}

// jsonValue returns node as a value for JSON.stringify: numbers keep their exact text
// where the browser has JSON.rawJSON.
function jsonValue(node) {
  switch (node.t) {
    case "object":
      var o = {};
      node.members.forEach(function (m) {
        o[m.key] = jsonValue(m.value);
      });
      return o;
    case "array":
      return node.items.map(jsonValue);
    case "string":
    case "bool":
      return node.v;
    case "number":
      if (typeof JSON.rawJSON === "function") {
        try {
          return JSON.rawJSON(node.raw);
        } catch (e) {
          // fall through to the number
        }
      }
      return node.v;
  }
  return null;
}

// jsonEqual reports whether node holds the same JSON value as v, a value of JSON.parse.
function jsonEqual(node, v) {
  switch (node.t) {
    case "object":
      if (!v || typeof v !== "object" || Array.isArray(v)) {
        return false;
      }
      var seen = {};
      for (var i = 0; i < node.members.length; i++) {
        var m = node.members[i];
        seen[m.key] = true;
        if (!Object.prototype.hasOwnProperty.call(v, m.key) || !jsonEqual(m.value, v[m.key])) {
          return false;
        }
      }
      return Object.keys(v).every(function (k) { return seen[k]; });
    case "array":
      return Array.isArray(v) && v.length === node.items.length && node.items.every(function (it, k) { return jsonEqual(it, v[k]); });
    case "number":
      return typeof v === "number" && v === node.v;
    case "null":
      return v === null;
  }
  return node.v === v;
}
