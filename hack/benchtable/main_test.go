package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	f, err := os.Open("testdata/bench.txt")
	require.NoError(t, err)
	defer f.Close()
	r, err := parse(f)
	require.NoError(t, err)
	assert.Equal(t, []float64{210000, 200000, 400000}, r[metric{"BenchmarkEvaluate/bench", "ns/op"}])
	assert.Equal(t, []float64{1.25, 1.3, 1.2}, r[metric{"BenchmarkEngineOverBareOPA/bench", "engine/bare"}])
	assert.Equal(t, []float64{2.25}, r[metric{"BenchmarkCatalogFlip", "flip/bare"}])
	v, ok := r.median(metric{"BenchmarkEvaluate/bench", "ns/op"})
	assert.True(t, ok)
	assert.InDelta(t, 210000, v, 0)
	_, ok = r.median(metric{"BenchmarkMissing", "ns/op"})
	assert.False(t, ok)
}

func TestMedianOfEvenCount(t *testing.T) {
	r := results{metric{"B", "ns/op"}: {4, 1, 3, 2}}
	v, ok := r.median(metric{"B", "ns/op"})
	assert.True(t, ok)
	assert.InDelta(t, 2.5, v, 1e-9)
}

func TestParseRejectsAValueThatIsNoNumber(t *testing.T) {
	_, err := parse(strings.NewReader("BenchmarkX-2  10  abc ns/op\n"))
	assert.ErrorContains(t, err, `"abc"`)
}

func TestTable(t *testing.T) {
	f, err := os.Open("testdata/bench.txt")
	require.NoError(t, err)
	defer f.Close()
	r, err := parse(f)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, write(&out, r, figures))
	want := `| figure                                                                                     | value    | baseline (same run) | ratio | target             | meets |
| ------------------------------------------------------------------------------------------ | -------- | ------------------- | ----- | ------------------ | ----- |
| Evaluate, benchmark input (10 operands, 5 catalogs): one decision (ns/op)                  | 210.0µs  | 150.0µs             | 1.40× | ≤ 300µs p50        | yes   |
| Evaluate, benchmark input (10 operands, 5 catalogs): allocations per decision              | 1800     | 1400                | 1.29× | ≤ 1,546 (5× fewer) | no    |
| Evaluate, benchmark input (10 operands, 5 catalogs): expressions evaluated per decision    | 1011     | —                   | —     | —                  | —     |
| Evaluate, benchmark input (10 operands, 5 catalogs): bytes allocated per decision          | 91234 B  | 70000 B             | 1.30× | —                  | —     |
| Evaluate, benchmark input (10 operands, 5 catalogs): engine over bare OPA, interleaved     | 200.0µs  | 160.0µs             | 1.25× | —                  | —     |
| Evaluate, benchmark input (10 operands, 5 catalogs): bare OPA, input given at prepare time | 100.0µs  | 150.0µs             | 0.67× | —                  | —     |
| Evaluate, held by four denials: one decision (ns/op)                                       | 600.0µs  | 500.0µs             | 1.20× | —                  | —     |
| Evaluate, held by four denials: allocations per decision                                   | 2500     | 2400                | 1.04× | —                  | —     |
| Evaluate, held by four denials: bytes allocated per decision                               | 120000 B | 110000 B            | 1.09× | —                  | —     |
| Scale: gates (N Subscriptions)                                                             | 200      | —                   | —     | —                  | —     |
| Scale: catalog flip reaches every gate                                                     | 900.00ms | 400.00ms            | 2.25× | ratio ≤ 1.5        | no    |
| Scale: catalog flip vs bare writes on 16 workers (reference)                               | 900.00ms | 300.00ms            | 3.00× | —                  | —     |
| Scale: manager start to every gate decided                                                 | 3.00s    | 400.00ms            | 7.50× | —                  | —     |
| Scale: heap in use once every gate is decided (manager + test client)                      | 45.5 MiB | —                   | —     | —                  | —     |

Each figure is the median of its runs (runs per figure: 1, 3).
`
	assert.Equal(t, want, out.String())
}

func TestMissingFiguresAreLeftOut(t *testing.T) {
	r, err := parse(strings.NewReader("BenchmarkEvaluate/bench-2  100  500000 ns/op\n"))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, write(&out, r, figures))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 5, out.String())
	assert.Contains(t, lines[2], "500.0µs")
	assert.Contains(t, lines[2], "| —                   |") // no baseline in this run
	assert.Contains(t, lines[2], "| no    |")
}

func TestNoFigureIsAnError(t *testing.T) {
	r, err := parse(strings.NewReader("PASS\nok  \tpkg\t0.1s\n"))
	require.NoError(t, err)
	assert.ErrorIs(t, write(&bytes.Buffer{}, r, figures), errNoFigures)
}

func TestExtensionFigures(t *testing.T) {
	line := "BenchmarkExtensionPins-2  1  37984239217 ns/op  5.13 bare-apiserver-cpu-s  4.776 bare-s  1000 extensions  2.000 fetches  16.42 pins-apiserver-cpu-s  27.27 pins-s  5.710 pins/bare  21766 mgr-B/ext\n"
	r, err := parse(strings.NewReader(line))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, write(&out, r, figures))
	assert.Contains(t, out.String(), "| Extensions: a new catalog revision to every pin moved (bare: the same patches, 4 workers) | 27.27s ")
	assert.Contains(t, out.String(), "| 4.78s               | 5.71× |")
	assert.Contains(t, out.String(), "| Extensions: catalog content fetches (two revisions, two digests)")
	assert.Contains(t, out.String(), "| 1 per digest | yes   |")
	assert.Contains(t, out.String(), "| 16.42s | 5.13s               | 3.20× |")
}
