package askgenai_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run when goroutines started by the tests outlive them.
func TestMain(m *testing.M) {
	before := len(goroutines())
	code := m.Run()
	if code == 0 {
		if leaked := waitGoroutines(before, 5*time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked by the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// goroutines returns the stacks of the running goroutines but this one and those of the
// runtime and the testing machinery.
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

// waitGoroutines waits for the number of goroutines to fall back to n, and returns the
// stacks of the extra ones if it does not.
func waitGoroutines(n int, within time.Duration) string {
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
