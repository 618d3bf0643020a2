//go:build unix

package bench

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime measures the CPU time the process spends, as getrusage counts it (user and
// system, every thread: the device goroutines and the garbage collector included), from
// now until the returned func is called, and reports it per op as cpu-ns/op. On a
// machine shared with other work, wall time per op grows with the load; CPU time much
// less, so that a comparison taken in one run stays fair.
func cpuTime(b *testing.B) (stop func()) {
	start := rusage()
	return func() {
		b.ReportMetric(float64(rusage()-start)/float64(b.N), "cpu-ns/op")
	}
}

func rusage() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
