// markdown: the safe markdown subset of previews.
//
// Headings, lists, block quotes, rules, code fences, and inline bold, italic and code.
// Everything else, links and HTML included, stays literal text. Only fixed tag names are
// created and text goes in through text nodes.
//
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
