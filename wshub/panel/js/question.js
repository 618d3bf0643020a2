// buildQuestion: the DOM of one question.
//
// A fieldset with the header chip, the question, the options, Other, and the preview
// when the options have previews. Text only; model text through modelEl. It reports what
// the person does through the handlers it is given.
//
// Exports: buildQuestion.

// buildQuestion renders question q (index qi) of a set. ctx is the set view's (see
// buildSetView); onChoose and onOther report the person's input. Returns {fieldset,
// inputs, labels, other, sync(locked)}: sync puts q's state into the controls.
function buildQuestion(q, qi, set, ctx) {
  var S = ctx.S;
  var qv = {fieldset: null, inputs: [], labels: [], other: null, preview: null, focused: -1, sync: null};
  var fs = el("fieldset", "askuser-question");
  fs.setAttribute("data-testid", "question");
  fs.setAttribute("data-index", String(qi));
  fs.setAttribute("data-multi-select", q.multi ? "true" : "false");
  qv.fieldset = fs;

  var legend = el("legend", "askuser-legend");
  // A question without a header (the model gave none) has no chip.
  if (q.hasHeader) {
    var chip = modelEl("span", "askuser-chip", q.header);
    chip.setAttribute("data-testid", "header");
    // A header longer than the chip's room is cut short with an ellipsis (panel.css); the
    // whole text stays the chip's text, which screen readers read, and is shown on hover.
    chip.title = clean(q.header);
    legend.appendChild(chip);
    legend.appendChild(document.createTextNode(" "));
  }
  var qtext = modelEl("span", "askuser-question-text", q.text);
  qtext.id = newId("q");
  qtext.setAttribute("data-testid", "question-text");
  legend.appendChild(qtext);
  fs.appendChild(legend);

  // A question without options is answered in free text: the Other box alone, named
  // "Your answer".
  var freeText = q.options.length === 0;
  var hintText = el("p", "askuser-hint", freeText ? S.writeAnswer : q.multi ? S.chooseAny : S.chooseOne);
  hintText.id = newId("hint");
  fs.appendChild(hintText);

  var body = el("div", "askuser-body");
  var main = el("div", "askuser-main");
  var group = el("div", "askuser-options");
  group.setAttribute("role", q.multi ? "group" : "radiogroup");
  group.setAttribute("aria-labelledby", qtext.id);
  group.setAttribute("aria-describedby", hintText.id);
  var name = newId("name");

  q.options.forEach(function (o, oi) {
    var opt = el("label", "askuser-option");
    opt.setAttribute("data-testid", "option");
    opt.setAttribute("data-index", String(oi));
    // An attribute value is never parsed as markup, so the exact label is safe here.
    opt.setAttribute("data-label", o.label);

    var input = el("input", "askuser-option-input");
    input.type = q.multi ? "checkbox" : "radio";
    input.name = name;
    input.value = String(oi);
    input.id = newId("opt");
    input.setAttribute("data-testid", "option-input");

    var text = el("span", "askuser-option-text");
    var title = el("span", "askuser-option-title");
    title.id = newId("title");
    var recommended = RECOMMENDED.test(o.label);
    var shown = recommended ? o.label.replace(RECOMMENDED, "") : o.label;
    var key = el("span", "askuser-key", String(oi + 1));
    key.setAttribute("aria-hidden", "true");
    title.appendChild(key);
    var labelSpan = modelEl("span", "askuser-option-label", shown || o.label);
    labelSpan.setAttribute("data-testid", "option-label");
    title.appendChild(labelSpan);
    if (recommended && shown) {
      title.appendChild(document.createTextNode(" "));
      var badge = el("span", "askuser-badge", S.recommended);
      badge.setAttribute("data-testid", "recommended");
      title.appendChild(badge);
      opt.classList.add("askuser-recommended");
    }
    text.appendChild(title);
    input.setAttribute("aria-labelledby", title.id);
    // A description may be empty: then nothing is shown under the label.
    if (o.description.trim() !== "") {
      var desc = modelEl("span", "askuser-option-desc", o.description);
      desc.id = newId("desc");
      desc.setAttribute("data-testid", "option-description");
      text.appendChild(desc);
      input.setAttribute("aria-describedby", desc.id);
    }

    opt.appendChild(input);
    opt.appendChild(text);
    group.appendChild(opt);
    qv.inputs.push(input);
    qv.labels.push(opt);

    input.addEventListener("change", function () {
      ctx.onChoose(qi, oi, input.checked);
      showPreview();
    });
    input.addEventListener("focus", function () {
      qv.focused = oi;
      showPreview();
    });
    input.addEventListener("blur", function () {
      if (qv.focused === oi) {
        qv.focused = -1;
      }
      showPreview();
    });
  });
  if (!freeText) {
    main.appendChild(group);
  }

  var otherWrap = el("div", "askuser-other");
  var other = el("input", "askuser-other-input");
  other.type = "text";
  other.id = newId("other");
  // The model's placeholder is an attribute's value, never parsed as markup.
  other.placeholder = clean(q.placeholder).trim() || S.otherPlaceholder;
  other.maxLength = ctx.maxCustomInput;
  other.autocomplete = "off";
  other.dir = "auto";
  other.setAttribute("data-testid", "other-input");
  other.setAttribute("aria-describedby", qtext.id);
  var otherLabel = el("label", "askuser-other-label", freeText ? S.freeTextLabel : S.other);
  otherLabel.htmlFor = other.id;
  otherWrap.appendChild(otherLabel);
  otherWrap.appendChild(other);
  main.appendChild(otherWrap);
  qv.other = other;
  other.addEventListener("input", function () {
    ctx.onOther(qi, other.value);
    showPreview();
  });
  body.appendChild(main);

  if (q.hasPreview) {
    fs.classList.add("askuser-has-preview");
    var pv = el("div", "askuser-preview");
    pv.setAttribute("data-testid", "preview");
    pv.setAttribute("role", "region");
    var cap = el("div", "askuser-preview-caption");
    cap.id = newId("cap");
    cap.dir = "auto";
    cap.setAttribute("data-testid", "preview-caption");
    pv.setAttribute("aria-labelledby", cap.id);
    var pvBody = el("div", "askuser-preview-body askuser-md");
    pvBody.dir = "auto";
    pvBody.setAttribute("data-testid", "preview-body");
    // A scrollable box must be reachable by keyboard.
    pvBody.tabIndex = 0;
    pvBody.setAttribute("aria-labelledby", cap.id);
    pv.appendChild(cap);
    pv.appendChild(pvBody);
    body.appendChild(pv);
    qv.preview = {box: pv, caption: cap, body: pvBody, shown: -2, cache: []};
  }
  fs.appendChild(body);

  // showPreview shows the preview of the focused option, else the chosen one, else the
  // first that has one.
  function showPreview() {
    var p = qv.preview;
    if (!p) {
      return;
    }
    var idx = qv.focused >= 0 ? qv.focused : q.chosen.indexOf(true);
    if (idx < 0) {
      for (var i = 0; i < q.options.length; i++) {
        if (q.options[i].preview !== "") {
          idx = i;
          break;
        }
      }
    }
    if (idx === p.shown) {
      return;
    }
    p.shown = idx;
    var o = q.options[idx];
    p.box.setAttribute("data-option-index", String(idx));
    p.caption.textContent = S.preview + " \u2014 " + clean(o.label);
    if (!p.cache[idx]) {
      var holder = el("div", "askuser-md-doc");
      if (o.preview !== "") {
        holder.appendChild(markdown(o.preview));
      } else {
        holder.appendChild(el("p", "askuser-md-p askuser-preview-none", S.noPreview));
      }
      p.cache[idx] = holder;
    }
    while (p.body.firstChild) {
      p.body.removeChild(p.body.firstChild);
    }
    p.body.appendChild(p.cache[idx]);
    p.body.scrollTop = 0;
  }

  // sync puts the state's choices into the controls. The Other box is written only when
  // it differs, so that the caret of someone typing stays where it is.
  qv.sync = function (locked) {
    fs.disabled = locked;
    qv.inputs.forEach(function (inp, i) {
      if (inp.checked !== q.chosen[i]) {
        inp.checked = q.chosen[i];
      }
      qv.labels[i].classList.toggle("askuser-checked", q.chosen[i]);
    });
    if (other.value !== q.other) {
      other.value = q.other;
    }
    showPreview();
  };
  showPreview();
  return qv;
}
