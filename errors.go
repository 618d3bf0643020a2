package askuser

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of how a call ended. [Result.Err], [ApprovalResult.Err] and [ToolOutput.Err]
// wrap the one of its outcome (see [Outcome]).
var (
	ErrTimeout          = errors.New("askuser: user did not respond within timeout")
	ErrCancelled        = errors.New("askuser: session cancelled")
	ErrDeclined         = errors.New("askuser: user declined to answer")
	ErrUndelivered      = errors.New("askuser: question could not be delivered")
	ErrDisconnected     = errors.New("askuser: user disconnected before answering")
	ErrClosed           = errors.New("askuser: dispatcher closed")
	ErrInvalidArguments = errors.New("askuser: invalid ask_user_questions arguments")
	// ErrDenied: a tool call was denied, by the person or by a rule; it must not run.
	ErrDenied = errors.New("askuser: tool call denied")
)

// ArgumentsError is the error of a call refused before anything was asked: invalid
// arguments, or an id no device could answer. It lists the problems, each prefixed with
// where it is, such as "questions[1].options[0].label: must not be blank".
type ArgumentsError struct {
	Problems []string
}

func (e *ArgumentsError) Error() string {
	return fmt.Sprintf("%v: %s", ErrInvalidArguments, strings.Join(e.Problems, "; "))
}

// Is makes errors.Is(err, ErrInvalidArguments) true.
func (e *ArgumentsError) Is(target error) bool { return target == ErrInvalidArguments }

// resultError is the error of a call of [Dispatcher.RunTools] that askuser ended without
// a result (no answer, not allowed to run), as opposed to one the host's tool returned:
// it is the outcome's error, marked.
type resultError struct{ err error }

func (e *resultError) Error() string { return e.err.Error() }
func (e *resultError) Unwrap() error { return e.err }
