// Package askgenai connects askuser to the Google Gen AI Go SDK (google.golang.org/genai)
// for Gemini: it gives the ask_user_questions tool as a [genai.FunctionDeclaration] and
// answers the model's function calls with function responses, an error under "error".
//
// [TurnResponses] answers every function call of the turn: ask_user_questions asked on
// the person's devices, the host's own functions gated by the dispatcher's
// [askuser.Options.Policy] and run by the host's function.
//
//	config := &genai.GenerateContentConfig{Tools: []*genai.Tool{askgenai.Tool(), hostTools}}
//	resp, err := client.Models.GenerateContent(ctx, model, history, config)
//	...
//	turn := resp.Candidates[0].Content
//	history = append(history, turn)
//	parts := askgenai.TurnResponses(ctx, d, session, turnID, turn, runTool) // blocks until every call has ended
//	history = append(history, genai.NewContentFromParts(parts, genai.RoleUser))
//
// A host that runs its other functions itself answers the ask_user_questions calls
// alone with [FunctionResponses], and adds its own responses beside theirs:
//
//	parts := askgenai.FunctionResponses(ctx, d, session, turnID, turn) // blocks until answered
//	parts = append(parts, otherFunctionResponses...)                 // the host's other tools
//	history = append(history, genai.NewContentFromParts(parts, genai.RoleUser))
//
// # Call ids
//
// The function call's id becomes the question's or the approval's request id
// ([askuser.ToolCall.ID]), so that a run resumed after a restart that makes the same
// call again joins the question or approval still pending instead of asking twice. The
// Gemini API often gives no id; then askgenai derives one that is stable for the same
// call: from turnID, which the host chooses to name the model's turn (a conversation id
// and the turn's number, say), and the call's position in the turn (see [CallID]). A
// host that resumes a run passes the same turnID for the same turn, and the same call
// gets the same id.
package askgenai

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"

	"google.golang.org/genai"

	"github.com/askuser-go/askuser"
)

// FunctionDeclaration returns the ask_user_questions declaration with its Parameters in
// the [askuser.Gemini] dialect: the OpenAPI subset that Parameters takes. Each call
// returns a fresh value.
//
// A host that prefers JSON Schema can set ParametersJsonSchema instead, to the
// [askuser.JSONSchema] dialect (and Parameters to nil); Gemini takes that form too.
func FunctionDeclaration() *genai.FunctionDeclaration {
	def := askuser.Definition(askuser.Gemini)
	var params genai.Schema
	if err := json.Unmarshal(def.InputSchema, &params); err != nil {
		panic("askgenai: the askuser Gemini schema is not a genai.Schema: " + err.Error())
	}
	return &genai.FunctionDeclaration{
		Name:        def.Name,
		Description: def.Description,
		Parameters:  &params,
	}
}

// Tool returns a tool holding [FunctionDeclaration] alone, for
// [genai.GenerateContentConfig].Tools. A host with tools of its own can instead add
// FunctionDeclaration() to its tool's FunctionDeclarations.
func Tool() *genai.Tool {
	return &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{FunctionDeclaration()}}
}

// CallID returns the request id askgenai dispatches a call without an id under: a
// digest of turnID and index, the call's position among the function calls of the turn,
// counted from 0 over every function call part, of any tool. It is the same for the same
// turnID and index, and differs between turns that the host names differently. With
// turnID "" there is no stable id, and CallID returns "" (the dispatcher then makes a
// fresh one, which a resumed run cannot join).
func CallID(turnID string, index int) string {
	if turnID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(turnID + "\x00" + strconv.Itoa(index)))
	return "gemini-" + hex.EncodeToString(sum[:16])
}

// FunctionResponses runs every ask_user_questions function call of turn, the model's
// content, through d, for the session's devices, and returns one function response part
// per call, in the order of the calls. The calls are asked at once, each as its own
// question, and FunctionResponses returns when every one has ended. Calls of other
// functions are left to the host, whose function responses go in the same user content
// as these. A nil turn, or one without such a call, gives none. [TurnResponses] answers
// every function call instead.
//
// Each response carries the call's id and name as they came (the id empty when the
// call had none), and as Response the tool result ([askuser.Result.Content]) as a JSON
// object: {"answers": [...]} when the person answered, which Gemini reads as the
// function's output, and {"error": "..."} otherwise, which Gemini reads as the
// function's error: the equivalent of an error flag.
//
// A call with an id is dispatched under that id; one without, under [CallID](turnID, i).
func FunctionResponses(ctx context.Context, d *askuser.Dispatcher, session askuser.SessionID, turnID string, turn *genai.Content) []*genai.Part {
	if turn == nil {
		return nil
	}
	type call struct {
		fc *genai.FunctionCall
		id string
	}
	var calls []call
	index := 0
	for _, p := range turn.Parts {
		if p == nil || p.FunctionCall == nil {
			continue
		}
		if p.FunctionCall.Name == askuser.ToolName {
			id := p.FunctionCall.ID
			if id == "" {
				id = CallID(turnID, index)
			}
			calls = append(calls, call{fc: p.FunctionCall, id: id})
		}
		index++
	}
	out := make([]*genai.Part, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			res := d.Dispatch(ctx, askuser.ToolCall{Session: session, ID: c.id, Name: c.fc.Name, Arguments: arguments(c.fc)})
			out[i] = &genai.Part{FunctionResponse: &genai.FunctionResponse{
				ID:       c.fc.ID,
				Name:     c.fc.Name,
				Response: responseObject(res.Content),
			}}
		})
	}
	wg.Wait()
	return out
}

// arguments are a call's Args as JSON; nil when it has none, which the dispatcher
// refuses as missing arguments of ask_user_questions.
func arguments(fc *genai.FunctionCall) json.RawMessage {
	if fc.Args == nil {
		return nil
	}
	args, err := json.Marshal(fc.Args)
	if err != nil {
		return nil
	}
	return args
}

// responseObject is a tool result, always a JSON object, as a FunctionResponse takes it.
func responseObject(content string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(content), &m); err != nil || m == nil {
		return map[string]any{"output": content}
	}
	return m
}
