// createDrafts: choices kept in sessionStorage per request, for a reload.
//
// The choices of each pending set in sessionStorage, per request (its session and
// request id: requestKey), so that a reload
// keeps them for the life of the tab. Nothing breaks where storage is refused.
//
// Exports: createDrafts.

var DRAFT_PREFIX = "askuser:draft:";
var DRAFT_LIMIT = 50;

function createDrafts(enabled) {
  var store = null;
  if (enabled) {
    try {
      store = root.sessionStorage;
      var probe = DRAFT_PREFIX + "probe";
      store.setItem(probe, "1");
      store.removeItem(probe);
    } catch (e) {
      store = null;
    }
  }
  function keys() {
    var out = [];
    for (var i = 0; i < store.length; i++) {
      var k = store.key(i);
      if (k && k.indexOf(DRAFT_PREFIX) === 0) {
        out.push(k);
      }
    }
    return out;
  }
  // prune keeps the newest DRAFT_LIMIT drafts: sets that ended while this tab was away
  // leave theirs behind.
  function prune() {
    var ks = keys();
    if (ks.length <= DRAFT_LIMIT) {
      return;
    }
    ks.map(function (k) {
      var t = 0;
      try {
        t = JSON.parse(store.getItem(k)).t || 0;
      } catch (e) {
        t = 0;
      }
      return {k: k, t: t};
    }).sort(function (a, b) { return a.t - b.t; })
      .slice(0, ks.length - DRAFT_LIMIT)
      .forEach(function (e) { store.removeItem(e.k); });
  }
  return {
    // load, save and remove take a set or an approval: its session and request id.
    load: function (set) {
      if (!store) {
        return null;
      }
      try {
        var v = JSON.parse(store.getItem(DRAFT_PREFIX + requestKey(set.session, set.requestId)));
        return v && Array.isArray(v.q) ? v.q : null;
      } catch (e) {
        return null;
      }
    },
    save: function (set) {
      if (!store) {
        return;
      }
      try {
        store.setItem(DRAFT_PREFIX + requestKey(set.session, set.requestId), JSON.stringify({t: Date.now(), q: set.draft()}));
        prune();
      } catch (e) {
        // full or refused: the draft is a convenience
      }
    },
    remove: function (set) {
      if (store) {
        try {
          store.removeItem(DRAFT_PREFIX + requestKey(set.session, set.requestId));
        } catch (e) {
          // nothing to do
        }
      }
    }
  };
}
