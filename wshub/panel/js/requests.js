// RequestMap: requests kept by their session and request id together.
//
// A request id is unique only within its session, and one panel may hold requests of
// many sessions (a connection authorized for several, approvals routed to a person): so
// every set, card, note and draft is kept by both, the session as its event named it
// (sessionOf), never by the request id alone.
//
// Exports: requestKey, sessionArg, RequestMap.

// requestKey is the key of a request: its session (from sessionOf) and its request id.
function requestKey(session, requestId) {
  return JSON.stringify([sessionKey(session), str(requestId)]);
}

// sessionArg is the session a caller of the panel's API names: a parsed event of the
// request (exact for numeric ids beyond 2^53), its sessionId, or a session from sessionOf;
// undefined when none is named.
function sessionArg(x) {
  if (x === undefined || x === null) {
    return undefined;
  }
  if (typeof x === "object" && (x.raw !== undefined || x.value !== undefined) && x.type === undefined) {
    return x;
  }
  return typeof x === "object" ? sessionOf(x) : sessionOf({sessionId: x});
}

/**
 * RequestMap holds values by session and request id, oldest first. get finds the value
 * of exactly that request; find also takes, when no session is named (undefined, or null:
 * an event without sessionId), the one value of that request id, if there is only one.
 */
function RequestMap() {
  this.items = new Map(); // requestKey -> {requestId, value}, oldest first
}

RequestMap.prototype.get = function (session, requestId) {
  var e = this.items.get(requestKey(session, requestId));
  return e ? e.value : undefined;
};

RequestMap.prototype.find = function (session, requestId) {
  var v = this.get(session || null, requestId);
  if (v !== undefined || session) {
    return v;
  }
  var found = [];
  this.items.forEach(function (e) {
    if (e.requestId === requestId) {
      found.push(e.value);
    }
  });
  return found.length === 1 ? found[0] : undefined;
};

// set adds value as the newest, or replaces the value of a request already held, in place.
RequestMap.prototype.set = function (session, requestId, value) {
  this.items.set(requestKey(session, requestId), {requestId: str(requestId), value: value});
};

RequestMap.prototype.remove = function (session, requestId) {
  this.items.delete(requestKey(session, requestId));
};

// trim drops the oldest values until at most limit are left.
RequestMap.prototype.trim = function (limit) {
  while (this.items.size > limit) {
    this.items.delete(this.items.keys().next().value);
  }
};

RequestMap.prototype.size = function () { return this.items.size; };

RequestMap.prototype.values = function () {
  return Array.from(this.items.values(), function (e) { return e.value; });
};

// ids lists the request ids, oldest first (one per request: two sessions may share one).
RequestMap.prototype.ids = function () {
  return Array.from(this.items.values(), function (e) { return e.requestId; });
};

RequestMap.prototype.forEach = function (fn) {
  this.items.forEach(function (e) { fn(e.value); });
};

RequestMap.prototype.clear = function () { this.items.clear(); };
