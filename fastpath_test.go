package askuser

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"
)

// The fast paths (parseArgumentsFast, decodeResultDataFast, the hand-written encoders)
// must agree with the encoding/json ways they stand in for: the fuzz targets below check
// it for any input, and the tests that the fast paths are taken at all, for the forms
// models and devices send.

// fastArgs are arguments the fast path must take: the forms models send.
var fastArgs = []string{
	`{"questions":[{"question":"Which framework?","header":"Framework","options":[{"label":"Vue","description":"Composition API"},{"label":"React","description":"Hooks"}],"multiSelect":false}]}`,
	` { "questions" : [ { "multiSelect" : true , "options" : [ { "description" : "d\u00e9j\u00e0 \"vu\"\n" , "label" : "Vue <3> & co" , "preview" : "` + "```go\\n\\tx := 1\\n```" + `" } , { "label" : "日本語", "description" : "x\/y" } ] , "header" : "Héllo" , "question" : "Which?" } ] , "metadata" : { "n" : 1.50, "b": [true, null, -2e3], "s": "<>&" } } `,
	`"{\"questions\":[{\"question\":\"Q?\",\"header\":\"H\",\"options\":[{\"label\":\"a\",\"description\":\"b\"},{\"label\":\"c\",\"description\":\"d\"}],\"multiSelect\":false}]}"`,
	`{"questions":"[{\"question\":\"Q?\",\"header\":\"H\",\"options\":[{\"label\":\"a\",\"description\":\"b\"},{\"label\":\"c\",\"description\":\"d\"}],\"multiSelect\":false}]","metadata":{}}`,
}

func TestParseArgumentsFastPathTakesCommonForms(t *testing.T) {
	q := loadSchemas().quickInput
	if q == nil {
		t.Fatal("no quick schema: the fast path is off")
	}
	for _, args := range fastArgs {
		fast, ok := parseArgumentsFast([]byte(args), q)
		if !ok {
			t.Errorf("fast path refused %s", args)
			continue
		}
		slow, err := parseArgumentsSlow([]byte(args))
		if err != nil || !reflect.DeepEqual(fast, slow) {
			t.Errorf("fast %+v, slow %+v, %v", fast, slow, err)
		}
	}
	for _, tc := range argumentCases {
		if tc.problems == nil {
			continue
		}
		if _, ok := parseArgumentsFast([]byte(tc.args), q); ok {
			t.Errorf("%s: fast path took invalid arguments", tc.name)
		}
	}
}

// FuzzParseArgumentsFastAgreesWithSlow: whatever the fast path takes, the slow path takes
// too, with the same Request.
func FuzzParseArgumentsFastAgreesWithSlow(f *testing.F) {
	for _, a := range fastArgs {
		f.Add([]byte(a))
	}
	for _, tc := range argumentCases {
		if len(tc.args) < 4096 {
			f.Add([]byte(tc.args))
		}
	}
	q := loadSchemas().quickInput
	f.Fuzz(func(t *testing.T, args []byte) {
		fast, ok := parseArgumentsFast(args, q)
		slow, err := parseArgumentsSlow(args)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("fast path took what the slow path refuses: %v\n%s", err, args)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast %#v\nslow %#v\n%s", fast, slow, args)
		}
	})
}

// fastResults are device results the fast path must take.
var fastResults = []string{
	`{"requestId":"r1","answers":[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null}]}`,
	` {"answers" : [ {"customInput":"my \"own\"\n\u00e9","selectedLabels":[],"question":"Q"}, {"question":"Q2","selectedLabels":null} ], "requestId":"r\u0031"} `,
	`{"requestId":"r1","declined":true}`,
	`{"requestId":"r1","answers":[],"declined":false}`,
	`{"requestId":"r1","answers":null}`,
}

func TestResultDataFastPathTakesCommonForms(t *testing.T) {
	for _, msg := range fastResults {
		if _, ok := decodeResultDataFast([]byte(msg)); !ok {
			t.Errorf("fast path refused %s", msg)
		}
	}
}

// FuzzResultDataFastAgreesWithTree: whatever the fast path takes, the reference
// decoding (resultDataFromTree) takes too, with the same ResultData.
func FuzzResultDataFastAgreesWithTree(f *testing.F) {
	for _, m := range fastResults {
		f.Add([]byte(m))
	}
	for _, tc := range deviceCases {
		if ev, err := ParseEvent([]byte(tc.msg)); err == nil && len(ev.Data) < 4096 {
			f.Add([]byte(ev.Data))
		}
	}
	f.Add([]byte(`{"RequestId":"r1"}`))
	f.Add([]byte(`{"requestId":"r1"} ]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeResultDataFast(b)
		if !ok {
			return
		}
		tree, err := decodeJSON(b)
		if err != nil {
			t.Fatalf("fast path took invalid JSON: %v\n%s", err, b)
		}
		slow, problem := resultDataFromTree(tree)
		if problem != "" {
			t.Fatalf("fast path took what the reference refuses: %s\n%s", problem, b)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast %#v\nslow %#v\n%s", fast, slow, b)
		}
	})
}

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
		for _, r := range []Response{{}, {Answers: []Answer{{Question: text, SelectedLabels: []string{label, preview}, CustomInput: &custom}, {Question: id, SelectedLabels: []string{}}, {}}}} {
			checkEncoding(t, "encodeResponse", encodeResponse(r), nil, r)
		}
		for o := Outcome(-1); int(o) <= len(outcomeNames); o++ {
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
	if !json.Valid(got) || jsonSyntaxError(got) != "" {
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

// FuzzScannerStringAgreesWithUnmarshal: a string the scanner reads, the reference
// reading (decodeJSON) reads alike, and so does encoding/json when the input is valid
// UTF-8.
func FuzzScannerStringAgreesWithUnmarshal(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"c\"\\d\/e\bf\fg\r"`, `"\u00e9\ud83d\ude00\ud800"`, "\"\xff\"", `"日本語"`, `"\x"`, "\"a\x01\"", `"\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sc := jsonScanner{b: b}
		got, ok := sc.str()
		if !ok || !sc.atEnd() {
			return
		}
		if ref, err := decodeJSON(b); err != nil || got != ref {
			t.Fatalf("scanner %q, decodeJSON %q, %v", got, ref, err)
		}
		if !utf8.Valid(b) {
			return
		}
		var want string
		if err := json.Unmarshal(b, &want); err != nil || got != want {
			t.Fatalf("scanner %q, encoding/json %q, %v", got, want, err)
		}
	})
}
