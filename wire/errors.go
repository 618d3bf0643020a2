package wire

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of a device's event, which a dispatcher's Inbound and transports return, and
// which [ErrorEvent] turns into the event that tells the device.
var (
	// ErrNotPending: no question with that requestId is pending for the session: it never
	// existed, belongs to another session, or has already ended (answered first elsewhere,
	// timed out, cancelled).
	ErrNotPending = errors.New("askuser: no such pending question")
	// ErrInvalidAnswer is matched by every [*AnswerError].
	ErrInvalidAnswer = errors.New("askuser: invalid answer")
	// ErrMalformedEvent: an inbound message that is not a well-formed event.
	ErrMalformedEvent = errors.New("askuser: malformed event")
	// ErrUnsupportedEvent: an inbound event of a type its receiver does not take.
	ErrUnsupportedEvent = errors.New("askuser: unsupported event type")
	// ErrForbidden: a device acted for a session it is not authorized for. Transports
	// return it.
	ErrForbidden = errors.New("askuser: not authorized for this session")
	// ErrNotApprover: a decision on an approval from someone its approvers do not name
	// (by user, or by a group the transport gave). It changes nothing: the approval
	// stays pending for its approvers.
	ErrNotApprover = errors.New("askuser: not an approver of this tool call")
)

// ErrTransportClosed is what a transport returns once it is closed.
var ErrTransportClosed = errors.New("askuser: transport closed")

// AnswerError is the error of a refused answer: the question stays open, and the device
// that sent it should be told (see [ErrorEvent]). Problems lists at most a handful, the
// last saying how many more there were.
type AnswerError struct {
	RequestID string
	Problems  []string
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("%v for request %q: %s", ErrInvalidAnswer, e.RequestID, strings.Join(e.Problems, "; "))
}

// Is makes errors.Is(err, ErrInvalidAnswer) true.
func (e *AnswerError) Is(target error) bool { return target == ErrInvalidAnswer }

// deviceErrors gives the code of an error event for each error a device's event can get;
// ErrorCode reads it, and anything else is "internal".
var deviceErrors = [...]struct {
	err  error
	code string
}{
	{ErrInvalidAnswer, "invalid_answer"},
	{ErrNotPending, "not_pending"},
	{ErrMalformedEvent, "malformed_event"},
	{ErrUnsupportedEvent, "unsupported_event"},
	{ErrForbidden, "forbidden"},
	{ErrNotApprover, "not_approver"},
}

// ErrorCode returns the code of the error event that tells a device its event was
// refused with err ([ErrorData.Code]): "invalid_answer", "not_pending",
// "malformed_event", "unsupported_event", "forbidden", "not_approver", or "internal".
func ErrorCode(err error) string {
	for _, d := range deviceErrors {
		if errors.Is(err, d.err) {
			return d.code
		}
	}
	return "internal"
}
