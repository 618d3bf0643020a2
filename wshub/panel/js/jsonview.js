// buildJSONView: arguments as readable JSON, coloured, long values folded.
//
// A node of parseJSONText laid out as indented JSON in elements of fixed names, each token
// a text node in a span of its kind (key, string, number, literal, punctuation), so that
// model text never becomes markup. A long string shows its start and a button that shows
// it all; a long array or object its first members and a button for the rest.
//
// Exports: buildJSONView.

// A string longer than this, in characters, or of more lines, is folded.
var FOLD_CHARS = 160;
var FOLD_LINES = 4;
// A string folded shows this many characters; a container folded this many members.
var FOLDED_CHARS = 100;
var FOLD_MEMBERS = 12;

/**
 * buildJSONView renders node (of parseJSONText) into a new <pre>. S gives the fold
 * buttons' texts. Returns the element.
 */
function buildJSONView(node, S) {
  var pre = el("pre", "askuser-json");
  pre.dir = "ltr";

  function tok(parent, cls, text) {
    parent.appendChild(el("span", "askuser-json-" + cls, text));
  }
  function text(parent, s) {
    parent.appendChild(document.createTextNode(s));
  }

  // foldButton makes a button that shows, in place of folded, the nodes full() makes,
  // and back; its label says how much is hidden.
  function foldButton(parent, folded, full, more) {
    var shown = el("span", "askuser-json-fold-body");
    shown.appendChild(folded);
    var button = el("button", "askuser-json-fold", more);
    button.type = "button";
    button.setAttribute("aria-expanded", "false");
    button.setAttribute("data-testid", "json-fold");
    var open = false;
    var whole = null;
    button.addEventListener("click", function () {
      open = !open;
      if (open && !whole) {
        whole = full();
      }
      while (shown.firstChild) {
        shown.removeChild(shown.firstChild);
      }
      shown.appendChild(open ? whole : folded);
      button.textContent = open ? S.showLess : more;
      button.setAttribute("aria-expanded", open ? "true" : "false");
    });
    parent.appendChild(shown);
    parent.appendChild(document.createTextNode(" "));
    parent.appendChild(button);
  }

  function strTok(parent, s) {
    var quoted = quoteJSON(s);
    var chars = Array.from(s);
    var long = chars.length > FOLD_CHARS || s.split("\n").length > FOLD_LINES;
    var span = el("span", "askuser-json-str");
    span.dir = "auto";
    if (!long) {
      span.textContent = quoted;
      parent.appendChild(span);
      return;
    }
    var head = chars.slice(0, FOLDED_CHARS).join("");
    var folded = document.createTextNode(quoteJSON(head).slice(0, -1) + "\u2026");
    foldButton(span, folded, function () { return document.createTextNode(quoted); }, S.showAll(chars.length));
    parent.appendChild(span);
  }

  // members renders the entries of a container from index from, each on its line.
  function members(parent, nd, pad, from, to) {
    var list = nd.t === "object" ? nd.members : nd.items;
    var frag = document.createDocumentFragment();
    for (var i = from; i < to; i++) {
      text(frag, "\n" + pad + "  ");
      if (nd.t === "object") {
        tok(frag, "key", quoteJSON(list[i].key));
        tok(frag, "punct", ": ");
        value(frag, list[i].value, pad + "  ");
      } else {
        value(frag, list[i], pad + "  ");
      }
      if (i < list.length - 1) {
        tok(frag, "punct", ",");
      }
    }
    parent.appendChild(frag);
  }

  function value(parent, nd, pad) {
    switch (nd.t) {
      case "object":
      case "array":
        var list = nd.t === "object" ? nd.members : nd.items;
        tok(parent, "punct", nd.t === "object" ? "{" : "[");
        if (list.length > FOLD_MEMBERS + 2) {
          members(parent, nd, pad, 0, FOLD_MEMBERS);
          var rest = el("span");
          foldButton(rest, document.createTextNode("\n" + pad + "  \u2026"), function () {
            var all = document.createDocumentFragment();
            members(all, nd, pad, FOLD_MEMBERS, list.length);
            var box = el("span");
            box.appendChild(all);
            return box;
          }, S.moreItems(list.length - FOLD_MEMBERS));
          parent.appendChild(rest);
        } else {
          members(parent, nd, pad, 0, list.length);
        }
        if (list.length) {
          text(parent, "\n" + pad);
        }
        tok(parent, "punct", nd.t === "object" ? "}" : "]");
        return;
      case "string":
        strTok(parent, nd.v);
        return;
      case "number":
        tok(parent, "num", nd.raw);
        return;
      case "bool":
        tok(parent, "lit", nd.v ? "true" : "false");
        return;
    }
    tok(parent, "lit", "null");
  }

  value(pre, node, "");
  return pre;
}
