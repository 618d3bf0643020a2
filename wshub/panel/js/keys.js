// bindKeys: 1–4, Enter and Esc; focus kept clear of sticky header and footer.
//
// 1–4 choose an option of the question in focus (or of the first unanswered), Enter
// submits or goes to what is missing, Esc declines; a focused control is scrolled clear
// of its set's sticky header and footer.
//
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
