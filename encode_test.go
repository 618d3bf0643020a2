package askuser

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonread"
)

// FuzzEncodersAgreeWithMarshal: the hand-written encoders write valid JSON that
// encoding/json reads back as the same value it reads from json.Marshal's output, in
// the one spelling appendJSONString documents, for any text; and they refuse what
// json.Marshal refuses.
func FuzzEncodersAgreeWithMarshal(f *testing.F) {
	f.Add("Which framework?", "Vue <3> & co", "```go\n\tx := 1\n```", "r1", `{"n": 1.50, "s": "<>&\u2028"}`, true, int64(1))
	f.Add("\x00\x1f\"\\\b\f\u2028\u2029\xff\xfe", "日本語", "", "<r>", ``, false, int64(0))
	f.Add("a", "b", "c", "d", `[1,`, false, int64(-1))
	f.Add("\xed\xa0\x80", "\ufffd", "\u2028", "", `{"b":1,"a":{"d":[],"c":"\u00e9"},"b":2}`, false, int64(253402300800))
	f.Fuzz(func(t *testing.T, text, label, preview, id, metadata string, multi bool, when int64) {
		custom := text + label
		var exp time.Time
		if when != 0 {
			exp = time.Unix(when, when%1e9).In(time.FixedZone("z", int(when%50000)))
		}
		a := AskData{
			RequestID: id,
			Questions: []Question{
				{Question: text, Header: label, Options: []Option{{Label: label, Description: text, Preview: preview}, {Label: preview, Description: id}}, MultiSelect: multi},
				{Question: id},
			},
			Metadata:  json.RawMessage(metadata),
			ExpiresAt: exp,
		}
		got, gotErr := encodeAskData(&a)
		checkEncoding(t, "encodeAskData", got, gotErr, a)
		for _, r := range []response{{}, {Answers: []Answer{{Question: text, SelectedLabels: []string{label, preview}, CustomInput: &custom}, {Question: id, SelectedLabels: []string{}}, {}}}} {
			checkEncoding(t, "encodeResponse", encodeResponse(r), nil, r)
		}
		for o := Outcome(-1); int(o) <= len(endings)+1; o++ {
			r := ResolvedData{RequestID: id, Outcome: o}
			got, err := encodeResolvedData(r)
			checkEncoding(t, "encodeResolvedData", got, err, r)
		}
		rd := ResultData{RequestID: id, Answers: []Answer{{Question: text, SelectedLabels: []string{label}, CustomInput: &custom}}, Declined: multi}
		checkEncoding(t, "encodeResultData", encodeResultData(&rd), nil, rd)
		ed := ErrorData{RequestID: id, Code: label, Message: text, Problems: []string{preview, custom}}
		checkEncoding(t, "encodeErrorData", encodeErrorData(&ed), nil, ed)
		checkEncoding(t, "invalidResult", []byte(invalidResult([]string{text, label})), nil, map[string]any{"error": invalidMessage, "problems": []string{text, label}})
		for _, s := range []SessionID{StringSession(text), IntSession(when), ParseSessionID(id)} {
			for _, ev := range []Event{{Type: text, SessionID: s, Data: json.RawMessage(metadata)}, {Type: label, SessionID: s}} {
				got, err := ev.Encode()
				checkEncoding(t, "Encode", got, err, ev)
			}
		}
	})
}

// checkEncoding checks one encoder's output against json.Marshal of v.
func checkEncoding(t *testing.T, name string, got []byte, gotErr error, v any) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: error %v, json.Marshal's %v", name, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if !json.Valid(got) || jsonread.SyntaxError(got) != "" {
		t.Fatalf("%s: invalid JSON %q", name, got)
	}
	var gotV, wantV any
	if err := json.Unmarshal(got, &gotV); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &wantV); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotV, wantV) {
		t.Fatalf("%s: %s\nreads as %#v\njson.Marshal: %s\nreads as %#v", name, got, gotV, want, wantV)
	}
	// The one spelling: valid UTF-8, <, > and & as themselves, U+2028 and U+2029 escaped,
	// U+FFFD as itself.
	if !utf8.Valid(got) {
		t.Fatalf("%s: invalid UTF-8 in %q", name, got)
	}
	for _, bad := range []string{`\u003c`, `\u003e`, `\u0026`, "\u2028", "\u2029", `\ufffd`} {
		if bytes.Contains(got, []byte(bad)) {
			t.Fatalf("%s: %q spelt %q", name, got, bad)
		}
	}
}
