package askuser

import (
	"fmt"
)

// Outcome is how a call ended. Its text form is the "outcome" of [ResolvedData].
type Outcome int

const (
	// Answered: a device sent a valid answer; the result is the answers JSON.
	Answered Outcome = iota + 1
	// Declined: a device declined to answer.
	Declined
	// TimedOut: nobody answered before the timeout.
	TimedOut
	// Cancelled: the session was cancelled, or the caller's context ended.
	Cancelled
	// Undelivered: no device was connected (with [FailWithoutDevice]), or the transport
	// could not send the question.
	Undelivered
	// Disconnected: the session's last device went away (with [FailOnDisconnect]).
	Disconnected
	// Shutdown: the dispatcher was closed.
	Shutdown
	// Invalid: the model's arguments were invalid; no device was bothered.
	Invalid
)

var outcomeNames = [...]string{
	Answered:     "answered",
	Declined:     "declined",
	TimedOut:     "timeout",
	Cancelled:    "cancelled",
	Undelivered:  "undelivered",
	Disconnected: "disconnected",
	Shutdown:     "shutdown",
	Invalid:      "invalid",
}

// String returns the outcome's wire name: "answered", "declined", "timeout", "cancelled",
// "undelivered", "disconnected", "shutdown" or "invalid".
func (o Outcome) String() string {
	if o > 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// MarshalText encodes the outcome as its wire name.
func (o Outcome) MarshalText() ([]byte, error) {
	if o <= 0 || int(o) >= len(outcomeNames) {
		return nil, fmt.Errorf("askuser: unknown outcome %d", int(o))
	}
	return []byte(outcomeNames[o]), nil
}

// UnmarshalText decodes a wire name.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, name := range outcomeNames {
		if i > 0 && name == string(b) {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("askuser: unknown outcome %q", b)
}

// The tool results of the outcomes other than [Answered] and [Invalid], exactly as the
// model receives them.
const (
	ResultTimeout      = `{"error": "User did not respond within timeout"}`
	ResultCancelled    = `{"error": "Session cancelled"}`
	ResultDeclined     = `{"error": "User declined to answer"}`
	ResultNoDevice     = `{"error": "No device of the user is connected; the question was not asked"}`
	ResultSendFailed   = `{"error": "The question could not be delivered to the user"}`
	ResultDisconnected = `{"error": "User disconnected before answering"}`
	ResultShutdown     = `{"error": "The question service is shutting down"}`
)

// invalidMessage heads the tool result of an [Invalid] call.
const invalidMessage = "Invalid arguments for ask_user_questions; fix every problem listed and call the tool again"

// invalidResult renders the tool result of an [Invalid] call:
// {"error": "...", "problems": ["...", ...]}.
func invalidResult(problems []string) string {
	b := make([]byte, 0, 160+16*len(problems))
	b = append(b, `{"error": `...)
	b = appendJSONString(b, invalidMessage)
	b = append(b, `, "problems": `...)
	if problems == nil {
		problems = []string{}
	}
	b = appendStrings(b, problems)
	return string(append(b, '}'))
}
