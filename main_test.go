package askuser

import (
	"testing"
	"time"

	"github.com/askuser-go/askuser/internal/leakcheck"
)

// TestMain fails the run when goroutines started by the tests outlive them.
func TestMain(m *testing.M) { leakcheck.Main(m, 5*time.Second, nil) }

// checkNoLeak fails t when goroutines started during the test are still running at its
// end. Call it first in a test that starts goroutines outside a synctest bubble.
func checkNoLeak(t *testing.T) { leakcheck.Test(t, 2*time.Second) }
