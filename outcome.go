package askuser

import (
	"errors"
	"fmt"

	"github.com/askuser-go/askuser/internal/jsonx"
)

// ending is one way a call can end: everything the library says of it, in one row.
type ending struct {
	outcome Outcome
	name    string // the outcome on the wire
	err     error  // the sentinel Result.Err wraps
	// content is the tool result the model reads ("" for Answered and Invalid, whose
	// results are built from the answers and the problems); its "error" text is what
	// Summary recognises.
	content string
	// summary is Summary's line, in English and in Chinese (§3.8).
	en, zh string
}

// errNoDevice marks an [Undelivered] call refused because no device was connected.
var errNoDevice = fmt.Errorf("%w: no device connected", ErrUndelivered)

// endings is the one table of outcomes, read by the dispatcher and the summarizer (their
// names on the wire are package wire's). Undelivered has two rows: the first, for errNoDevice, says the question
// was not asked; the second that it could not be delivered.
var endings = [...]ending{
	{Answered, "answered", nil, "", "", ""},
	{Declined, "declined", ErrDeclined, `{"error": "User declined to answer"}`, "Declined to answer", "用户拒绝回答"},
	{TimedOut, "timeout", ErrTimeout, `{"error": "User did not respond within timeout"}`, "No answer: timed out", "未回答:已超时"},
	{Cancelled, "cancelled", ErrCancelled, `{"error": "Session cancelled"}`, "No answer: session cancelled", "未回答:会话已取消"},
	{Undelivered, "undelivered", errNoDevice, `{"error": "No device of the user is connected; the question was not asked"}`, "Not asked: no device reached", "未提问:没有可用设备"},
	{Undelivered, "undelivered", ErrUndelivered, `{"error": "The question could not be delivered to the user"}`, "Not asked: no device reached", "未提问:没有可用设备"},
	{Disconnected, "disconnected", ErrDisconnected, `{"error": "User disconnected before answering"}`, "No answer: disconnected", "未回答:连接已断开"},
	{Shutdown, "shutdown", ErrClosed, `{"error": "The question service is shutting down"}`, "No answer: service shutting down", "未回答:服务正在关闭"},
	{Invalid, "invalid", ErrInvalidArguments, "", "", ""},
	{Approved, "approved", nil, "", "", ""},
	{Edited, "edited", nil, "", "", ""},
	{Denied, "denied", ErrDenied, "", "", ""},
}

// endingOf returns the row of outcome o, or nil for an unknown outcome. err, the call's
// error, picks between the rows of Undelivered.
func endingOf(o Outcome, err error) *ending {
	for i := range endings {
		e := &endings[i]
		if e.outcome == o && (e.err != errNoDevice || errors.Is(err, errNoDevice)) {
			return e
		}
	}
	return nil
}

// invalidMessage heads the tool result of an [Invalid] call.
const invalidMessage = "Invalid arguments for ask_user_questions; fix every problem listed and call the tool again"

// invalidResult renders the tool result of an [Invalid] call:
// {"error": "...", "problems": ["...", ...]}.
func invalidResult(problems []string) string {
	return `{"error": ` + jsonx.String(invalidMessage) + `, "problems": ` + jsonx.Strings(problems) + `}`
}
