package askanthropic_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/askuser-go/askuser"
)

func schemaMap(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// transform runs the SDK's own schema transform (anthropic.BetaToolInputSchema, which
// moves what strict tool use refuses into descriptions) and returns its result.
func transform(t *testing.T, schema map[string]any) map[string]any {
	t.Helper()
	out := anthropic.BetaToolInputSchema(schema).ExtraFields
	if out == nil {
		t.Fatal("the SDK's transform failed")
	}
	return out
}

// The SDK's transform leaves the AnthropicStrict schema exactly as it is: nothing in it
// is refused by strict tool use.
func TestSDKTransformLeavesStrictSchemaUnchanged(t *testing.T) {
	ours := schemaMap(t, askuser.Definition(askuser.AnthropicStrict).InputSchema)
	got := transform(t, schemaMap(t, askuser.Definition(askuser.AnthropicStrict).InputSchema))
	if !reflect.DeepEqual(got, ours) {
		t.Errorf("the SDK changed the AnthropicStrict schema:\n%s\nwant:\n%s", mustJSON(t, got), mustJSON(t, ours))
	}
}

// What the SDK's transform does to the plain schema: exactly what the AnthropicStrict
// dialect does, in the same words, except two things. It moves "$id" and "$schema" into
// the root's description instead of dropping them; and it keeps "metadata" as a closed
// object without properties, which a model held to it can only fill with {}, where the
// dialect leaves metadata out.
func TestSDKTransformOfPlainSchema(t *testing.T) {
	plain := schemaMap(t, askuser.Definition().InputSchema)
	got := transform(t, plain)

	want := schemaMap(t, askuser.Definition(askuser.AnthropicStrict).InputSchema)
	want["description"] = "{$id: " + plain["$id"].(string) + ", $schema: " + plain["$schema"].(string) + "}"
	want["properties"].(map[string]any)["metadata"] = map[string]any{
		"type":                 "object",
		"description":          "Optional tracking metadata",
		"properties":           map[string]any{},
		"additionalProperties": false,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the SDK's transform of the plain schema:\n%s\nwant:\n%s", mustJSON(t, got), mustJSON(t, want))
	}
}
