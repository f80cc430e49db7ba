// Package stats holds the arithmetic shared over repeated measurements: by the hack/ commands
// that report benchmarks and by the benchmarks themselves.
package stats

import "slices"

// Median is the middle of xs (the mean of the two middle values when their count is even);
// ok is false when xs is empty. xs is left as it was.
func Median(xs []float64) (m float64, ok bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 0 {
		return (s[mid-1] + s[mid]) / 2, true
	}
	return s[mid], true
}
