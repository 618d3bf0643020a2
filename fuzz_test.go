package askuser_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	. "github.com/askuser-go/askuser"
)

// The fuzz targets are seeded from the tables; CI runs each for a few seconds
// (scripts/test.sh), and docs/TESTING.md says how to run them longer.

// FuzzParseArguments: any bytes from the model give a request or a list of problems,
// never a panic; a request that passes survives its own JSON, and a refusal always says
// what is wrong, in a result the model can parse.
func FuzzParseArguments(f *testing.F) {
	for _, tc := range ArgumentCases {
		if len(tc.Args) < 4096 {
			f.Add([]byte(tc.Args))
		}
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		req, err := ParseArguments(args)
		if err != nil {
			var ae *ArgumentsError
			if !errors.As(err, &ae) || len(ae.Problems) == 0 {
				t.Fatalf("refusal without problems: %v", err)
			}
			for _, p := range ae.Problems {
				if strings.TrimSpace(p) == "" || !strings.Contains(p, ": ") {
					t.Fatalf("problem without a location: %q", p)
				}
			}
			if !json.Valid([]byte(InvalidResult(ae.Problems))) {
				t.Fatalf("invalid result is not JSON: %s", InvalidResult(ae.Problems))
			}
			return
		}
		if n := len(req.Questions); n < 1 || n > 4 {
			t.Fatalf("accepted %d questions", n)
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseArguments(again); err != nil {
			t.Fatalf("an accepted request does not survive its JSON: %v\n%s", err, again)
		}
	})
}

// FuzzDeviceMessage: any message from a device either answers the pending question with
// a valid answer, or is refused with a coded error of at most 4 KiB and leaves the
// question pending.
func FuzzDeviceMessage(f *testing.F) {
	for _, tc := range DeviceCases {
		if len(tc.Msg) < 4096 {
			f.Add([]byte(tc.Msg))
		}
	}
	req := mustParse(f, PendingArgs)
	f.Fuzz(func(t *testing.T, msg []byte) {
		d, _ := newTestDispatcher(nil)
		defer d.Close()
		session := IntSession(123)
		resCh := askPending(t, d, session, "r1", PendingArgs)
		ev, err := ParseEvent(msg)
		if err == nil {
			ev.SessionID = session
			err = d.HandleEvent(context.Background(), ev)
		}
		if err != nil {
			if code := ErrorCodeOf(err); code == "internal" {
				t.Fatalf("uncoded error: %v", err)
			}
			if !d.Waiting(session) {
				t.Fatalf("a refused message ended the question: %v", err)
			}
			out := ErrorEvent(session, ev.RequestID(), err)
			wire, werr := out.Encode()
			if werr != nil {
				t.Fatal(werr)
			}
			if _, perr := ParseEvent(wire); perr != nil {
				t.Fatalf("error event does not parse: %v", perr)
			}
			if len(wire) > 4<<10 {
				t.Fatalf("a %d-byte message got a %d-byte reply", len(msg), len(wire))
			}
			return
		}
		res := <-resCh
		switch res.Outcome {
		case Declined:
		case Answered:
			if err := ValidateOutput([]byte(res.Content)); err != nil {
				t.Fatalf("accepted answers break the output schema: %v", err)
			}
			if _, problems := CheckAnswers(req.Questions, res.Answers, 0); problems != nil {
				t.Fatalf("accepted answers do not check: %v", problems)
			}
		default:
			t.Fatalf("accepted message ended the question as %v", res.Outcome)
		}
	})
}

// FuzzCheckAnswers: validation is total, canonical answers are stable, and an accepted
// answer really answers every question with existing labels.
func FuzzCheckAnswers(f *testing.F) {
	f.Add("Vue", "", false, "Router", "Store", true)
	f.Add("", "Svelte", true, "", "", false)
	f.Add("React", " ", true, "Store", "Store", true)
	f.Add("Angular", "x", false, "Router", "Nope", true)
	req := mustParse(f, PendingArgs)
	f.Fuzz(func(t *testing.T, label1, custom1 string, hasCustom1 bool, label2a, label2b string, answerSecond bool) {
		var labels1 []string
		if label1 != "" {
			labels1 = []string{label1}
		}
		a := []Answer{{Question: "Which framework?", SelectedLabels: labels1}}
		if hasCustom1 {
			a[0].CustomInput = &custom1
		}
		if answerSecond {
			a = append(a, Answer{Question: "Which extras?", SelectedLabels: []string{label2a, label2b}})
		}
		out, problems := CheckAnswers(req.Questions, a, 0)
		if problems != nil {
			if out != nil {
				t.Fatal("answers returned with problems")
			}
			return
		}
		if len(out) != len(req.Questions) {
			t.Fatalf("%d answers for %d questions", len(out), len(req.Questions))
		}
		for i, ans := range out {
			q := req.Questions[i]
			if ans.Question != q.Question || ans.SelectedLabels == nil {
				t.Fatalf("not canonical: %+v", ans)
			}
			if !q.MultiSelect && len(ans.SelectedLabels) > 1 {
				t.Fatal("two labels on a single-select question")
			}
			if len(ans.SelectedLabels) == 0 && (ans.CustomInput == nil || strings.TrimSpace(*ans.CustomInput) == "") {
				t.Fatal("an empty answer was accepted")
			}
		}
		again, problems := CheckAnswers(req.Questions, out, 0)
		if problems != nil || !equalJSON(t, again, out) {
			t.Fatalf("canonical answers changed on a second check: %v", problems)
		}
	})
}

// FuzzEnvelope: an envelope that parses is produced again with the same meaning, and the
// session id keeps its JSON type.
func FuzzEnvelope(f *testing.F) {
	f.Add([]byte(designAsk))
	f.Add([]byte(designResult))
	f.Add([]byte(`{"type":"x","sessionId":"a:b"}`))
	f.Add([]byte(`{"type":"x","sessionId":-0}`))
	f.Add([]byte(`{"type":"x","sessionId":12345678901234567890123,"data":null}`))
	for _, tc := range DeviceCases {
		if len(tc.Msg) < 4096 {
			f.Add([]byte(tc.Msg))
		}
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		ev, err := ParseEvent(msg)
		if err != nil {
			if !errors.Is(err, ErrMalformedEvent) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		out := mustJSON(t, ev)
		back, err := ParseEvent(out)
		if err != nil {
			t.Fatalf("produced envelope does not parse: %v\n%s", err, out)
		}
		if back.Type != ev.Type || back.SessionID != ev.SessionID {
			t.Fatalf("envelope changed: %+v -> %+v", ev, back)
		}
		if len(ev.Data) > 0 && !equalRaw(t, ev.Data, back.Data) {
			t.Fatalf("data changed: %s -> %s", ev.Data, back.Data)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func equalJSON(t *testing.T, a, b any) bool {
	return string(mustJSON(t, a)) == string(mustJSON(t, b))
}

func equalRaw(t *testing.T, a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return equalJSON(t, va, vb)
}
