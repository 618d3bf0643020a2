package tui_test

import (
	"testing"
	"time"

	"github.com/askuser-go/askuser/internal/leakcheck"
)

// TestMain fails the run when goroutines started by the tests outlive them: every
// terminal, connection, server and browser tab a test starts must be gone at its end.
func TestMain(m *testing.M) { leakcheck.Main(m, 10*time.Second, stopBrowser) }
