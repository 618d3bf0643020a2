//go:build !unix

package bench

import "testing"

// cpuTime reports nothing where getrusage is missing.
func cpuTime(*testing.B) (stop func()) { return func() {} }
