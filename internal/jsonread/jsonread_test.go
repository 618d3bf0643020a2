package jsonread

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeAgreesWithEncodingJSON: the library's own JSON reading accepts exactly
// what encoding/json accepts and decodes it to the same tree, for any input that is
// valid UTF-8 (for invalid UTF-8, where Go releases differ, it gives valid UTF-8).
func FuzzDecodeAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"questions":[{"question":"Q?","header":"H","options":[],"multiSelect":false}]}`,
		`{"metadata":{"n":12345678901234567890,"x":-0.5e3}}`, `"{\"a\":\"b\"}"`, `{"a":"\u00e9\\"}`,
		`{"a":1} }`, `{"a":"b"} x`, `["a\\",1]`, `["a\"1",true]`, `["\\\"-",null]`, `"unterminated`, `  `, `nul`, `[1,"2",-3]`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
		`{"a":1,"a":2}`, `[01]`, `[1.]`, `[-]`, `[1e]`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `"\x"`, "\"a\x01\"", `"\ud83d\ude00\udc00\ud800x"`, `[[[[]]]]`, `{}`, `[]`, `""`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Decode(b)
		if !utf8.Valid(b) {
			if err == nil && !utf8.ValidString(fmt.Sprint(got)) {
				t.Fatalf("invalid UTF-8 kept: %#v", got)
			}
			return
		}
		if (err == nil) != json.Valid(b) {
			t.Fatalf("decodeJSON error %v, json.Valid %v", err, json.Valid(b))
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error that says nothing")
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("tree %#v, want %#v", got, want)
		}
	})
}

// FuzzCompactAgreesWithCompact: AppendCompact accepts what json.Valid accepts and
// writes what json.Compact writes, for valid UTF-8.
func FuzzCompactAgreesWithCompact(f *testing.F) {
	for _, s := range []string{` { "a" : [ 1 , "x y" , true ] } `, `[]`, "\t\"a\\\" b\"\n", `{"a":}`, ` 1 2 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) {
			return
		}
		got, problem := AppendCompact([]byte("x"), b)
		var want bytes.Buffer
		err := json.Compact(&want, b)
		if (problem == "") != (err == nil) {
			t.Fatalf("problem %q, json.Compact error %v", problem, err)
		}
		if problem == "" && string(got) != "x"+want.String() {
			t.Fatalf("compact %s, want x%s", got, want.String())
		}
		if problem != "" && string(got) != "x" {
			t.Fatalf("a refusal changed dst: %s", got)
		}
	})
}

func TestAppendCompactReplacesInvalidUTF8(t *testing.T) {
	got, problem := AppendCompact(nil, []byte("{ \"a\xff\" : [ \"x\xb1y\", \"é\" ] }"))
	if problem != "" {
		t.Fatal(problem)
	}
	if want := "{\"a\uFFFD\":[\"x\uFFFDy\",\"é\"]}"; string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
