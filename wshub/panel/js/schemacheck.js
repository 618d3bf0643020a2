// checkSchema: an edit checked in the browser against the tool's JSON Schema.
//
// A small checker of the common keywords (type, enum, const, required, properties,
// additionalProperties, minLength, maxLength, pattern, minimum, maximum and their
// exclusive forms, items, minItems, maxItems, allOf), so that the person sees what is
// wrong while typing. It only reports what surely fails; whatever it does not know it
// leaves to the server, whose check is the one that counts.
//
// Exports: checkSchema.

// The most problems listed; past it, the first ones are enough to go on with.
var SCHEMA_MAX_PROBLEMS = 20;

// schemaPath extends a problem's place, worded as the server words it: "arguments" for
// the whole, "name", "list[0]", "a.b".
function schemaPath(where, key, index) {
  if (index !== undefined) {
    return (where === "arguments" ? "" : where) + "[" + index + "]";
  }
  return where === "arguments" ? key : where + "." + key;
}

/**
 * checkSchema checks node (of parseJSONText) against schema (a JSON Schema, as JSON.parse
 * gives it) and returns the problems, each "where: what", in the texts of S.
 */
function checkSchema(schema, node, S) {
  var T = S.schema;
  var out = [];
  function add(where, what) {
    if (out.length < SCHEMA_MAX_PROBLEMS) {
      out.push(where + ": " + what);
    }
  }
  function typeOf(nd) {
    if (nd.t === "bool") {
      return "boolean";
    }
    if (nd.t === "number") {
      return isFinite(nd.v) && Math.floor(nd.v) === nd.v ? "integer" : "number";
    }
    return nd.t;
  }
  function shows(v) {
    return JSON.stringify(v);
  }
  function check(sc, nd, where, depth) {
    if (sc === false) {
      add(where, T.never);
      return;
    }
    if (!sc || typeof sc !== "object" || Array.isArray(sc) || depth > 64) {
      return; // true, or nothing the checker reads
    }
    var type = typeOf(nd);
    if (sc.type !== undefined) {
      var types = Array.isArray(sc.type) ? sc.type : [sc.type];
      var fits = types.some(function (t) {
        return t === type || (t === "number" && type === "integer");
      });
      if (!fits && types.every(function (t) { return typeof t === "string"; })) {
        add(where, T.type(types, type === "integer" ? "number" : type));
        return; // the other keywords would only say the same again
      }
    }
    if (Array.isArray(sc.enum) && !sc.enum.some(function (v) { return jsonEqual(nd, v); })) {
      add(where, T.enumOf(sc.enum.map(shows)));
    }
    if (sc.const !== undefined && !jsonEqual(nd, sc.const)) {
      add(where, T.constant(shows(sc.const)));
    }
    if (Array.isArray(sc.allOf)) {
      sc.allOf.forEach(function (sub) { check(sub, nd, where, depth + 1); });
    }
    if (nd.t === "string") {
      var length = Array.from(nd.v).length;
      if (typeof sc.minLength === "number" && length < sc.minLength) {
        add(where, T.minLength(sc.minLength));
      }
      if (typeof sc.maxLength === "number" && length > sc.maxLength) {
        add(where, T.maxLength(sc.maxLength));
      }
      if (typeof sc.pattern === "string") {
        var re = null;
        try {
          re = new RegExp(sc.pattern, "u");
        } catch (e) {
          re = null; // a pattern this browser reads otherwise: the server's to check
        }
        if (re && !re.test(nd.v)) {
          add(where, T.pattern(sc.pattern));
        }
      }
    }
    if (nd.t === "number" && isFinite(nd.v)) {
      if (typeof sc.minimum === "number" && nd.v < sc.minimum) {
        add(where, T.minimum(sc.minimum));
      }
      if (typeof sc.maximum === "number" && nd.v > sc.maximum) {
        add(where, T.maximum(sc.maximum));
      }
      if (typeof sc.exclusiveMinimum === "number" && nd.v <= sc.exclusiveMinimum) {
        add(where, T.exclusiveMinimum(sc.exclusiveMinimum));
      }
      if (typeof sc.exclusiveMaximum === "number" && nd.v >= sc.exclusiveMaximum) {
        add(where, T.exclusiveMaximum(sc.exclusiveMaximum));
      }
    }
    if (nd.t === "array") {
      if (typeof sc.minItems === "number" && nd.items.length < sc.minItems) {
        add(where, T.minItems(sc.minItems));
      }
      if (typeof sc.maxItems === "number" && nd.items.length > sc.maxItems) {
        add(where, T.maxItems(sc.maxItems));
      }
      if (sc.items !== undefined && !Array.isArray(sc.items) && sc.prefixItems === undefined) {
        nd.items.forEach(function (it, k) { check(sc.items, it, schemaPath(where, "", k), depth + 1); });
      }
    }
    if (nd.t === "object") {
      var props = sc.properties && typeof sc.properties === "object" ? sc.properties : {};
      var has = {};
      nd.members.forEach(function (m) { has[m.key] = true; });
      if (Array.isArray(sc.required)) {
        sc.required.forEach(function (name) {
          if (typeof name === "string" && !has[name]) {
            add(schemaPath(where, name), T.required);
          }
        });
      }
      var patterned = sc.patternProperties !== undefined;
      nd.members.forEach(function (m) {
        if (Object.prototype.hasOwnProperty.call(props, m.key)) {
          check(props[m.key], m.value, schemaPath(where, m.key), depth + 1);
        } else if (!patterned && sc.additionalProperties === false) {
          add(schemaPath(where, m.key), T.additional(Object.keys(props)));
        } else if (!patterned && sc.additionalProperties !== undefined) {
          check(sc.additionalProperties, m.value, schemaPath(where, m.key), depth + 1);
        }
      });
    }
  }
  if (schema !== undefined && schema !== null) {
    check(schema, node, "arguments", 0);
  }
  return out;
}
