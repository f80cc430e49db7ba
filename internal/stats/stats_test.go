package stats

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2}
	m, ok := Median(xs)
	assert.True(t, ok)
	assert.Equal(t, 2.0, m)
	assert.Equal(t, []float64{3, 1, 2}, xs, "the values are left in their order")

	m, ok = Median([]float64{4, 1, 3, 2})
	assert.True(t, ok)
	assert.Equal(t, 2.5, m)

	_, ok = Median(nil)
	assert.False(t, ok)
}
