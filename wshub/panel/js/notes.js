// createNotes: what an ended set leaves behind ("Answered on another device").
//
// What an ended set leaves where it was, unless this device's own answer or decline
// ended it: "Answered on another device: React", "Timed out", with any text the person
// had typed. The last few ended sets are remembered, for a refusal that arrives after the
// end (this device lost the race) and for answers learned later.
//
// Exports: createNotes.

var NOTE_LIMIT = 3; // notes shown at most; the oldest goes first
var ENDED_LIMIT = 20; // ended sets remembered

function createNotes(listEl, S, say, onRemoved) {
  var ended = new RequestMap(); // (session, requestId) -> {set, outcome, own, answers, note}, oldest first

  function show(record, before, text, withAnswers, mine) {
    var set = record.set;
    record.note = buildNote({
      set: set,
      outcome: record.outcome,
      text: text,
      withAnswers: withAnswers,
      answers: record.answers,
      mine: mine,
      typed: mine ? [] : set.typed()
    }, S, function () {
      dismiss(record);
    });
    listEl.insertBefore(record.note.node, before && before.parentNode === listEl ? before : null);
    var all = listEl.querySelectorAll(".askuser-note");
    for (var i = 0; i < all.length - NOTE_LIMIT; i++) {
      listEl.removeChild(all[i]);
    }
    say(text);
  }

  function dismiss(record) {
    if (!record.note) {
      return;
    }
    var node = record.note.node;
    var hadFocus = node.contains(document.activeElement);
    var next = node.nextElementSibling;
    if (node.parentNode) {
      node.parentNode.removeChild(node);
    }
    record.note = null;
    if (hadFocus) {
      onRemoved(next);
    }
  }

  return {
    // ended records how set ended and shows its note in place of before (its form); it
    // returns the note's node, or null when this device's own answer or decline ended it.
    ended: function (set, outcome, before) {
      var record = {set: set, outcome: outcome, own: false, answers: null, note: null};
      ended.remove(set.session, set.requestId);
      ended.set(set.session, set.requestId, record);
      ended.trim(ENDED_LIMIT);
      if (!set.lost && ((set.sending === "answers" && outcome === "answered") ||
        (set.sending === "decline" && outcome === "declined"))) {
        record.own = true;
        say(outcome === "answered" ? S.answerSent : S.resolved.declined);
        return null;
      }
      if (outcome === "answered" && (set.lost || set.sending === "answers")) {
        show(record, before, S.lostRace, true, set.answersSent);
      } else if (outcome === "answered") {
        show(record, before, S.answeredElsewhere, true, null);
      } else if (outcome === "declined") {
        show(record, before, S.declinedElsewhere, false, null);
      } else {
        show(record, before, S.resolved[outcome] || S.ended, false, null);
      }
      return record.note.node;
    },
    // refused takes a not_pending refusal of a set that has ended here: an answer taken
    // for this device's own was refused, so another device was first. session: sessionOf.
    refused: function (session, requestId) {
      var record = ended.find(session, requestId);
      if (record && record.own && record.set.answersSent) {
        record.own = false;
        show(record, null, S.lostRace, true, record.set.answersSent);
      }
    },
    setAnswers: function (session, requestId, answers) {
      var record = ended.find(session, requestId);
      if (record) {
        record.answers = answers;
        if (record.note) {
          record.note.setAnswers(answers);
        }
      }
    },
    // forget drops what is known of a set asked again.
    forget: function (session, requestId) {
      var record = ended.get(session, requestId);
      if (record) {
        dismiss(record);
        ended.remove(session, requestId);
      }
    },
    clear: function () {
      ended.forEach(dismiss);
      ended.clear();
    }
  };
}
