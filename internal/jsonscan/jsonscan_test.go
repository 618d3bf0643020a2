package jsonscan

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/askuser-go/askuser/internal/jsonread"
)

// FuzzScannerStringAgreesWithUnmarshal: a string the scanner reads, the reference
// reading (decodeJSON) reads alike, and so does encoding/json when the input is valid
// UTF-8.
func FuzzScannerStringAgreesWithUnmarshal(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"c\"\\d\/e\bf\fg\r"`, `"\u00e9\ud83d\ude00\ud800"`, "\"\xff\"", `"日本語"`, `"\x"`, "\"a\x01\"", `"\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sc := Scanner{B: b}
		got, ok := sc.Str()
		if !ok || !sc.AtEnd() {
			return
		}
		if ref, err := jsonread.Decode(b); err != nil || got != ref {
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
