package askuser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Read liberally, advertise strictly. The model is told schema/input.json, the design's
// schema, which guides it well: a header of at most 12 characters, 2 to 4 options, each
// with a description. Real models do not always keep to it, and the harnesses they were
// trained in (Claude Code, OpenCode) ask such calls anyway; so a call is refused only when
// the person could not be shown it faithfully or the answer could not be matched to it.
// The calls are validated against the accepted schema: schema/input.json with the bounds
// below widened, every other byte the same. docs/ERRORS.md has the table, limit by limit,
// with the reasons; the refusal of a call past a widened bound also says the advertised
// one, for the model's next try.

// The bounds accepted where they are wider than those advertised ([MaxHeaderLength],
// [MinOptions], [MaxOptions]).
const (
	// acceptedMaxHeaderLength: a longer header is shown shortened on the chip, whole on
	// hover, to screen readers and in the terminal. Past 100 characters, the bound of a
	// label, it is no longer a label but a sentence in the wrong field.
	acceptedMaxHeaderLength = 100
	// acceptedMinOptions: one option is still a choice, that option or Other.
	acceptedMinOptions = 1
	// acceptedMaxOptions: more options make a longer list, still whole. Eight keep every
	// choice, Other included, on one digit (1 to 9) in the terminal's numbered list.
	acceptedMaxOptions = 8
)

// widenings are where the accepted schema differs from schema/input.json: a path of
// member names from the schema's root to a keyword, and the keyword's accepted value.
var widenings = []struct {
	path  string
	value string
}{
	{"properties/questions/items/properties/header/maxLength", strconv.Itoa(acceptedMaxHeaderLength)},
	{"properties/questions/items/properties/options/minItems", strconv.Itoa(acceptedMinOptions)},
	{"properties/questions/items/properties/options/maxItems", strconv.Itoa(acceptedMaxOptions)},
	// A description may be empty or left out: the option is then shown by its label alone.
	{"properties/questions/items/properties/options/items/required", `["label"]`},
	{"properties/questions/items/properties/options/items/properties/description/minLength", "0"},
}

// acceptedSchema returns the advertised input schema with the widenings applied. It
// fails when a widening's path is not in the schema: the schema changed under it.
func acceptedSchema(advertised []byte) ([]byte, error) {
	doc := advertised
	for _, w := range widenings {
		start, end, err := valueSpan(doc, strings.Split(w.path, "/"))
		if err != nil {
			return nil, fmt.Errorf("widening %s: %w", w.path, err)
		}
		doc = slices.Concat(doc[:start], []byte(w.value), doc[end:])
	}
	return doc, nil
}

// valueSpan returns where, in doc, is the value at path: a member name per step, each
// into an object.
func valueSpan(doc []byte, path []string) (start, end int, err error) {
	end = len(doc)
	for _, name := range path {
		s, e, err := memberSpan(doc[start:end], name)
		if err != nil {
			return 0, 0, err
		}
		start, end = start+s, start+e
	}
	return start, end, nil
}

// memberSpan returns where, in obj (a JSON object), is the value of its member name.
func memberSpan(obj []byte, name string) (start, end int, err error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, fmt.Errorf("not an object where %q is looked for", name)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, 0, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, err
		}
		if t == name {
			end := int(dec.InputOffset())
			return end - len(raw), end, nil
		}
	}
	return 0, 0, fmt.Errorf("no member %q", name)
}
