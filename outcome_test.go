package askuser_test

import (
	"testing"

	. "github.com/askuser-go/askuser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOutcomeText(t *testing.T) {
	for o := Answered; o <= Invalid; o++ {
		b, err := o.MarshalText()
		require.NoError(t, err)
		var back Outcome
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, o, back)
	}
	_, err := Outcome(0).MarshalText()
	assert.Error(t, err)
	assert.Error(t, new(Outcome).UnmarshalText([]byte("maybe")))
	assert.Equal(t, "Outcome(99)", Outcome(99).String())
}
