package askuser_test

import (
	"testing"

	. "github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
)

func TestMemStoreKeepsTheStoreContract(t *testing.T) {
	askusertest.TestStore(t, func(t *testing.T) (Store, Store) {
		s := NewMemStore()
		return s, s
	})
}
