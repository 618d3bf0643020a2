// Package askuser lets an LLM agent stop mid-task and ask a person 1–4 structured
// questions, through the tool ask_user_questions, on any of the person's devices; the
// person's answer, or why there is none, becomes the tool result the agent loop goes on
// with.
//
// A host does five things:
//
//   - Advertise the tool: [Definition] gives its name, description and JSON Schemas;
//     [DefinitionFor] the same in a model API's own dialect.
//   - Dispatch its calls: [New] makes a [Dispatcher]; [Dispatcher.Dispatch] takes each
//     ask_user_questions call ([ToolCall]) and returns its [Result], whose Content is the
//     tool result for the model. [Dispatcher.RunTools] plugs it into an existing tool
//     dispatcher.
//   - Carry events: a [wire.Transport] sends the question to every device of the session
//     (package wshub is one, for browsers), and gives what devices send to
//     Dispatcher.HandleEvent. The wire protocol is the [wire.Event] envelope.
//   - Cancel: [Dispatcher.CancelSession] when the person stops the run,
//     [Dispatcher.Close] on shutdown.
//   - Summarise: [Summary] and [Transcript] render a finished call for a UI or a history.
//
// In a few lines:
//
//	d := askuser.New(hub, nil) // hub: a wshub.Hub; New binds it to d
//	res := d.Dispatch(ctx, askuser.ToolCall{
//		Session:   askuser.IntSession(123), // whose devices to ask
//		ID:        toolCallID,              // the model's tool-call id
//		Arguments: arguments,               // exactly as the model emitted them
//	})
//	appendToolResult(toolCallID, res.Content, res.IsError())
//
// Dispatch returns at the first of: a valid answer from any device of the session, a
// decline, the timeout, a cancel, the caller's context, or Close; every device is told
// how the question ended. The pending questions live in a [store.Store]: in memory by default,
// or shared by several replicas (the cluster module puts them on NATS JetStream).
package askuser

// Reading the source: a question goes from tool call to tool result through these files,
// in this order.
//
//  1. askuser.go: what the model asks (Request, Question) and what the person answers.
//  2. schema.go, fields.go, accepted.go, problems.go: the model's arguments parsed and
//     checked (ParseArguments), and the problems the model reads when they are wrong.
//  3. dispatcher.go: Options and New; Dispatch, which makes the request and renders its
//     end as the tool result; HandleEvent, where a device's answer comes in;
//     CancelSession, Disconnected, Close.
//  4. lifecycle.go: one request's life, with its locking rules: recorded, sent to the
//     devices, waited for, ended by the first answer, timeout or cancel, resumed.
//  5. store.go, memstore.go: the Record, the Store contract, and the default store.
//  6. transport.go, event.go: how events reach devices and come back; the wire events.
//  7. answer.go: a device's answers checked against the questions.
//  8. outcome.go, errors.go: how a call can end, what the model reads for each, and the
//     errors a host branches on.
//
// An approval of a host's own tool call lives the same life (lifecycle.go); it is asked
// in gate.go (Approve, and the gate of Wrap, with the device's decision), its events and
// results are in approval.go, its rules in policy.go. Around the core: observer.go,
// notifier.go, turn.go (RunTools), dialect.go (the definition for each provider),
// summarizer.go, json.go.

import (
	"encoding/json"
	"time"
)

// ToolName is the name the model calls the tool by.
const ToolName = "ask_user_questions"

// Defaults of [Options].
const (
	defaultMaxCustomInput = 4000
	defaultTimeout        = 5 * time.Minute
)

// Request is the tool's input: what the model asks. Build one with [ParseArguments] from
// the model's arguments, or directly in Go and check it with [Request.Validate].
type Request struct {
	Questions []Question `json:"questions"`
	// Metadata is the model's optional tracking object, passed to devices untouched.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// response is the tool's output when the person answered: {"answers":[...]}, one answer
// per question, in the order the questions were asked. Its schema is schema/output.json.
type response struct {
	Answers []Answer `json:"answers"`
}
