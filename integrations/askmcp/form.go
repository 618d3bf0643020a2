package askmcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
	"github.com/google/jsonschema-go/jsonschema"
)

// This file maps an MCP form elicitation to an askuser question set and the person's
// answers back to the form's content: the host side. The table in docs/MCP.md is the
// contract; the comments say why each mapping is what it is.

// Labels of the options the mapping adds. They are plain words a person reads in the
// panel; each one's description says what choosing it sends.
const (
	labelYes     = "Yes"
	labelNo      = "No"
	labelSkip    = "Leave empty"
	labelNone    = "None of these"
	labelDecline = "Decline"
	labelNotNow  = "Not now"
	labelAccept  = "Accept"
)

// MaxFormFields is the most properties a form may have to be asked on the person's
// devices. A question set holds at most [wire.MaxQuestions] (4) questions, so a form
// of more is asked as consecutive question sets of at most 4 fields each, in the form's
// order, and its content assembled from them all.
const MaxFormFields = 5 * wire.MaxQuestions

// maxMessageRunes bounds the part of a question's text taken from the server's message.
const maxMessageRunes = 600

// fieldKind is how a form field is asked.
type fieldKind int

const (
	kindEnum    fieldKind = iota + 1 // a string chosen from an enum: single-select
	kindMulti                        // an array of enum strings: multi-select
	kindBool                         // yes or no
	kindString                       // free text, answered through "Other"
	kindNumber                       // a number, typed through "Other"
	kindInteger                      // an integer, typed through "Other"
	kindConfirm                      // a form without fields: accept or decline
)

// choiceKind is what choosing one of a question's options means.
type choiceKind int

const (
	choiceValue   choiceKind = iota + 1 // the field takes choice.value
	choiceOmit                          // the field is left out of the content
	choiceDecline                       // the whole elicitation is declined
	choiceCancel                        // the whole elicitation is cancelled
	choiceAccept                        // a confirmation is accepted, with no content
)

type choice struct {
	kind  choiceKind
	value any
}

// enumValue is one value of an enum and the label it is shown with.
type enumValue struct {
	value, label string
}

// field is one property of the requested schema and the question that asks it.
type field struct {
	name     string
	kind     fieldKind
	required bool
	schema   *jsonschema.Schema
	question askuser.Question
	choices  map[string]choice // by option label
	values   []enumValue       // enum values, for kindEnum and kindMulti
}

// form is an elicitation's requested schema, mapped.
type form struct {
	message string
	fields  []*field
}

// UnsupportedError is the error of an elicitation that cannot be asked as askuser
// questions: too many fields, too many choices, a constraint the mapping cannot enforce.
// Nobody is asked. Problems lists every reason, each naming the property.
type UnsupportedError struct {
	Problems []string
}

// Error lists every problem, after saying that nobody was asked.
func (e *UnsupportedError) Error() string {
	return "askmcp: this elicitation cannot be asked on the user's devices: " + strings.Join(e.Problems, "; ")
}

// newForm maps an elicitation's message and requested schema. now gives the dates the
// options of date and date-time fields propose.
func newForm(message string, requested any, now time.Time) (*form, error) {
	f := &form{message: strings.TrimSpace(message)}
	var schema *jsonschema.Schema
	if requested != nil {
		raw, err := json.Marshal(requested)
		if err != nil {
			return nil, &UnsupportedError{Problems: []string{"requestedSchema: " + err.Error()}}
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			return nil, &UnsupportedError{Problems: []string{"requestedSchema: " + err.Error()}}
		}
	}
	var problems []string
	if schema != nil && schema.Type != "" && schema.Type != "object" {
		problems = append(problems, fmt.Sprintf("requestedSchema: type %q; a form is an object", schema.Type))
	}
	var props map[string]*jsonschema.Schema
	var required []string
	if schema != nil {
		props, required = schema.Properties, schema.Required
	}
	if len(props) > MaxFormFields {
		problems = append(problems, fmt.Sprintf("requestedSchema: %d properties; at most %d can be asked", len(props), MaxFormFields))
	}
	if problems != nil {
		return nil, &UnsupportedError{Problems: problems}
	}
	if len(props) == 0 {
		// A message alone asks for a confirmation: accept or decline.
		f.fields = []*field{{
			kind: kindConfirm,
			question: askuser.Question{
				Question: orDefault(clip(f.message, 1000), "Do you accept?"),
				Header:   "Confirm",
				Options: []askuser.Option{
					{Label: labelAccept, Description: "Accept the request"},
					{Label: labelDecline, Description: "Decline the request"},
				},
			},
			choices: map[string]choice{labelAccept: {kind: choiceAccept}, labelDecline: {kind: choiceDecline}},
		}}
		return f, f.validate()
	}
	for _, name := range propertyOrder(props, required) {
		fl, ps := newField(name, props[name], slices.Contains(required, name), now)
		problems = append(problems, ps...)
		if fl != nil {
			f.fields = append(f.fields, fl)
		}
	}
	for _, name := range required {
		if _, ok := props[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s: required but not a property", name))
		}
	}
	if problems != nil {
		return nil, &UnsupportedError{Problems: problems}
	}
	f.writeQuestions()
	return f, f.validate()
}

// propertyOrder orders the fields: the required ones in the order "required" lists them,
// then the others by name. The SDK hands a client the schema as a Go map, so the order
// the server wrote its properties in is lost; this order is at least the same every time.
func propertyOrder(props map[string]*jsonschema.Schema, required []string) []string {
	var out []string
	for _, name := range required {
		if _, ok := props[name]; ok && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	var rest []string
	for name := range props {
		if !slices.Contains(out, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// newField maps one property. It returns the problems that make it unaskable.
func newField(name string, s *jsonschema.Schema, required bool, now time.Time) (*field, []string) {
	if s == nil {
		return nil, []string{name + ": no schema"}
	}
	fl := &field{name: name, required: required, schema: s, choices: map[string]choice{}}
	var problems []string
	unsupported := func(keyword string, present bool) {
		if present {
			problems = append(problems, fmt.Sprintf("%s: %q is not supported", name, keyword))
		}
	}
	// Constraints the mapping does not check would let the person give an answer the
	// server then refuses; better to say so before anyone is asked.
	unsupported("pattern", s.Pattern != "")
	unsupported("multipleOf", s.MultipleOf != nil)
	unsupported("exclusiveMinimum", s.ExclusiveMinimum != nil)
	unsupported("exclusiveMaximum", s.ExclusiveMaximum != nil)
	unsupported("const", s.Const != nil)
	unsupported("properties (nested objects)", len(s.Properties) > 0)
	unsupported("allOf", len(s.AllOf) > 0)
	unsupported("anyOf", len(s.AnyOf) > 0)
	unsupported("not", s.Not != nil)
	unsupported("type as a list", len(s.Types) > 0)
	if problems != nil {
		return nil, problems
	}
	room := wire.MaxOptions // options left for this question
	if !required {
		room-- // for "Leave empty"
	}
	switch {
	case s.Type == "array":
		fl.kind = kindMulti
		if s.Items == nil {
			return nil, []string{name + ": an array without items"}
		}
		vals, ps := enumValues(name+".items", s.Items)
		if ps != nil {
			return nil, ps
		}
		if vals == nil {
			return nil, []string{name + ": an array whose items are not an enum of strings"}
		}
		fl.values = vals
		noneAllowed := s.MinItems == nil || *s.MinItems == 0
		if noneAllowed {
			room--
		}
		if len(vals) > room {
			return nil, []string{tooManyValues(name, len(vals), room)}
		}
		if s.MaxItems != nil && s.MinItems != nil && *s.MaxItems < *s.MinItems {
			return nil, []string{name + ": maxItems is less than minItems"}
		}
		for _, v := range vals {
			fl.addOption(v.label, "Choose "+quote(v.value), choice{kind: choiceValue, value: v.value})
		}
		if noneAllowed {
			fl.addOption(labelNone, "Choose none of the options above", choice{kind: choiceValue, value: []any{}})
		}
		fl.question.MultiSelect = true
	case s.Type == "boolean":
		fl.kind = kindBool
		def := defaultOf[bool](s)
		yes, no := "Answer yes", "Answer no"
		if def != nil && *def {
			yes += " (the default)"
		} else if def != nil {
			no += " (the default)"
		}
		fl.addOption(labelYes, yes, choice{kind: choiceValue, value: true})
		fl.addOption(labelNo, no, choice{kind: choiceValue, value: false})
	case s.Type == "string" || s.Type == "":
		vals, ps := enumValues(name, s)
		if ps != nil {
			return nil, ps
		}
		if vals != nil {
			fl.kind = kindEnum
			fl.values = vals
			if len(vals) > room {
				return nil, []string{tooManyValues(name, len(vals), room)}
			}
			def := defaultOf[string](s)
			for _, v := range vals {
				desc := "Choose " + quote(v.value)
				if def != nil && *def == v.value {
					desc += " (the default)"
				}
				fl.addOption(v.label, desc, choice{kind: choiceValue, value: v.value})
			}
			break
		}
		if s.Type == "" {
			return nil, []string{name + ": no type"}
		}
		fl.kind = kindString
		switch s.Format {
		case "", "email", "uri", "date", "date-time":
		default:
			return nil, []string{fmt.Sprintf("%s: format %q is not supported", name, s.Format)}
		}
		if def := defaultOf[string](s); def != nil && fl.textProblem(*def) == "" && len(fl.question.Options) < room {
			fl.addOption(clip("Default: "+*def, 100), "Use the default value "+quote(*def), choice{kind: choiceValue, value: *def})
		}
		switch s.Format {
		case "date":
			for _, d := range []struct {
				word string
				t    time.Time
			}{{"Today", now}, {"Tomorrow", now.AddDate(0, 0, 1)}} {
				v := d.t.Format(time.DateOnly)
				if fl.textProblem(v) == "" && len(fl.question.Options) < room {
					fl.addOption(d.word+" ("+v+")", "The date "+v, choice{kind: choiceValue, value: v})
				}
			}
		case "date-time":
			v := now.UTC().Truncate(time.Second).Format(time.RFC3339)
			if fl.textProblem(v) == "" && len(fl.question.Options) < room {
				fl.addOption("Now ("+v+")", "The time "+v, choice{kind: choiceValue, value: v})
			}
		}
	case s.Type == "number" || s.Type == "integer":
		fl.kind = kindNumber
		if s.Type == "integer" {
			fl.kind = kindInteger
		}
		if s.Minimum != nil && s.Maximum != nil && *s.Maximum < *s.Minimum {
			return nil, []string{name + ": maximum is less than minimum"}
		}
		if def := defaultOf[float64](s); def != nil && fl.numberProblem(*def) == "" {
			fl.addOption(clip("Default: "+formatNumber(*def), 100), "Use the default value "+formatNumber(*def), choice{kind: choiceValue, value: fl.number(*def)})
		}
		for _, b := range []struct {
			word string
			v    *float64
		}{{"minimum", s.Minimum}, {"maximum", s.Maximum}} {
			if b.v != nil && fl.numberProblem(*b.v) == "" && len(fl.question.Options) < room {
				fl.addOption(formatNumber(*b.v)+" ("+b.word+")", "The "+b.word+", "+formatNumber(*b.v), choice{kind: choiceValue, value: fl.number(*b.v)})
			}
		}
	default:
		return nil, []string{fmt.Sprintf("%s: type %q is not supported", name, s.Type)}
	}
	if !required {
		fl.addOption(labelSkip, "Give no value for this field", choice{kind: choiceOmit})
	}
	// A question needs two options; a free-text field may have fewer that are values.
	// The rest are the two ways of not answering that MCP knows, so that every option
	// means something when chosen (see docs/MCP.md, "Free text").
	if len(fl.question.Options) < wire.MinOptions {
		fl.addOption(labelDecline, "Refuse to give this; the whole request is declined", choice{kind: choiceDecline})
	}
	if len(fl.question.Options) < wire.MinOptions {
		fl.addOption(labelNotNow, "Dismiss the request without answering; the whole request is cancelled", choice{kind: choiceCancel})
	}
	return fl, nil
}

func tooManyValues(name string, n, room int) string {
	return fmt.Sprintf("%s: %d choices; at most %d fit in one question here (a question has at most %d options, including any \"%s\" or \"%s\" the mapping adds)",
		name, n, room, wire.MaxOptions, labelSkip, labelNone)
}

func (fl *field) addOption(label, description string, c choice) {
	if _, dup := fl.choices[label]; dup {
		return
	}
	fl.question.Options = append(fl.question.Options, askuser.Option{Label: label, Description: clip(description, 1000)})
	fl.choices[label] = c
}

// enumValues reads an enum of strings: "enum" (with the legacy "enumNames" as labels),
// or "oneOf"/"anyOf" of {"const", "title"}. It returns nil when s is not an enum.
func enumValues(name string, s *jsonschema.Schema) ([]enumValue, []string) {
	var out []enumValue
	switch {
	case len(s.Enum) > 0:
		names, _ := s.Extra["enumNames"].([]any)
		for i, v := range s.Enum {
			str, ok := v.(string)
			if !ok {
				return nil, []string{fmt.Sprintf("%s: enum value %v is not a string", name, v)}
			}
			label := str
			if i < len(names) {
				if n, ok := names[i].(string); ok && strings.TrimSpace(n) != "" {
					label = n
				}
			}
			out = append(out, enumValue{value: str, label: label})
		}
	case len(s.OneOf) > 0 || len(s.AnyOf) > 0:
		entries := s.OneOf
		if len(entries) == 0 {
			entries = s.AnyOf
		}
		for _, e := range entries {
			if e == nil || e.Const == nil {
				return nil, []string{name + ": a choice without const"}
			}
			str, ok := (*e.Const).(string)
			if !ok {
				return nil, []string{fmt.Sprintf("%s: const %v is not a string", name, *e.Const)}
			}
			label := e.Title
			if strings.TrimSpace(label) == "" {
				label = str
			}
			out = append(out, enumValue{value: str, label: label})
		}
	default:
		return nil, nil
	}
	for i := range out {
		out[i].label = clip(out[i].label, 100)
	}
	return out, nil
}

// writeQuestions sets each question's text and header. The server's message heads the
// first question, since a question's text is all a panel shows above the options.
func (f *form) writeQuestions() {
	for i, fl := range f.fields {
		text := strings.TrimSpace(fl.schema.Description)
		title := strings.TrimSpace(fl.schema.Title)
		switch {
		case text == "" && title != "":
			text = title
		case text == "":
			text = fl.name
		case title != "" && !strings.Contains(text, title):
			text = title + ": " + text
		}
		if hint := fl.hint(); hint != "" {
			text += " (" + hint + ")"
		}
		if i%wire.MaxQuestions == 0 {
			text = f.partHead(i/wire.MaxQuestions, text)
		}
		fl.question.Question = clip(text, 1000)
		fl.question.Header = clip(orDefault(title, fl.name), wire.MaxHeaderLength)
	}
	// Question texts must differ within a call.
	seen := map[string]bool{}
	for _, fl := range f.fields {
		q := fl.question.Question
		for n := 2; seen[strings.TrimSpace(q)]; n++ {
			q = clip(fl.question.Question, 990) + " [" + strconv.Itoa(n) + "]"
		}
		fl.question.Question = q
		seen[strings.TrimSpace(q)] = true
	}
}

// partHead heads the first question of part k (from 0) of the form: the server's
// message and, when the form is asked in several parts, which part this is.
func (f *form) partHead(k int, text string) string {
	n := len(f.parts())
	head := ""
	if f.message != "" && f.message != text {
		head = clip(f.message, maxMessageRunes)
	}
	if n > 1 {
		head = strings.TrimSpace(head + fmt.Sprintf(" (part %d of %d)", k+1, n))
	}
	if head == "" {
		return text
	}
	return head + "\n\n" + text
}

// parts splits the form's fields into the question sets that ask them: at most
// [wire.MaxQuestions] fields each, in the form's order.
func (f *form) parts() [][]*field {
	return slices.Collect(slices.Chunk(f.fields, wire.MaxQuestions))
}

// hint says what a typed answer must be, for the fields answered through "Other".
func (fl *field) hint() string {
	s := fl.schema
	var parts []string
	switch fl.kind {
	case kindString:
		switch s.Format {
		case "email":
			parts = append(parts, "an email address")
		case "uri":
			parts = append(parts, "a URI")
		case "date":
			parts = append(parts, "a date, YYYY-MM-DD")
		case "date-time":
			parts = append(parts, "a date and time, RFC 3339")
		default:
			parts = append(parts, "type your answer")
		}
		if s.MinLength != nil && *s.MinLength > 1 {
			parts = append(parts, fmt.Sprintf("at least %d characters", *s.MinLength))
		}
		if s.MaxLength != nil {
			parts = append(parts, fmt.Sprintf("at most %d characters", *s.MaxLength))
		}
	case kindNumber, kindInteger:
		word := "a number"
		if fl.kind == kindInteger {
			word = "a whole number"
		}
		switch {
		case s.Minimum != nil && s.Maximum != nil:
			word += fmt.Sprintf(" from %s to %s", formatNumber(*s.Minimum), formatNumber(*s.Maximum))
		case s.Minimum != nil:
			word += " of at least " + formatNumber(*s.Minimum)
		case s.Maximum != nil:
			word += " of at most " + formatNumber(*s.Maximum)
		}
		parts = append(parts, word)
	case kindMulti:
		switch {
		case s.MinItems != nil && *s.MinItems > 1 && s.MaxItems != nil:
			parts = append(parts, fmt.Sprintf("choose %d to %d", *s.MinItems, *s.MaxItems))
		case s.MinItems != nil && *s.MinItems > 1:
			parts = append(parts, fmt.Sprintf("choose at least %d", *s.MinItems))
		case s.MaxItems != nil:
			parts = append(parts, fmt.Sprintf("choose at most %d", *s.MaxItems))
		}
	}
	return strings.Join(parts, ", ")
}

// validate checks the mapped questions by askuser's own rules (an enum value named
// "Other", say, cannot be an option), so that what is asked can be answered: each part
// as the question set that asks it.
func (f *form) validate() error {
	var problems []string
	for _, part := range f.parts() {
		req, _ := f.request(part, nil)
		if err := req.Validate(); err != nil {
			if ae, ok := errors.AsType[*askuser.ArgumentsError](err); ok {
				problems = append(problems, ae.Problems...)
			} else {
				problems = append(problems, err.Error())
			}
		}
	}
	if problems != nil {
		return &UnsupportedError{Problems: problems}
	}
	return nil
}

// request returns the questions of the given fields of one part (all of them when
// notes is nil), each with the note, when there is one, saying why it is asked again;
// and the field of each question, by the question's text.
func (f *form) request(part []*field, notes map[*field]string) (*askuser.Request, map[string]*field) {
	req := &askuser.Request{}
	byText := map[string]*field{}
	for _, fl := range part {
		q := fl.question
		if notes != nil {
			note, again := notes[fl]
			if !again {
				continue
			}
			q.Question = clip(clip(note, 300)+"\n\n"+q.Question, 1000)
		}
		req.Questions = append(req.Questions, q)
		byText[q.Question] = fl
	}
	return req, byText
}

// outcome is what the person's answers to a round mean for the elicitation.
type outcome struct {
	action string                // "accept", "decline" or "cancel"
	again  map[*field]string     // fields to ask again, each with why; empty when done
	values map[*field]fieldValue // the values given so far
}

type fieldValue struct {
	omit  bool
	value any
}

// apply reads one round's answers into o.
func (o *outcome) apply(answers []askuser.Answer, byText map[string]*field) {
	o.again = map[*field]string{}
	for _, a := range answers {
		fl := byText[a.Question]
		if fl == nil {
			continue // cannot happen: askuser answers exactly the questions asked
		}
		v, c, problem := fl.read(a)
		switch {
		case c == choiceDecline:
			o.action = "decline"
		case c == choiceCancel && o.action != "decline":
			o.action = "cancel"
		case c == choiceAccept && o.action == "":
			o.action = "accept"
		case problem != "":
			o.again[fl] = problem
		default:
			o.values[fl] = v
		}
	}
}

// read turns one answer into the field's value, or says what is wrong with it.
func (fl *field) read(a askuser.Answer) (fieldValue, choiceKind, string) {
	custom := ""
	if a.CustomInput != nil {
		custom = strings.TrimSpace(*a.CustomInput)
	}
	if fl.kind == kindMulti {
		return fl.readMulti(a.SelectedLabels, custom)
	}
	if len(a.SelectedLabels) > 0 {
		c := fl.choices[a.SelectedLabels[0]]
		switch c.kind {
		case choiceOmit:
			return fieldValue{omit: true}, c.kind, ""
		case choiceValue:
			return fieldValue{value: c.value}, c.kind, ""
		}
		return fieldValue{}, c.kind, ""
	}
	typed := quote(clip(custom, 60))
	switch fl.kind {
	case kindConfirm:
		return fieldValue{}, 0, "Your answer " + typed + " was not used: choose Accept or Decline."
	case kindEnum:
		if v, ok := fl.match(custom); ok {
			return fieldValue{value: v}, choiceValue, ""
		}
		return fieldValue{}, 0, "Your answer " + typed + " is not one of the choices; choose one of them."
	case kindBool:
		switch strings.ToLower(strings.TrimRight(custom, ".!")) {
		case "yes", "y", "true", "是", "对":
			return fieldValue{value: true}, choiceValue, ""
		case "no", "n", "false", "否", "不":
			return fieldValue{value: false}, choiceValue, ""
		}
		return fieldValue{}, 0, "Your answer " + typed + " is neither yes nor no."
	case kindString:
		if p := fl.textProblem(custom); p != "" {
			return fieldValue{}, 0, "Your answer " + typed + " " + p + "."
		}
		return fieldValue{value: custom}, choiceValue, ""
	case kindNumber, kindInteger:
		n, err := strconv.ParseFloat(strings.ReplaceAll(custom, ",", ""), 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return fieldValue{}, 0, "Your answer " + typed + " is not a number."
		}
		if p := fl.numberProblem(n); p != "" {
			return fieldValue{}, 0, "Your answer " + typed + " " + p + "."
		}
		return fieldValue{value: fl.number(n)}, choiceValue, ""
	}
	return fieldValue{}, 0, "Your answer could not be used."
}

func (fl *field) readMulti(labels []string, custom string) (fieldValue, choiceKind, string) {
	values := []any{}
	none := false
	for _, l := range labels {
		c := fl.choices[l]
		switch c.kind {
		case choiceOmit:
			if len(labels) == 1 && custom == "" {
				return fieldValue{omit: true}, choiceOmit, ""
			}
			return fieldValue{}, 0, quote(labelSkip) + " cannot be chosen with other answers."
		case choiceValue:
			if s, ok := c.value.(string); ok {
				values = append(values, s)
			} else {
				none = true
			}
		}
	}
	if custom != "" {
		v, ok := fl.match(custom)
		if !ok {
			return fieldValue{}, 0, "Your answer " + quote(clip(custom, 60)) + " is not one of the choices; choose among them."
		}
		if !slices.Contains(values, any(v)) {
			values = append(values, v)
		}
	}
	if none && len(values) > 0 {
		return fieldValue{}, 0, quote(labelNone) + " cannot be chosen with other answers."
	}
	s := fl.schema
	if s.MinItems != nil && len(values) < *s.MinItems {
		return fieldValue{}, 0, fmt.Sprintf("Choose at least %d.", *s.MinItems)
	}
	if s.MaxItems != nil && len(values) > *s.MaxItems {
		return fieldValue{}, 0, fmt.Sprintf("Choose at most %d.", *s.MaxItems)
	}
	return fieldValue{value: values}, choiceValue, ""
}

// match finds the enum value a typed answer names, by value or label, ignoring case.
func (fl *field) match(typed string) (string, bool) {
	for _, v := range fl.values {
		if strings.EqualFold(typed, v.value) || strings.EqualFold(typed, v.label) {
			return v.value, true
		}
	}
	return "", false
}

// textProblem says what is wrong with a typed string for this field, or returns "".
func (fl *field) textProblem(v string) string {
	s := fl.schema
	n := utf8.RuneCountInString(v)
	if s.MinLength != nil && n < *s.MinLength {
		return fmt.Sprintf("is too short: at least %d characters", *s.MinLength)
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		return fmt.Sprintf("is too long: at most %d characters", *s.MaxLength)
	}
	switch s.Format {
	case "email":
		if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
			return "is not an email address"
		}
	case "uri":
		if u, err := url.Parse(v); err != nil || u.Scheme == "" {
			return "is not a URI (like https://example.com/)"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return "is not a date like 2026-12-31"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return "is not a date and time like 2026-12-31T23:59:00Z"
		}
	}
	return ""
}

// numberProblem says what is wrong with a number for this field, or returns "".
func (fl *field) numberProblem(n float64) string {
	s := fl.schema
	if fl.kind == kindInteger && n != math.Trunc(n) {
		return "is not a whole number"
	}
	if s.Minimum != nil && n < *s.Minimum {
		return "is less than the minimum, " + formatNumber(*s.Minimum)
	}
	if s.Maximum != nil && n > *s.Maximum {
		return "is more than the maximum, " + formatNumber(*s.Maximum)
	}
	return ""
}

// number gives a number the JSON type of the field: an integer field's value is an
// int64 when it fits, so that it is written without a fraction or exponent.
func (fl *field) number(n float64) any {
	if fl.kind == kindInteger && math.Abs(n) < 1<<53 {
		return int64(n)
	}
	return n
}

func formatNumber(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }

// defaultOf decodes a property's default, or returns nil when it has none of type T.
func defaultOf[T any](s *jsonschema.Schema) *T {
	if len(s.Default) == 0 {
		return nil
	}
	var v T
	if json.Unmarshal(s.Default, &v) != nil {
		return nil
	}
	return &v
}

// content is the elicitation's content: every field that has a value.
func (o *outcome) content() map[string]any {
	c := map[string]any{}
	for fl, v := range o.values {
		if !v.omit {
			c[fl.name] = v.value
		}
	}
	return c
}

func quote(s string) string { return "\u201c" + s + "\u201d" }

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// clip cuts s to at most n characters, ending with "…" when it was cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
