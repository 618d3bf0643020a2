// Package askuser lets an LLM agent stop mid-task and ask a person: 1–4 structured
// questions, through the tool ask_user_questions, or the person's approval of one of the
// host's own tool calls; on any of the person's devices. The person's answer or
// decision, or why there is none, becomes the tool result the agent loop goes on with.
//
// A host does five things:
//
//   - Advertise the tool: [Definition]() gives its name, description and JSON Schemas;
//     Definition(dialect) the same in a model API's own dialect ([Dialect]).
//   - Run its calls: [New] makes a [Dispatcher]; [Dispatcher.Dispatch] takes each
//     ask_user_questions call ([ToolCall]) and returns its [Result], whose Content is the
//     tool result for the model. [Dispatcher.RunTools] runs a whole turn of tool calls,
//     the host's own gated by [Options.Policy] ([Dispatcher.Approve]).
//   - Reach devices: a transport sends each request to every device of the session and
//     brings back their answers (package wshub is one, for browsers and terminals; New
//     binds it). Package wire is the protocol, for those who write a transport.
//   - Cancel: [Dispatcher.CancelSession] when the person stops the run,
//     [Dispatcher.Close] on shutdown.
//   - Summarise: [Summary] and [Transcript] render a finished call for a UI or a history.
//
// In a few lines:
//
//	d := askuser.New(hub, nil) // hub: a wshub.Hub
//	res := d.Dispatch(ctx, askuser.ToolCall{
//		Session:   askuser.IntSession(123), // whose devices to ask
//		ID:        toolCallID,              // the model's tool-call id
//		Arguments: arguments,               // exactly as the model emitted them
//	})
//	appendToolResult(toolCallID, res.Content, res.IsError())
//
// Dispatch returns at the first of: a valid answer from any device of the session, a
// decline, the timeout, a cancel, the caller's context, or Close; every device is told
// how the question ended. The pending requests live in a store (package store): in
// memory by default, or shared by several replicas (the cluster module puts them on NATS
// JetStream). Package observe is for traces, metrics and logs; package notify reaches a
// person who is not looking.
package askuser

// Reading the source: a question goes from tool call to tool result through these files,
// in this order.
//
//  1. askuser.go, aliases.go: what the model asks (Request, Question) and what the
//     person answers; the wire types a host uses, named here.
//  2. schema.go, schemafields.go, accepted.go, problems.go: the model's arguments parsed
//     and checked (ParseArguments), and the problems the model reads when they are wrong.
//  3. dispatcher.go: Options and New; Dispatch, which makes the request and renders its
//     end as the tool result; handleEvent, where a device's answer comes in (through
//     the transport's Inbound, or Deliver); CancelSession, Pending, Close.
//  4. lifecycle.go: one request's life, with its locking rules: recorded, sent to the
//     devices, waited for, ended by the first answer, timeout or cancel, resumed.
//  5. memstore.go: the default store (the Store contract is package store's).
//  6. answer.go: a device's answers checked against the questions.
//  7. outcome.go, errors.go: how a call can end, what the model reads for each, and the
//     errors a host branches on.
//
// An approval of a host's own tool call lives the same life (lifecycle.go). It comes
// from runtools.go (RunTools, and wrap, which routes each call), is decided in gate.go
// (Approve and ApprovalResult; gated runs the tool; handleDecision takes the device's
// decision), its rules are in policy.go, and the tool results the model reads for it in
// approval.go. Around the core: observing.go, notifier.go, dialect.go (the definition
// for each provider), summarizer.go. The wire events, the transport's interfaces and the
// device's errors are package wire's.

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
// the model's arguments, or directly in Go and check it with [Request.Validate]; a
// Request encoded with encoding/json is the arguments of a call to [Dispatcher.Dispatch].
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
