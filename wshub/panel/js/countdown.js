// createAnnouncer, createCountdown: the live region and the time left.
//
// What screen readers are told, through a polite live region, and the time left of each
// set, spoken at one minute and at ten seconds.
//
// Exports: createAnnouncer, createCountdown.

// Moments at which the time left is announced to screen readers, in seconds.
var ANNOUNCE_AT = [60, 10];

// createAnnouncer returns say(text), which a polite live region inside parent speaks.
function createAnnouncer(parent) {
  var node = el("div", "askuser-sr-only");
  node.setAttribute("aria-live", "polite");
  node.setAttribute("data-testid", "announcer");
  parent.appendChild(node);
  return function say(text) {
    // Clear first so that the same text twice is still announced.
    node.textContent = "";
    setTimeout(function () {
      node.textContent = text;
    }, 50);
  };
}

// createCountdown ticks once a second while any entry of entries() has an expiry: it
// shows the time left in each entry's view and announces it as it passes ANNOUNCE_AT.
// Returns {tick(), stop()}; tick also starts and stops the ticking as needed.
function createCountdown(entries, S, now, say) {
  var ticker = null;
  var stopped = false;
  function tick() {
    var any = false;
    var t = now();
    entries().forEach(function (entry) {
      var set = entry.set;
      if (isNaN(set.expiresAt)) {
        entry.view.setCountdown(null);
        return;
      }
      any = true;
      var left = Math.max(0, Math.ceil((set.expiresAt - t) / 1000));
      entry.view.setCountdown(left, left > 0 ? S.timeLeft(left) : S.timeUp);
      ANNOUNCE_AT.forEach(function (at) {
        if (left <= at && left > 0 && !entry.announced[at]) {
          entry.announced[at] = true;
          // Only announce a threshold as it passes, not all of them for a late arrival.
          if (left > at - 3) {
            say(S.timeLeftSpoken(left));
          }
        }
      });
      if (left === 0 && !entry.announced[0]) {
        entry.announced[0] = true;
        say(S.timeUp);
      }
    });
    if (any && !ticker && !stopped) {
      ticker = setInterval(tick, 1000);
    } else if (!any && ticker) {
      clearInterval(ticker);
      ticker = null;
    }
  }
  return {
    tick: tick,
    stop: function () {
      stopped = true;
      if (ticker) {
        clearInterval(ticker);
        ticker = null;
      }
    }
  };
}
