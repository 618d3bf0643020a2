// QuestionSet: one question set and the person's choices (§4.4); no DOM.
//
// The set as the model asked it and what the person has chosen so far, with the §4.4
// rules: choosing an option of a single-select question clears its Other text and typing
// in Other clears the option, and a question is answered by a choice or by Other text
// that is not blank.
//
// Exports: QuestionSet, RECOMMENDED.

var RECOMMENDED = /\s*\(recommended\)\s*$/i;

/**
 * QuestionSet is a question set (the data of an ask_user_questions event) and the
 * person's choices in it. session is how the event named its session (sessionOf).
 */
function QuestionSet(data, session) {
  this.requestId = str(data.requestId);
  this.session = session;
  this.expiresAt = NaN;
  // What a person's inbox lists the set by: the host's title of its session, and when it
  // was asked.
  this.sessionTitle = str(data.sessionTitle);
  this.askedAt = data.askedAt ? Date.parse(str(data.askedAt)) : NaN;
  this.questions = data.questions.map(function (q) {
    q = q || {};
    var multi = q.multiSelect === true;
    var options = (Array.isArray(q.options) ? q.options : []).map(function (o) {
      return {
        label: str(o && o.label),
        description: str(o && o.description),
        preview: str(o && o.preview)
      };
    });
    var hasPreview = !multi && options.some(function (o) { return o.preview !== ""; });
    var header = str(q.header);
    var hasHeader = clean(header).trim() !== "";
    return {
      text: str(q.question),
      header: header,
      hasHeader: hasHeader, // a question without one has no chip
      name: hasHeader ? header : str(q.question), // how hints and notes name it
      placeholder: str(q.placeholder),
      multi: multi,
      options: options,
      hasPreview: hasPreview,
      chosen: options.map(function () { return false; }),
      other: ""
    };
  });
  this.setExpiry(data.expiresAt);
  // sending is what was sent and awaits the server's word: "answers", "decline" or "".
  this.sending = "";
  // lost is set when the server refused an answer of this device because the question
  // had ended (another device was first); gone when the server no longer has it at all.
  this.lost = false;
  this.gone = false;
  this.error = null; // {message, problems}
  this.answersSent = null; // the answers this device sent last
}

QuestionSet.prototype.setExpiry = function (expiresAt) {
  this.expiresAt = expiresAt ? Date.parse(str(expiresAt)) : NaN;
};

// choose sets option oi of question qi on or off. A single-select question is a radio
// group, and choosing an option clears its Other text (§4.4).
QuestionSet.prototype.choose = function (qi, oi, on) {
  var q = this.questions[qi];
  if (!q || oi < 0 || oi >= q.options.length) {
    return;
  }
  if (!q.multi) {
    if (!on) {
      return; // a radio is unchosen only by choosing another or typing in Other
    }
    q.chosen = q.chosen.map(function (_, i) { return i === oi; });
    q.other = "";
    return;
  }
  q.chosen[oi] = !!on;
};

// setOther sets the Other text of question qi. In a single-select question, text clears
// the chosen option (§4.4).
QuestionSet.prototype.setOther = function (qi, text) {
  var q = this.questions[qi];
  if (!q) {
    return;
  }
  q.other = str(text);
  if (!q.multi && q.other !== "") {
    q.chosen = q.chosen.map(function () { return false; });
  }
};

// answered reports whether question qi has a choice or Other text that is not blank.
QuestionSet.prototype.answered = function (qi) {
  var q = this.questions[qi];
  return q.other.trim() !== "" || q.chosen.indexOf(true) >= 0;
};

// missing returns the indices of the questions not answered yet.
QuestionSet.prototype.missing = function () {
  var out = [];
  for (var i = 0; i < this.questions.length; i++) {
    if (!this.answered(i)) {
      out.push(i);
    }
  }
  return out;
};

QuestionSet.prototype.complete = function () {
  return this.missing().length === 0;
};

// answers returns the answers as the server takes them: Other text trimmed, null when
// empty.
QuestionSet.prototype.answers = function () {
  return this.questions.map(function (q) {
    var labels = [];
    q.chosen.forEach(function (c, i) {
      if (c) {
        labels.push(q.options[i].label);
      }
    });
    var other = q.other.trim();
    return {question: q.text, selectedLabels: labels, customInput: other === "" ? null : other};
  });
};

// typed returns the non-blank Other texts, the words that would be lost with the set.
QuestionSet.prototype.typed = function () {
  return this.questions
    .map(function (q) { return q.other.trim(); })
    .filter(function (t) { return t !== ""; });
};

// draft returns the choices as plain data for the draft store; restore takes them back,
// matching options by label and questions by text, so a stale draft does no harm.
QuestionSet.prototype.draft = function () {
  return this.questions.map(function (q) {
    return {
      question: q.text,
      labels: q.options.filter(function (_, i) { return q.chosen[i]; }).map(function (o) { return o.label; }),
      other: q.other
    };
  });
};

QuestionSet.prototype.restore = function (draft) {
  var self = this;
  if (!Array.isArray(draft)) {
    return;
  }
  draft.forEach(function (d, qi) {
    var q = self.questions[qi];
    if (!q || !d || d.question !== q.text) {
      return;
    }
    (Array.isArray(d.labels) ? d.labels : []).forEach(function (label) {
      for (var i = 0; i < q.options.length; i++) {
        if (q.options[i].label === label) {
          self.choose(qi, i, true);
        }
      }
    });
    if (typeof d.other === "string" && d.other !== "") {
      self.setOther(qi, d.other);
    }
  });
};
