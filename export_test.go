package askuser

import (
	"encoding/json"

	"github.com/askuser-go/askuser/internal/jsonx"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// Internals the external tests (package askuser_test) use.
var (
	InvalidResult  = invalidResult
	ValidateOutput = validateOutput
	CheckNoLeak    = checkNoLeak
)

// ErrorCodeOf is the code an error event carries for err.
func ErrorCodeOf(err error) string {
	var data wire.ErrorData
	_ = json.Unmarshal(wire.ErrorEvent(SessionID{}, "", err).Data, &data)
	return data.Code
}

// The tool results of the outcomes, as the model reads them.
var (
	ResultDeclined     = endingOf(Declined, nil).content
	ResultTimeout      = endingOf(TimedOut, nil).content
	ResultCancelled    = endingOf(Cancelled, nil).content
	ResultNoDevice     = endingOf(Undelivered, errNoDevice).content
	ResultSendFailed   = endingOf(Undelivered, nil).content
	ResultDisconnected = endingOf(Disconnected, nil).content
	ResultShutdown     = endingOf(Shutdown, nil).content
)

// Response is the tool's output when the person answered.
type Response = response

// Marshal encodes as the library's reference for types it has no encoder of.
var Marshal = jsonx.Marshal

// InvalidMessage heads the tool result of an Invalid call.
const InvalidMessage = invalidMessage

// PendingLen returns the number of requests pending in the dispatcher's own store.
func (d *Dispatcher) PendingLen() int { return d.own.len() }

// NewMemStore returns the default store, in memory, for its conformance test.
func NewMemStore() store.Store { return newMemStore() }

// SchemaCheck validates arguments against a tool's JSON Schema.
var SchemaCheck = schemaCheck

// CheckAnswers validates answers against the questions they answer.
var CheckAnswers = checkAnswers
