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

// The bounds accepted where they are wider than those advertised ([wire.MaxHeaderLength],
// [wire.MinOptions], [wire.MaxOptions]).
const (
	// acceptedMaxHeaderLength: a longer header is shown shortened on the chip, whole on
	// hover, to screen readers and in the terminal. Past 100 characters, the bound of a
	// label, it is no longer a label but a sentence in the wrong field.
	acceptedMaxHeaderLength = 100
	// acceptedMinOptions: no options, and the question is answered in free text; one
	// option is still a choice, that option or Other.
	acceptedMinOptions = 0
	// acceptedMaxOptions: more options make a longer list, still whole. Eight keep every
	// choice, Other included, on one digit (1 to 9) in the terminal's numbered list.
	acceptedMaxOptions = 8
	// acceptedMaxPlaceholderLength: a placeholder is a hint in a text box, no longer
	// than a header.
	acceptedMaxPlaceholderLength = 100
)

// widenings are where the accepted schema differs from schema/input.json: a path of
// member names from the schema's root to a keyword, and the keyword's accepted value;
// or, with add, a path to an object and the members added at its end.
var widenings = []struct {
	path  string
	value string
	add   bool
}{
	// Only the question's text is required. A question without a header has no chip;
	// without multiSelect it is single-select (OpenCode's default, and Unity's); without
	// options it is answered in free text, the "Other" box alone.
	{"properties/questions/items/required", `["question"]`, false},
	{"properties/questions/items/properties/header/minLength", "0", false},
	{"properties/questions/items/properties/header/maxLength", strconv.Itoa(acceptedMaxHeaderLength), false},
	{"properties/questions/items/properties/options/minItems", strconv.Itoa(acceptedMinOptions), false},
	{"properties/questions/items/properties/options/maxItems", strconv.Itoa(acceptedMaxOptions), false},
	// A description may be empty or left out: the option is then shown by its label alone.
	{"properties/questions/items/properties/options/items/required", `["label"]`, false},
	{"properties/questions/items/properties/options/items/properties/description/minLength", "0", false},
	// A hint shown in the empty free-text box, as Unity's AskUser lets a model write it.
	{"properties/questions/items/properties", `"placeholder": {"type": "string", "maxLength": ` +
		strconv.Itoa(acceptedMaxPlaceholderLength) + `, "description": "Hint shown in the empty free-text box"}`, true},
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
		if w.add {
			obj := bytes.TrimRight(doc[start:end], " \t\r\n")
			if len(obj) < 2 || obj[len(obj)-1] != '}' {
				return nil, fmt.Errorf("widening %s: not an object", w.path)
			}
			at := start + len(obj) - 1
			doc = slices.Concat(doc[:at], []byte(", "+w.value), doc[at:])
			continue
		}
		doc = slices.Concat(doc[:start], []byte(w.value), doc[end:])
	}
	return doc, nil
}

// Unity's AskUser says a question's kind in a member "type": "choice" (options to
// choose from) or "text" (free text, no options). The accepted schema has no such
// member: a question without options is answered in free text anyway. So "type" is
// checked against the options the question has, and then dropped.
const (
	fieldType  = "type"
	kindText   = "text"
	kindChoice = "choice"
)

// dropKinds checks and removes the "type" member of every question of tree (decoded
// arguments), and returns the problems: a kind other than the two, free text with
// options, or a choice without any.
func dropKinds(tree any) []string {
	obj, _ := tree.(map[string]any)
	qs, _ := obj[fieldQuestions].([]any)
	var out []string
	for i, qv := range qs {
		q, _ := qv.(map[string]any)
		kind, ok := q[fieldType]
		if !ok {
			continue
		}
		delete(q, fieldType)
		opts, _ := q[fieldOptions].([]any)
		where := questionLoc(i) + "." + fieldType
		switch kind {
		case kindText:
			if len(opts) > 0 {
				out = append(out, fmt.Sprintf("%s: a question of type %q is answered in free text, but it has %d options; remove them, or make it %q", where, kindText, len(opts), kindChoice))
			}
		case kindChoice:
			if len(opts) == 0 {
				out = append(out, fmt.Sprintf("%s: a question of type %q needs options to choose from; add them, or make it %q", where, kindChoice, kindText))
			}
		default:
			given, _ := json.Marshal(kind)
			out = append(out, fmt.Sprintf("%s: must be %q or %q (or left out), not %s", where, kindChoice, kindText, given))
		}
	}
	return out
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
