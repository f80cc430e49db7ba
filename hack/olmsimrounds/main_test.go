package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOrderRotatesRoundByRound(t *testing.T) {
	builds := []build{{name: "a"}, {name: "b"}, {name: bare}}
	names := func(bs []build) (out []string) {
		for _, b := range bs {
			out = append(out, b.name)
		}
		return out
	}
	assert.Equal(t, []string{"a", "b", bare}, names(order(builds, 0)))
	assert.Equal(t, []string{"b", bare, "a"}, names(order(builds, 1)))
	assert.Equal(t, []string{bare, "a", "b"}, names(order(builds, 2)))
	assert.Equal(t, []string{"a", "b", bare}, names(order(builds, 3)))
	assert.Equal(t, []string{"a", "b", bare}, names(builds), "the builds themselves are left as they were")
}

func TestParseBuildsNeedsNamedExistingBinaries(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tollgate")
	require.NoError(t, os.WriteFile(bin, nil, 0o755))
	builds, err := parseBuilds([]string{"before=" + bin, "after=" + bin})
	require.NoError(t, err)
	assert.Equal(t, []build{{"before", bin}, {"after", bin}, {name: bare}}, builds)

	for _, args := range [][]string{nil, {"tollgate"}, {"=" + bin}, {"bare=" + bin}, {"a=" + bin, "a=" + bin}, {"a=/no/such/binary"}} {
		_, err := parseBuilds(args)
		assert.Error(t, err, "%q", args)
	}
}

func TestReportGivesMediansAndRatiosToTheSameRoundsBare(t *testing.T) {
	run := func(p50, flipWrites float64) result {
		var r result
		r.Plans.Latency.P50, r.Flip.Latency.P50 = p50, 2*p50
		r.Plans.Correct, r.Flip.Correct, r.CPU = 800, 200, p50/2
		r.Write.Phases = append(r.Write.Phases, struct {
			Phase string `json:"phase"`
			Total int    `json:"sut_writes_total"`
		}{"flip", int(flipWrites)})
		return r
	}
	builds := []build{{name: "new"}, {name: bare}}
	results := map[string][]result{
		"new": {run(300, 400), run(200, 380), run(240, 390)},
		bare:  {run(150, 218), run(100, 218), run(200, 218)},
	}
	var out bytes.Buffer
	require.NoError(t, report(&out, builds, results))
	assert.Contains(t, out.String(), "new          300 200 240   median 240   to bare 2.00 2.00 1.20, median 2.00×")
	assert.Contains(t, out.String(), "bare         150 100 200   median 150\n")
	assert.Contains(t, out.String(), "new          400 380 390   median 390")
	assert.Contains(t, out.String(), "new          150 100 120   median 120   to bare 2.00 2.00 1.20, median 2.00×")
	assert.Contains(t, out.String(), "CPU beyond the same round's bare approver, per approval (ms)\n  new          75.0 50.0 20.0   median 50.0\n")
	assert.Contains(t, out.String(), "in all runs: 0 wrong approvals, 0 missed")

	results["new"][1].Flip.Wrong = 1
	assert.Error(t, report(&out, builds, results), "a wrong approval fails the report")
	results["new"][1].Flip.Wrong, results[bare][2].Plans.Missed = 0, 1
	assert.Error(t, report(&out, builds, results), "so does a missed one")
}

func TestMedian(t *testing.T) {
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	assert.Equal(t, 0.0, median(nil))
}

func TestQuotedIsOneShellWord(t *testing.T) {
	assert.Equal(t, `'bin/tollgate'`, quoted("bin/tollgate"))
	assert.Equal(t, `'/tmp/it'\''s here/tollgate'`, quoted("/tmp/it's here/tollgate"))
}
