package askuser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// The quick check must agree with the general validator on every tree, valid or not:
// ParseArguments trusts it to skip the general validator.

func TestQuickSchemaIsOn(t *testing.T) {
	if loadSchemas().quickInput == nil {
		t.Fatal("schema/input.json uses a keyword the quick check does not know: every call pays for the general validator")
	}
}

func TestQuickSchemaOffForUnknownKeywords(t *testing.T) {
	for _, raw := range []string{
		`{"type":"object","properties":{"n":{"type":"integer"}}}`,
		`{"type":"object","patternProperties":{"^x":{}}}`,
		`{"type":"object","additionalProperties":true}`,
		`{"type":["string","null"]}`,
		`{"type":"string","pattern":"^a"}`,
		`{"type":"array","items":true}`,
		`{"type":"string","minLength":1.5}`,
	} {
		if compileQuick([]byte(raw)) != nil {
			t.Errorf("%s: compiled", raw)
		}
	}
}

func quickAgrees(t *testing.T, tree any) {
	t.Helper()
	s := loadSchemas()
	quick := s.quickInput.valid(tree)
	full := s.input.Validate(tree) == nil
	if quick != full {
		b, _ := json.Marshal(tree)
		t.Fatalf("quick %v, schema %v, for %s", quick, full, b)
	}
}

func TestQuickSchemaAgreesWithSchema(t *testing.T) {
	base := `{"questions":[{"question":"Which framework?","header":"Framework","options":[` +
		`{"label":"Vue 3 (Recommended)","description":"Matches the stack","preview":"<App/>"},` +
		`{"label":"React","description":"Larger ecosystem"}],"multiSelect":false}],"metadata":{"n":1}}`
	rng := rand.New(rand.NewPCG(1, 2))
	valid := 0
	for i := range 20000 {
		tree, err := decodeJSON([]byte(base))
		if err != nil {
			t.Fatal(err)
		}
		for range rng.IntN(4) {
			tree = mutateTree(rng, tree)
		}
		quickAgrees(t, tree)
		if loadSchemas().quickInput.valid(tree) {
			valid++
		}
		if i == 0 && valid != 1 {
			t.Fatal("the unmutated base is not valid")
		}
	}
	if valid < 1000 || valid > 19000 {
		t.Fatalf("%d of 20000 mutated trees valid: the mutations do not cover both sides", valid)
	}
}

// mutateTree changes one node picked at random: removes a key or an item, replaces a
// value with one of another kind or size, or adds a key or items.
func mutateTree(rng *rand.Rand, tree any) any { return mutateAt(rng, tree) }

func mutateAt(rng *rand.Rand, v any) any {
	// Descend with some probability, else mutate here.
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 && rng.IntN(3) > 0 {
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			k := keys[rng.IntN(len(keys))]
			x[k] = mutateAt(rng, x[k])
			return x
		}
		switch rng.IntN(3) {
		case 0: // delete a key
			for k := range x {
				delete(x, k)
				break
			}
			return x
		case 1: // add a key, known or not
			names := []string{"questions", "metadata", "question", "header", "options", "multiSelect", "label", "description", "preview", "extra"}
			x[names[rng.IntN(len(names))]] = randomValue(rng)
			return x
		}
	case []any:
		if len(x) > 0 && rng.IntN(3) > 0 {
			i := rng.IntN(len(x))
			x[i] = mutateAt(rng, x[i])
			return x
		}
		switch rng.IntN(3) {
		case 0:
			if len(x) > 0 {
				return x[:len(x)-1]
			}
		case 1:
			for range 1 + rng.IntN(4) {
				if len(x) > 0 {
					x = append(x, deepCopy(x[rng.IntN(len(x))]))
				}
			}
			return x
		}
	case string:
		switch rng.IntN(4) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("é", []int{11, 12, 13, 99, 100, 101, 999, 1000, 1001}[rng.IntN(9)])
		case 2:
			return x + fmt.Sprint(rng.IntN(10))
		}
	}
	return randomValue(rng)
}

func randomValue(rng *rand.Rand) any {
	switch rng.IntN(7) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return json.Number("3")
	case 3:
		return "some text"
	case 4:
		return []any{}
	case 5:
		return map[string]any{}
	}
	return strings.Repeat("x", 13)
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	out, _ := decodeJSON(b)
	return out
}

func FuzzQuickSchemaAgreesWithSchema(f *testing.F) {
	f.Add([]byte(`{"questions":[{"question":"Q?","header":"H","options":[{"label":"A","description":"a"},{"label":"B","description":"b"}],"multiSelect":false}]}`))
	f.Add([]byte(`{"questions":[],"metadata":[]}`))
	f.Add([]byte(`{"questions":[{"question":"","header":"0123456789abc","options":[{"label":"A"}],"multiSelect":1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tree, err := decodeJSON(b)
		if err != nil {
			return
		}
		quickAgrees(t, tree)
	})
}

// FuzzDecodeJSONAgreesWithEncodingJSON: the library's own JSON reading accepts exactly
// what encoding/json accepts and decodes it to the same tree, for any input that is
// valid UTF-8 (for invalid UTF-8, where Go releases differ, it gives valid UTF-8).
func FuzzDecodeJSONAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"questions":[{"question":"Q?","header":"H","options":[],"multiSelect":false}]}`,
		`{"metadata":{"n":12345678901234567890,"x":-0.5e3}}`, `"{\"a\":\"b\"}"`, `{"a":"\u00e9\\"}`,
		`{"a":1} }`, `{"a":"b"} x`, `["a\\",1]`, `["a\"1",true]`, `["\\\"-",null]`, `"unterminated`, `  `, `nul`, `[1,"2",-3]`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
		`{"a":1,"a":2}`, `[01]`, `[1.]`, `[-]`, `[1e]`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `"\x"`, "\"a\x01\"", `"\ud83d\ude00\udc00\ud800x"`, `[[[[]]]]`, `{}`, `[]`, `""`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeJSON(b)
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

// FuzzCompactJSONAgreesWithCompact: appendCompactJSON accepts what json.Valid accepts and
// writes what json.Compact writes, for valid UTF-8.
func FuzzCompactJSONAgreesWithCompact(f *testing.F) {
	for _, s := range []string{` { "a" : [ 1 , "x y" , true ] } `, `[]`, "\t\"a\\\" b\"\n", `{"a":}`, ` 1 2 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) {
			return
		}
		got, problem := appendCompactJSON([]byte("x"), b)
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
