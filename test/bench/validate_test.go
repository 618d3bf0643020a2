package bench

import (
	"testing"

	"github.com/askuser-go/askuser"
)

// BenchmarkParseArguments is the cost of validating the model's arguments: a typical
// one-question call, the largest shape (four questions of four options with previews),
// and that shape grown to just under the byte bound.
func BenchmarkParseArguments(b *testing.B) {
	for _, c := range []struct {
		name string
		args []byte
	}{{"typical", typicalArgs}, {"4q4o-previews", fourArgs}, {"max-256KiB", maxArgs}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.args)))
			stop := cpuTime(b)
			for b.Loop() {
				if _, err := askuser.ParseArguments(c.args); err != nil {
					b.Fatal(err)
				}
			}
			stop()
		})
	}
}
