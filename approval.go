package askuser

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonx"
	"github.com/askuser-go/askuser/store"
	"github.com/askuser-go/askuser/wire"
)

// Approvals: the person approves a host's own tool call before it runs. This file holds
// what the model reads for each way one ends, how an approval is named (its digest) and
// how a device's decision is decoded and checked; the events are package wire's. The rules that decide which calls are asked about are in
// policy.go; an approval's life is a request's, as a question's is (lifecycle.go).

// allDecisions is every decision, in the order devices show them.
var allDecisions = []string{wire.DecisionApprove, wire.DecisionDeny, wire.DecisionEdit, wire.DecisionAlways}

// Bounds of a ToolSource as a device is shown it: longer texts are cut, more hints
// dropped (by name, after the first).
const (
	maxSourceText  = 200
	maxSourceHints = 8
	maxHintName    = 32
)

// shownSource returns s as devices are shown it: valid UTF-8, texts cut to maxSourceText
// characters, at most maxSourceHints hints with names of at most maxHintName bytes.
// Nil for nil.
func shownSource(s *wire.ToolSource) *wire.ToolSource {
	if s == nil {
		return nil
	}
	out := &wire.ToolSource{
		Server:  jsonx.Truncate(strings.ToValidUTF8(s.Server, "\uFFFD"), maxSourceText),
		Trusted: s.Trusted,
		Title:   jsonx.Truncate(strings.ToValidUTF8(s.Title, "\uFFFD"), maxSourceText),
	}
	names := slices.Sorted(maps.Keys(s.Hints))
	for _, name := range names {
		if len(out.Hints) == maxSourceHints {
			break
		}
		if name == "" || len(name) > maxHintName || !utf8.ValidString(name) {
			continue
		}
		if out.Hints == nil {
			out.Hints = map[string]bool{}
		}
		out.Hints[name] = s.Hints[name]
	}
	return out
}

// approvalEnding is what the library says of one way an approval can end: its name in
// tool_approval_resolved and the tool result the model reads (for Approved and Edited,
// built from the tool's own result).
type approvalEnding struct {
	outcome Outcome
	name    string
	content string
}

// The tool results of approvals that did not run the tool. Each says that the tool did
// not run and whether to call it again; a timeout is worded apart from a person's no.
var approvalEndings = [...]approvalEnding{
	{Approved, "approved", ""},
	{Edited, "edited", ""},
	{Denied, "denied", ""}, // see deniedResult
	{TimedOut, "timed_out", `{"error": "The user did not decide on this tool call before the timeout, so the tool did not run. This is not a refusal: do not call it again unless the user asks you to."}`},
	{Cancelled, "cancelled", `{"error": "Session cancelled; the tool did not run"}`},
	{Undelivered, "undelivered", `{"error": "The approval request could not be delivered to the user; the tool did not run"}`},
	{Disconnected, "disconnected", `{"error": "User disconnected before deciding on this tool call; the tool did not run"}`},
	{Shutdown, "shutdown", `{"error": "The approval service is shutting down; the tool did not run"}`},
	{Invalid, "invalid", ""}, // see invalidApprovalResult
}

// noDeviceApproval is the result of an approval refused because no device was connected.
const noDeviceApproval = `{"error": "No device of the user is connected to approve this tool call; the tool did not run"}`

// Denials: by the person, with or without a reason, and by a rule of the host.
const (
	deniedByUser           = "The user denied this tool call; the tool did not run. Do not call it again unless the user asks you to."
	deniedByPolicy         = "This tool call is not allowed here; the tool did not run. Do not call it again."
	editedNotice           = "The user edited the arguments of this tool call before it ran: it ran with the arguments given here, not with yours."
	invalidMessageApproval = "Invalid tool call; fix every problem listed and call the tool again"
)

func approvalEndingOf(o Outcome) *approvalEnding {
	for i := range approvalEndings {
		if approvalEndings[i].outcome == o {
			return &approvalEndings[i]
		}
	}
	return nil
}

// deniedResult renders the tool result of a denied call: by a rule when rule is set,
// otherwise by the person, with their reason if any.
func deniedResult(rule bool, reason string) string {
	msg := deniedByUser
	if rule {
		msg = deniedByPolicy
	}
	if reason == "" {
		return `{"error": ` + jsonx.String(msg) + `}`
	}
	return `{"error": ` + jsonx.String(msg) + `, "reason": ` + jsonx.String(reason) + `}`
}

// editedResult renders the tool result of an edited call: the notice, the arguments it
// ran with, and the tool's own result, as a JSON value when it is one, else as a string.
func editedResult(arguments json.RawMessage, result string) string {
	args, _ := jsonx.Compact(arguments)
	res, err := jsonx.Compact([]byte(result))
	if err != nil {
		res = []byte(jsonx.String(result))
	}
	return `{"notice": ` + jsonx.String(editedNotice) + `, "arguments": ` + string(args) + `, "result": ` + string(res) + `}`
}

// invalidApprovalResult renders the result of a tool call refused before anything was
// asked: {"error": "...", "problems": [...]}.
func invalidApprovalResult(problems []string) string {
	return `{"error": ` + jsonx.String(invalidMessageApproval) + `, "problems": ` + jsonx.Strings(problems) + `}`
}

// approvalDigest names an approval exactly: a decision that carries it can only decide
// that one.
func approvalDigest(session SessionID, a *wire.ApprovalData, canonical []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(session.String()), {boolByte(session.IsNumeric())}, []byte(a.RequestID), []byte(a.Tool), canonical, []byte(a.ExpiresAt.UTC().Format(time.RFC3339Nano))} {
		var n [8]byte
		for i, l := 0, len(part); i < 8; i, l = i+1, l>>8 {
			n[i] = byte(l)
		}
		h.Write(n[:])
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// canonicalArguments is the form in which arguments are compared: the JSON value with
// its members sorted by name, compact. ok is false when arguments are not JSON.
func canonicalArguments(arguments []byte) (canonical []byte, ok bool) {
	c, err := jsonx.Canonical(arguments)
	return c, err == nil
}

// maxReasonLength bounds a denial's reason, in characters.
const maxReasonLength = 1000

// decodeApprovalResultData decodes a device's decision strictly, wording every refusal:
// unknown names, names given twice, wrong types and trailing data are refused.
func decodeApprovalResultData(b []byte) (wire.ApprovalResultData, error) {
	fail := func(problem string) (wire.ApprovalResultData, error) {
		return wire.ApprovalResultData{}, fmt.Errorf("%w: %s data: %s", wire.ErrMalformedEvent, wire.EventApprovalResult, problem)
	}
	m, problem := jsonx.DecodeObject(b)
	switch {
	case strings.HasPrefix(problem, "not valid JSON"):
		return fail(problem)
	case problem != "":
		return fail("must be an object, " + problem)
	}
	if name := jsonx.UnknownName(m, fieldRequestID, fieldDecision, fieldReason, fieldArguments, fieldDigest); name != "" {
		return fail(jsonx.Truncate(name, 40) + ": unknown field; the fields of a decision are requestId, decision, reason, arguments and digest")
	}
	var n struct {
		RequestID jsonx.Given `json:"requestId"`
		Decision  jsonx.Given `json:"decision"`
		Reason    jsonx.Given `json:"reason"`
		Arguments jsonx.Given `json:"arguments"`
		Digest    jsonx.Given `json:"digest"`
	}
	_ = json.Unmarshal(b, &n)
	var data wire.ApprovalResultData
	for _, f := range [...]struct {
		name  string
		count jsonx.Given
		dst   *string
	}{{fieldRequestID, n.RequestID, &data.RequestID}, {fieldDecision, n.Decision, &data.Decision}, {fieldReason, n.Reason, &data.Reason}, {fieldArguments, n.Arguments, nil}, {fieldDigest, n.Digest, &data.Digest}} {
		raw, ok := m[f.name]
		switch {
		case f.count > 1:
			return fail(f.name + ": given twice; give each field once")
		case !ok || string(raw) == "null" && f.name != fieldRequestID && f.name != fieldDecision:
		case f.dst == nil:
			data.Arguments = raw
		case jsonx.Kind(raw) != "string":
			return fail(f.name + ": must be a string, not " + jsonx.Article(jsonx.Kind(raw)))
		default:
			_ = json.Unmarshal(raw, f.dst)
		}
	}
	switch {
	case data.RequestID == "":
		return fail("missing requestId")
	case data.Decision == "":
		return fail(`missing decision; one of "approve", "deny", "edit" or "always"`)
	}
	return data, nil
}

// Members of a decision.
const (
	fieldDecision  = "decision"
	fieldReason    = "reason"
	fieldArguments = "arguments"
	fieldDigest    = "digest"
)

// checkDecision checks a device's decision against the approval it decides and returns
// the decision as recorded, or the error for the device: an [*wire.AnswerError] for a
// decision the approval does not take or an edit that is not valid, ErrNotPending for a
// digest of another approval.
func (d *Dispatcher) checkDecision(a *wire.ApprovalData, data *wire.ApprovalResultData) (store.Decision, error) {
	if data.Digest != "" && data.Digest != a.Digest {
		return store.Decision{}, fmt.Errorf("%w: the decision is for another approval of this id (its digest differs)", wire.ErrNotPending)
	}
	refuse := func(format string, args ...any) (store.Decision, error) {
		return store.Decision{}, &wire.AnswerError{RequestID: data.RequestID, Problems: []string{fmt.Sprintf(format, args...)}}
	}
	offered := false
	for _, x := range a.Decisions {
		offered = offered || x == data.Decision
	}
	if !offered {
		return refuse("decision: %q is not a decision of this approval; it takes %s", jsonx.Truncate(data.Decision, 40), quotedList(a.Decisions))
	}
	if data.Decision != wire.DecisionEdit && len(data.Arguments) > 0 {
		return refuse("arguments: given only with the decision \"edit\"")
	}
	if data.Decision != wire.DecisionDeny && data.Reason != "" {
		return refuse("reason: given only with the decision \"deny\"")
	}
	dec := store.Decision{Decision: data.Decision}
	switch data.Decision {
	case wire.DecisionDeny:
		if !utf8.ValidString(data.Reason) {
			return refuse("reason: not valid UTF-8")
		}
		if n := utf8.RuneCountInString(data.Reason); n > maxReasonLength {
			return refuse("reason: %d characters; at most %d are accepted", n, maxReasonLength)
		}
		dec.Reason = data.Reason
	case wire.DecisionEdit:
		if len(data.Arguments) == 0 {
			return refuse("arguments: missing; an edit gives the arguments to run the tool with")
		}
		if len(data.Arguments) > wire.MaxArgumentsBytes {
			return refuse("arguments: %d bytes; at most %d are accepted", len(data.Arguments), wire.MaxArgumentsBytes)
		}
		compact, err := jsonx.Compact(data.Arguments)
		if err != nil {
			return refuse("arguments: not valid JSON: %v", err)
		}
		if problems := schemaCheck(a.ArgumentsSchema, compact); len(problems) > 0 {
			return store.Decision{}, &wire.AnswerError{RequestID: data.RequestID, Problems: problems}
		}
		dec.Arguments = compact
	}
	return dec, nil
}

// quotedList renders ss as "a", "b" or "c".
func quotedList(ss []string) string {
	var b []byte
	for i, s := range ss {
		switch {
		case i == 0:
		case i == len(ss)-1:
			b = append(b, " or "...)
		default:
			b = append(b, ", "...)
		}
		b = strconv.AppendQuote(b, s)
	}
	return string(b)
}
