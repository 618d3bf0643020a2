package askusertest

import (
	"context"
	"encoding/json"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wire"
)

// Questions returns the question sets pending in the session, oldest first, as devices
// are shown them: the question sets of [askuser.Dispatcher.Pending].
func Questions(d *askuser.Dispatcher, session askuser.SessionID) []wire.AskData {
	var out []wire.AskData
	for _, rec := range d.Pending(session) {
		if rec.Approval == nil {
			out = append(out, rec.Ask)
		}
	}
	return out
}

// Approvals returns the approvals pending in the session, oldest first, as devices are
// shown them: the approvals of [askuser.Dispatcher.Pending].
func Approvals(d *askuser.Dispatcher, session askuser.SessionID) []wire.ApprovalData {
	var out []wire.ApprovalData
	for _, rec := range d.Pending(session) {
		if rec.Approval != nil {
			out = append(out, *rec.Approval)
		}
	}
	return out
}

// Ask asks req in the session as a model's ask_user_questions call with the tool-call id
// id would ([askuser.Dispatcher.Dispatch]): for tests that build their questions in Go.
// A req that does not encode is asked as invalid arguments.
func Ask(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, id string, req *askuser.Request) askuser.Result {
	args, err := json.Marshal(req)
	if err != nil {
		args = []byte("null")
	}
	return d.Dispatch(ctx, askuser.ToolCall{Session: session, ID: id, Name: askuser.ToolName, Arguments: args})
}
