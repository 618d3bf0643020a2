// Package leakcheck fails tests whose goroutines outlive them. It is for the tests of
// the repository's modules.
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Main runs the tests of m and exits. When they pass, it fails the run if goroutines
// that they started are still running within after they end. after, when not nil, runs
// between the tests and the check, to stop what TestMain itself started.
func Main(m *testing.M, within time.Duration, after func()) {
	before := len(goroutines())
	code := m.Run()
	if after != nil {
		after()
	}
	if code == 0 {
		if leaked := wait(before, within); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked by the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// Test fails t when goroutines started during the test are still running within after
// its end. Call it first in a test that starts goroutines outside a synctest bubble.
func Test(t testing.TB, within time.Duration) {
	t.Helper()
	before := len(goroutines())
	t.Cleanup(func() {
		if leaked := wait(before, within); leaked != "" {
			t.Errorf("goroutines leaked:\n%s", leaked)
		}
	})
}

// goroutines returns the stacks of the running goroutines but this one and those of the
// runtime and the testing machinery (signal handling, the fuzzing engine).
func goroutines() []string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 || strings.Contains(g, "os/signal.") || strings.Contains(g, "testing.(*F)") ||
			strings.Contains(g, "testing/internal/") || strings.Contains(g, "internal/fuzz.") {
			continue
		}
		out = append(out, g)
	}
	return out
}

// wait waits for the number of goroutines to fall back to n, and returns the stacks of
// the extra ones if it does not.
func wait(n int, within time.Duration) string {
	deadline := time.Now().Add(within)
	for {
		gs := goroutines()
		if len(gs) <= n {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(gs, "\n\n")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
