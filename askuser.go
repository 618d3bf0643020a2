// Package askuser lets an LLM agent stop mid-task and ask a person 1–4 structured
// questions through the tool ask_user_questions, and turns the person's answer (or a
// timeout, a decline, a cancelled session) into the tool result the agent loop goes on with.
//
// A host wires it in with three pieces: the tool definition ([Definition]) it advertises to
// the model, a [Dispatcher] that it hands every ask_user_questions call to, and a
// [Transport] that carries events to the person's devices and whose inbound events it feeds
// back through [Dispatcher.HandleEvent]:
//
//	d := askuser.New(transport, nil)                // 5-minute timeout by default
//	res := d.Dispatch(ctx, askuser.ToolCall{
//		Session:   askuser.IntSession(123),
//		ID:        toolCallID,                        // the model's tool-call id, or ""
//		Arguments: arguments,                         // exactly as the model emitted them
//	})
//	appendToolResult(toolCallID, res.Content)        // what the model reads next
//
// Dispatch blocks until the first of: a valid answer from any device of the session, a
// decline, the timeout, [Dispatcher.CancelSession], the caller's context, or
// [Dispatcher.Close]. Every way out removes the pending question and tells every device of
// the session how it ended with an ask_user_questions_resolved event.
//
// The wire protocol is the envelope {"type","sessionId","data"} ([Event]) with the events
// ask_user_questions, ask_user_questions_result, ask_user_questions_resolved and
// ask_user_questions_error; docs/PROTOCOL.md describes each one.
package askuser

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// ToolName is the name the model calls the tool by.
const ToolName = "ask_user_questions"

// Event types of the wire protocol.
const (
	// EventAsk is sent to every device of a session when a question set is asked, and to a
	// device that connects while it is pending. Its data is an [AskData].
	EventAsk = "ask_user_questions"
	// EventResult is sent by a device to answer or decline. Its data is a [ResultData].
	EventResult = "ask_user_questions_result"
	// EventResolved is sent to every device of a session when a question set ends, however it
	// ends, so that every device clears its panel. Its data is a [ResolvedData].
	EventResolved = "ask_user_questions_resolved"
	// EventError is sent to the one device whose inbound event was refused. Its data is an
	// [ErrorData].
	EventError = "ask_user_questions_error"
)

// Limits of the library, applied to the model's arguments and to devices' answers.
const (
	MinQuestions    = 1
	MaxQuestions    = 4
	MinOptions      = 2
	MaxOptions      = 4
	MaxHeaderLength = 12 // characters (runes), not bytes

	// MaxArgumentsBytes bounds the model's arguments as received.
	MaxArgumentsBytes = 256 << 10
	// DefaultMaxCustomInput is the default bound, in characters, of an answer's free text.
	DefaultMaxCustomInput = 4000
	// DefaultTimeout is how long a question waits for the person unless [Options] says otherwise.
	DefaultTimeout = 5 * time.Minute
)

// Option is one choice of a [Question].
type Option struct {
	// Label is the display text, also what an answer names in selectedLabels.
	Label string `json:"label"`
	// Description explains what choosing this option means.
	Description string `json:"description"`
	// Preview is optional markdown shown in a monospace box beside a single-select question.
	Preview string `json:"preview,omitempty"`
}

// Question is one question of a call; a call asks 1 to 4 of them at once.
type Question struct {
	// Question is the complete question; it identifies the question within its call.
	Question string `json:"question"`
	// Header is a very short label (at most 12 characters) shown as a chip.
	Header string `json:"header"`
	// Options are the 2 to 4 choices; the client always adds its own free-text "Other".
	Options []Option `json:"options"`
	// MultiSelect allows several options to be chosen.
	MultiSelect bool `json:"multiSelect"`
}

// Request is the tool's input: what the model asks. Build one with [ParseArguments] from
// the model's arguments, or directly in Go and check it with [Request.Validate].
type Request struct {
	Questions []Question `json:"questions"`
	// Metadata is the model's optional tracking object, passed to devices untouched.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// Answer is the person's answer to one question.
type Answer struct {
	// Question is the text of the question answered, exactly as asked.
	Question string `json:"question"`
	// SelectedLabels are the labels of the chosen options: at most one for a
	// single-select question. Never nil in a validated answer.
	SelectedLabels []string `json:"selectedLabels"`
	// CustomInput is the "Other" free text, or nil when none was typed.
	CustomInput *string `json:"customInput"`
}

// Response is the tool's output when the person answered: {"answers":[...]}, one answer
// per question, in the order the questions were asked.
type Response struct {
	Answers []Answer `json:"answers"`
}

// AskData is the data of an [EventAsk]: one pending question set.
type AskData struct {
	RequestID string          `json:"requestId"`
	Questions []Question      `json:"questions"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	// ExpiresAt is when the question times out, so that a client can show a countdown.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

// clone returns a copy of a that shares nothing mutable with it.
func (a AskData) clone() AskData {
	a.Metadata = bytes.Clone(a.Metadata)
	if a.Questions != nil {
		qs := make([]Question, len(a.Questions))
		for i, q := range a.Questions {
			q.Options = slices.Clone(q.Options)
			qs[i] = q
		}
		a.Questions = qs
	}
	return a
}

// ResultData is the data of an [EventResult]: a device's answers, or its decline.
type ResultData struct {
	RequestID string   `json:"requestId"`
	Answers   []Answer `json:"answers,omitempty"`
	// Declined, when true, declines the whole question set; Answers must then be empty.
	Declined bool `json:"declined,omitempty"`
}

// ResolvedData is the data of an [EventResolved].
type ResolvedData struct {
	RequestID string  `json:"requestId"`
	Outcome   Outcome `json:"outcome"`
	// Answers are the accepted answers when Outcome is [Answered], as the model gets
	// them, so that every device can say what was chosen; empty otherwise.
	Answers []Answer `json:"answers,omitempty"`
}

// ErrorData is the data of an [EventError], sent to the device whose event was refused.
type ErrorData struct {
	// RequestID names the question the refused event was about, when it named one.
	RequestID string `json:"requestId,omitempty"`
	// Code is a stable machine-readable reason: see [ErrorCode].
	Code string `json:"code"`
	// Message is a human-readable reason.
	Message string `json:"message"`
	// Problems lists every problem of a refused answer, each with where it is.
	Problems []string `json:"problems,omitempty"`
}

// SessionID identifies a session: a conversation whose devices all see its questions.
//
// On the wire a session id is a JSON number (as in the original design) or a JSON string;
// a SessionID remembers which, so that events go back out in the form they came in.
// SessionID is comparable and can be a map key. The numeric session 123 and the string
// session "123" are different sessions.
type SessionID struct {
	id      string
	numeric bool
}

// IntSession returns the numeric session id n.
func IntSession(n int64) SessionID {
	return SessionID{id: strconv.FormatInt(n, 10), numeric: true}
}

// StringSession returns the string session id s.
func StringSession(s string) SessionID { return SessionID{id: s} }

// ParseSessionID parses s as a numeric session id when it is a decimal integer, and as a
// string session id otherwise. It suits ids taken from a URL, where the type is lost.
func ParseSessionID(s string) SessionID {
	if isInteger(s) {
		return SessionID{id: s, numeric: true}
	}
	return SessionID{id: s}
}

// String returns the id's text, without quotes.
func (s SessionID) String() string { return s.id }

// IsNumeric reports whether the id is a JSON number on the wire.
func (s SessionID) IsNumeric() bool { return s.numeric }

// IsZero reports whether s is the zero SessionID (the empty string id).
func (s SessionID) IsZero() bool { return s == SessionID{} }

// MarshalJSON writes the id as a JSON number or string, as it was made.
func (s SessionID) MarshalJSON() ([]byte, error) {
	if s.numeric {
		return []byte(s.id), nil
	}
	return appendJSONString(nil, s.id), nil
}

// UnmarshalJSON reads a JSON integer or string. Fractions, exponents, -0 and other JSON
// types are refused.
func (s *SessionID) UnmarshalJSON(b []byte) error {
	id, problem := sessionIDFromJSON(bytes.TrimSpace(b))
	if problem != "" {
		return fmt.Errorf("%w: %s", ErrMalformedEvent, problem)
	}
	*s = id
	return nil
}

// sessionIDFromJSON reads a session id from its JSON text, or says what is wrong with it.
func sessionIDFromJSON(b []byte) (SessionID, string) {
	if len(b) > 0 && b[0] == '"' {
		var str string
		if json.Unmarshal(b, &str) != nil {
			return SessionID{}, "sessionId: not a valid JSON string"
		}
		return SessionID{id: str}, ""
	}
	if isInteger(string(b)) {
		return SessionID{id: string(b), numeric: true}, ""
	}
	if string(b) == "-0" {
		return SessionID{}, "sessionId: -0 is not a session id; send 0"
	}
	if len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
		return SessionID{}, fmt.Sprintf("sessionId: must be an integer or a string, not %s", truncateBytes(string(b), 40))
	}
	what := "invalid JSON"
	if v, err := decodeJSON(b); err == nil {
		what = article(jsonTypeName(v))
	}
	return SessionID{}, "sessionId: must be an integer or a string, not " + what
}

// isInteger reports whether s is a canonical JSON integer of at most 40 digits:
// -?(0|[1-9][0-9]*), but not -0, which would be a second spelling of 0.
func isInteger(s string) bool {
	neg := s != "" && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if s == "" || len(s) > 40 || (len(s) > 1 && s[0] == '0') || neg && s == "0" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Event is the wire envelope {"type","sessionId","data"} of every event in both directions.
type Event struct {
	Type      string          `json:"type"`
	SessionID SessionID       `json:"sessionId"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// NewEvent returns an event of the given type whose data is v encoded as JSON. The data
// types of the protocol ([AskData], [ResultData], [ResolvedData], [ErrorData]) are
// written in the library's one spelling, the same on every Go release: strings escape
// only what JSON requires plus U+2028 and U+2029, and invalid UTF-8 becomes U+FFFD. Any
// other v is encoded with encoding/json.
func NewEvent(typ string, session SessionID, v any) (Event, error) {
	var data []byte
	var err error
	switch a := v.(type) {
	case AskData: // the largest event, sent for every question: encoded without reflection
		data, err = encodeAskData(&a)
	case *AskData:
		data, err = encodeAskData(a)
	case ResolvedData: // sent for every question too
		data, err = encodeResolvedData(a)
	case ResultData:
		data = encodeResultData(&a)
	case ErrorData:
		data = encodeErrorData(&a)
	default:
		data, err = marshal(v)
	}
	if err != nil {
		return Event{}, fmt.Errorf("askuser: encoding %s data: %w", typ, err)
	}
	return Event{Type: typ, SessionID: session, Data: data}, nil
}

// Encode returns the event's wire form, which is what every transport sends: compact
// JSON, with the envelope's strings in the library's spelling (see [NewEvent]). Data may
// be any JSON: it is checked and compacted, its strings copied as they are; invalid Data
// is an error.
func (e Event) Encode() ([]byte, error) {
	b := make([]byte, 0, len(e.Type)+len(e.SessionID.id)+len(e.Data)+40)
	b = append(b, `{"type":`...)
	b = appendJSONString(b, e.Type)
	b = append(b, `,"sessionId":`...)
	if e.SessionID.numeric {
		b = append(b, e.SessionID.id...)
	} else {
		b = appendJSONString(b, e.SessionID.id)
	}
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		var problem string
		if b, problem = appendCompactJSON(b, e.Data); problem != "" {
			return nil, fmt.Errorf("askuser: encoding %s event: data is not valid JSON: %s", truncate(e.Type, 64), problem)
		}
	}
	return append(b, '}'), nil
}

// RequestID returns the "requestId" the event's data names, or "" when it names none or
// the data is not an object. Ids longer than 128 bytes are cut there, without splitting
// a character: the result is for error reports and logs.
func (e Event) RequestID() string {
	var v struct {
		RequestID string `json:"requestId"`
	}
	if json.Unmarshal(e.Data, &v) != nil {
		return ""
	}
	return truncateBytes(v.RequestID, 128)
}

// truncateBytes cuts s to at most n bytes without splitting a character.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// maxEventBytes bounds an inbound event: the largest answer a device can send with every
// free text at its limit, with room to spare.
const maxEventBytes = 1 << 20

// ParseEvent decodes one inbound message. It refuses, with an error wrapping
// [ErrMalformedEvent] that says what is wrong in the library's own words, anything that
// is not a JSON object with a non-empty string "type", an integer or string "sessionId"
// (it may be absent), and optional "data". Unknown top-level names, and names given
// twice, are refused too. A "data" of null is no data.
func ParseEvent(msg []byte) (Event, error) {
	if len(msg) > maxEventBytes {
		return Event{}, fmt.Errorf("%w: message of %d bytes exceeds %d", ErrMalformedEvent, len(msg), maxEventBytes)
	}
	ev, problem := parseEnvelope(msg)
	if problem != "" {
		return Event{}, fmt.Errorf("%w: %s", ErrMalformedEvent, problem)
	}
	return ev, nil
}

// parseEnvelope reads {"type","sessionId","data"} or says what is wrong with it.
func parseEnvelope(msg []byte) (Event, string) {
	if len(bytes.TrimSpace(msg)) == 0 {
		return Event{}, "empty message; an event is a JSON object"
	}
	if problem := jsonSyntaxError(msg); problem != "" {
		return Event{}, "not valid JSON: " + problem
	}
	// From here msg is one valid JSON value, so the walk below need not check syntax.
	w := jsonWalker{b: msg}
	w.space()
	if w.b[w.i] != '{' {
		return Event{}, "an event is a JSON object, not " + w.kind()
	}
	var ev Event
	var seen [3]bool // type, sessionId, data
	var problem string
	w.members(func(name string) bool {
		start := w.i
		w.skip()
		raw := msg[start:w.i]
		var i int
		switch name {
		case "type":
			i = 0
			if raw[0] != '"' {
				problem = "type: must be a string, not " + (&jsonWalker{b: raw}).kind()
				return false
			}
			ev.Type = unquote(raw)
		case "sessionId":
			i = 1
			if string(raw) != "null" {
				ev.SessionID, problem = sessionIDFromJSON(raw)
			}
		case "data":
			i = 2
			if string(raw) != "null" {
				ev.Data = raw
			}
		default:
			problem = truncate(name, 40) + ": unknown field; the fields of an event are type, sessionId and data"
			return false
		}
		if seen[i] {
			problem = name + ": given twice; give each field once"
		}
		seen[i] = true
		return problem == ""
	})
	if problem != "" {
		return Event{}, problem
	}
	if ev.Type == "" {
		return Event{}, `type: missing; every event has a non-empty "type"`
	}
	return ev, ""
}

// sortedNames returns the member names of obj in order, so that the first problem
// reported is the same on every run.
func sortedNames(obj map[string]any) []string {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// marshal encodes v as compact JSON without escaping <, > and &, which models and people
// read better as they are.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Errors a caller may branch on with errors.Is. A [Result] carries one of the first group
// in its Err field; [Dispatcher.HandleEvent] returns the second group.
var (
	ErrTimeout          = errors.New("askuser: user did not respond within timeout")
	ErrCancelled        = errors.New("askuser: session cancelled")
	ErrDeclined         = errors.New("askuser: user declined to answer")
	ErrUndelivered      = errors.New("askuser: question could not be delivered")
	ErrDisconnected     = errors.New("askuser: user disconnected before answering")
	ErrClosed           = errors.New("askuser: dispatcher closed")
	ErrInvalidArguments = errors.New("askuser: invalid ask_user_questions arguments")

	// ErrNotPending: no question with that requestId is pending for the session: it never
	// existed, belongs to another session, or has already ended (answered first elsewhere,
	// timed out, cancelled).
	ErrNotPending = errors.New("askuser: no such pending question")
	// ErrInvalidAnswer is matched by every [*AnswerError].
	ErrInvalidAnswer = errors.New("askuser: invalid answer")
	// ErrMalformedEvent: an inbound message that is not a well-formed event.
	ErrMalformedEvent = errors.New("askuser: malformed event")
	// ErrUnsupportedEvent: an inbound event of a type the dispatcher does not take.
	ErrUnsupportedEvent = errors.New("askuser: unsupported event type")
)

// ArgumentsError is the error of a call whose arguments were invalid. It lists every
// problem found, each prefixed with where it is, such as
// "questions[1].options[0].label: must not be blank".
type ArgumentsError struct {
	Problems []string
}

func (e *ArgumentsError) Error() string {
	return fmt.Sprintf("%v: %s", ErrInvalidArguments, joinProblems(e.Problems))
}

// Is makes errors.Is(err, ErrInvalidArguments) true.
func (e *ArgumentsError) Is(target error) bool { return target == ErrInvalidArguments }

// AnswerError is the error of a refused answer: the question stays open, and the device
// that sent it should be told (see [ErrorEvent]).
type AnswerError struct {
	RequestID string
	Problems  []string
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("%v for request %q: %s", ErrInvalidAnswer, e.RequestID, joinProblems(e.Problems))
}

// Is makes errors.Is(err, ErrInvalidAnswer) true.
func (e *AnswerError) Is(target error) bool { return target == ErrInvalidAnswer }

func joinProblems(problems []string) string {
	var b bytes.Buffer
	for i, p := range problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p)
	}
	return b.String()
}

// Error codes of [ErrorData], as returned by [ErrorCode].
const (
	CodeInvalidAnswer    = "invalid_answer"
	CodeNotPending       = "not_pending"
	CodeMalformedEvent   = "malformed_event"
	CodeUnsupportedEvent = "unsupported_event"
	CodeForbidden        = "forbidden"
	CodeInternal         = "internal"
)

// ErrForbidden is what a transport returns (and reports with [ErrorEvent]) when a device
// acts for a session it is not authorized for.
var ErrForbidden = errors.New("askuser: not authorized for this session")

// ErrorCode returns the [ErrorData] code for an error returned by [ParseEvent] or
// [Dispatcher.HandleEvent].
func ErrorCode(err error) string {
	switch {
	case errors.Is(err, ErrInvalidAnswer):
		return CodeInvalidAnswer
	case errors.Is(err, ErrNotPending):
		return CodeNotPending
	case errors.Is(err, ErrMalformedEvent):
		return CodeMalformedEvent
	case errors.Is(err, ErrUnsupportedEvent):
		return CodeUnsupportedEvent
	case errors.Is(err, ErrForbidden):
		return CodeForbidden
	default:
		return CodeInternal
	}
}

// maxErrorMessage bounds the message of an error event, in bytes.
const maxErrorMessage = 512

// ErrorEvent builds the [EventError] that tells a device why its event was refused.
// requestID names the question concerned, when known; an [*AnswerError] supplies its own,
// and its problems go in the problems list, not again in the message. Whatever the device
// sent, the event stays small: the message and the request id are cut short, and an
// answer's problems are at most a handful (see [CheckAnswers]).
func ErrorEvent(session SessionID, requestID string, err error) Event {
	data := ErrorData{RequestID: requestID, Code: ErrorCode(err), Message: err.Error()}
	if ae, ok := errors.AsType[*AnswerError](err); ok {
		data.RequestID = ae.RequestID
		data.Message = fmt.Sprintf("%v for request %q; see problems", ErrInvalidAnswer, truncateBytes(ae.RequestID, 128))
		data.Problems = ae.Problems
	}
	data.RequestID = truncateBytes(data.RequestID, 128)
	if len(data.Message) > maxErrorMessage {
		data.Message = truncateBytes(data.Message, maxErrorMessage-3) + "…"
	}
	return Event{Type: EventError, SessionID: session, Data: encodeErrorData(&data)}
}
