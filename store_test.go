package askuser_test

import (
	"testing"

	. "github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/askusertest"
	"github.com/askuser-go/askuser/store"
)

func TestMemStoreKeepsTheStoreContract(t *testing.T) {
	askusertest.TestStore(t, func(t *testing.T) (store.Store, store.Store) {
		s := NewMemStore()
		return s, s
	})
}
