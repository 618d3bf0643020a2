package askuser

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/askuser-go/askuser/internal/jsonread"
	"github.com/askuser-go/askuser/internal/quickschema"
)

// The quick check must agree with the general validator on every tree, valid or not:
// ParseArguments trusts it to skip the general validator.

func TestQuickSchemaIsOn(t *testing.T) {
	if quickschema.Compile(loadSchemas().inputRaw) == nil {
		t.Fatal("schema/input.json uses a keyword the quick check does not know")
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
		if quickschema.Compile([]byte(raw)) != nil {
			t.Errorf("%s: compiled", raw)
		}
	}
}

func quickAgrees(t *testing.T, tree any) {
	t.Helper()
	s := loadSchemas()
	quick := s.quick.Valid(tree)
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
		tree, err := jsonread.Decode([]byte(base))
		if err != nil {
			t.Fatal(err)
		}
		for range rng.IntN(4) {
			tree = mutateTree(rng, tree)
		}
		quickAgrees(t, tree)
		if loadSchemas().quick.Valid(tree) {
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
	out, _ := jsonread.Decode(b)
	return out
}

func FuzzQuickSchemaAgreesWithSchema(f *testing.F) {
	f.Add([]byte(`{"questions":[{"question":"Q?","header":"H","options":[{"label":"A","description":"a"},{"label":"B","description":"b"}],"multiSelect":false}]}`))
	f.Add([]byte(`{"questions":[],"metadata":[]}`))
	f.Add([]byte(`{"questions":[{"question":"","header":"0123456789abc","options":[{"label":"A"}],"multiSelect":1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tree, err := jsonread.Decode(b)
		if err != nil {
			return
		}
		quickAgrees(t, tree)
	})
}
