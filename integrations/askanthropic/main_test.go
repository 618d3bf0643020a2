package askanthropic_test

import (
	"testing"
	"time"

	"github.com/askuser-go/askuser/internal/leakcheck"
)

// TestMain fails the run when goroutines started by the tests outlive them.
func TestMain(m *testing.M) { leakcheck.Main(m, 5*time.Second, nil) }
