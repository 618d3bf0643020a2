package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonx"
)

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
	// EventVisibility is sent by a device when its page becomes hidden or visible again,
	// with the data {"visible": true|false}, so that its transport knows whether anyone
	// is looking (see [Attention]). A device that never sends it counts as visible while
	// connected. Transports take it; the dispatcher does not.
	EventVisibility = "device_visibility"
)

// AskData is the data of an [EventAsk]: one pending question set.
type AskData struct {
	RequestID string          `json:"requestId"`
	Questions []Question      `json:"questions"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	// ExpiresAt is when the question times out, so that a client can show a countdown.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// AskedAt is when the question set was asked, and SessionTitle what the host calls
	// its session (askuser.Options.SessionTitle): what a person's inbox lists it by.
	AskedAt      time.Time `json:"askedAt,omitzero"`
	SessionTitle string    `json:"sessionTitle,omitempty"`
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
	// Code is a stable machine-readable reason: "invalid_answer", "not_pending",
	// "malformed_event", "unsupported_event", "forbidden", "not_approver", or "internal"
	// for anything else (docs/PROTOCOL.md says when each is sent).
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
	return []byte(jsonx.String(s.id)), nil
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
		return SessionID{}, fmt.Sprintf("sessionId: must be an integer or a string, not %s", jsonx.TruncateBytes(string(b), 40))
	}
	what := "invalid JSON"
	if json.Valid(b) {
		what = jsonx.Article(jsonx.Kind(b))
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
	// User is who sent an inbound event: the principal the transport authenticated the
	// device as (a user id), recorded as who decided an approval. The transport sets it,
	// as it sets SessionID; it is never read from, nor written to, the wire.
	User string `json:"-"`
	// Groups are the groups the transport says User belongs to, for approvals whose
	// approvers name groups. Set by the transport with User; never read from, nor
	// written to, the wire.
	Groups []string `json:"-"`
	// Via says how an inbound event came, set by the transport: "" from a device's own
	// connection, "link" from an answer or action link (see package notify). It is
	// recorded with a decision, and never read from, nor written to, the wire.
	Via string `json:"-"`

	// requestID is what RequestID returns when known is set: the request id of the
	// data NewEvent encoded, so that transports, which call RequestID for every event
	// they pass on, need not decode it again.
	requestID string
	known     bool
	// value is the data NewEvent encoded, for Value, while Type and Data are still those
	// NewEvent made: typ, and the slice whose first byte is at data, of length n.
	value any
	typ   string
	data  *byte
	n     int
}

// Value returns the data [NewEvent] encoded into the event's Data (an [ApprovalData],
// say, or a pointer to one, as given to NewEvent), so that a transport in the same
// process reads it without decoding Data again. It returns nil for an event parsed from
// the wire or built otherwise, and for one whose Type or Data was changed since NewEvent
// made it. The value is shared with whoever made the event and must not be modified.
func (e Event) Value() any {
	if e.value == nil || e.Type != e.typ || len(e.Data) != e.n || e.n == 0 || &e.Data[0] != e.data {
		return nil
	}
	return e.value
}

// requestNamer is implemented by the data types of the protocol, which name a request.
type requestNamer interface{ requestID() string }

func (a AskData) requestID() string              { return a.RequestID }
func (r ResultData) requestID() string           { return r.RequestID }
func (r ResolvedData) requestID() string         { return r.RequestID }
func (e ErrorData) requestID() string            { return e.RequestID }
func (a ApprovalData) requestID() string         { return a.RequestID }
func (r ApprovalResultData) requestID() string   { return r.RequestID }
func (r ApprovalResolvedData) requestID() string { return r.RequestID }
func (p ApprovalProgressData) requestID() string { return p.RequestID }

// NewEvent returns an event of the given type whose data is v encoded with
// encoding/json, <, > and & written as themselves, and any invalid UTF-8 in JSON that v
// passes through as it is (a [json.RawMessage]) replaced by U+FFFD.
func NewEvent(typ string, session SessionID, v any) (Event, error) {
	data, err := jsonx.Marshal(v)
	if err != nil {
		return Event{}, fmt.Errorf("askuser: encoding %s data: %w", typ, err)
	}
	ev := Event{Type: typ, SessionID: session, Data: data}
	if len(data) > 0 {
		ev.value, ev.typ, ev.data, ev.n = v, typ, &data[0], len(data)
	}
	if r, ok := v.(requestNamer); ok && string(data) != "null" { // null: a nil pointer
		ev.requestID, ev.known = r.requestID(), true
		if !utf8.ValidString(ev.requestID) {
			ev.requestID = string(jsonx.ValidUTF8([]byte(ev.requestID))) // as the data spells it
		}
	}
	return ev, nil
}

// Encode returns the event's wire form, which is what every transport sends: compact
// JSON, encoded as [NewEvent] encodes data. Data may be any JSON; invalid Data is an
// error.
func (e Event) Encode() ([]byte, error) {
	b, err := jsonx.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("askuser: encoding %s event: data is not valid JSON: %s", jsonx.Truncate(e.Type, 64), jsonx.SyntaxProblem(e.Data))
	}
	return b, nil
}

// RequestID returns the "requestId" the event's data names, or "" when it names none or
// the data is not a JSON object. Transports call it for every ask and resolution they
// pass on, and to tell which request a device's event is about.
func (e Event) RequestID() string {
	if e.known {
		return e.requestID
	}
	// encoding/json matches the name in any case, and the last of a repeated name wins:
	// an event that spells it otherwise is refused by the dispatcher (unknown field), so
	// the two never differ on an event that is taken.
	var data struct {
		RequestID string `json:"requestId"`
	}
	if json.Unmarshal(e.Data, &data) != nil {
		return ""
	}
	return data.RequestID
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
	m, problem := jsonx.DecodeObject(msg)
	switch {
	case strings.HasPrefix(problem, "not valid JSON"):
		return Event{}, problem
	case problem != "":
		return Event{}, "an event is a JSON object, " + problem
	}
	if name := jsonx.UnknownName(m, "type", "sessionId", "data"); name != "" {
		return Event{}, jsonx.Truncate(name, 40) + ": unknown field; the fields of an event are type, sessionId and data"
	}
	var n struct {
		Type      jsonx.Given `json:"type"`
		SessionID jsonx.Given `json:"sessionId"`
		Data      jsonx.Given `json:"data"`
	}
	_ = json.Unmarshal(msg, &n)
	for _, f := range [...]struct {
		name  string
		count jsonx.Given
	}{{"type", n.Type}, {"sessionId", n.SessionID}, {"data", n.Data}} {
		if f.count > 1 {
			return Event{}, f.name + ": given twice; give each field once"
		}
	}
	var ev Event
	if raw, ok := m["type"]; ok {
		if jsonx.Kind(raw) != "string" {
			return Event{}, "type: must be a string, not " + jsonx.Article(jsonx.Kind(raw))
		}
		_ = json.Unmarshal(raw, &ev.Type)
	}
	if raw, ok := m["sessionId"]; ok && string(raw) != "null" {
		if ev.SessionID, problem = sessionIDFromJSON(raw); problem != "" {
			return Event{}, problem
		}
	}
	if raw := m["data"]; string(raw) != "null" {
		ev.Data = raw
	}
	if ev.Type == "" {
		return Event{}, `type: missing; every event has a non-empty "type"`
	}
	return ev, ""
}

// maxErrorMessage bounds the message of an error event, in bytes.
const maxErrorMessage = 512

// ErrorEvent builds the [EventError] that tells a device why its event was refused.
// requestID names the question concerned, when known; an [*AnswerError] supplies its own,
// and its problems go in the problems list, not again in the message. Whatever the device
// sent, the event stays small: the message and the request id are cut short, and an
// answer's problems are at most a handful (five, then how many more there were).
func ErrorEvent(session SessionID, requestID string, err error) Event {
	data := ErrorData{RequestID: requestID, Code: ErrorCode(err), Message: err.Error()}
	if ae, ok := errors.AsType[*AnswerError](err); ok {
		data.RequestID = ae.RequestID
		data.Message = fmt.Sprintf("%v for request %q; see problems", ErrInvalidAnswer, jsonx.TruncateBytes(ae.RequestID, 128))
		data.Problems = ae.Problems
	}
	data.RequestID = jsonx.TruncateBytes(data.RequestID, 128)
	if len(data.Message) > maxErrorMessage {
		data.Message = jsonx.TruncateBytes(data.Message, maxErrorMessage-3) + "…"
	}
	ev, _ := NewEvent(EventError, session, data) // ErrorData always encodes
	return ev
}
