// Package wire is the protocol between a dispatcher and the person's devices, for those
// who write a transport or a device: the events and their payloads (see
// docs/PROTOCOL.md), parsing and building them, the errors a device's event can get, and
// the interfaces a transport implements ([Transport], [Presence], [Attention]) and calls
// ([Inbound]).
//
// A host needs none of it: package askuser names the types a host uses (SessionID,
// Question, Option, Answer, Outcome), and a transport such as wshub speaks the protocol.
// A transport is bound to its dispatcher once, by askuser.New, which calls its method
// Bind(Inbound) with the dispatcher's side for devices.
package wire
