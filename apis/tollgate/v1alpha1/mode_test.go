package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseModeTakesTheTwoModesOnly(t *testing.T) {
	for _, m := range []Mode{ModeEnforce, ModeAudit} {
		got, err := ParseMode(string(m))
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	for _, s := range []string{"", "enforce", "Audit ", "Off"} {
		_, err := ParseMode(s)
		assert.ErrorContains(t, err, "use Enforce or Audit", s)
	}
}
