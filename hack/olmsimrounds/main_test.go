package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

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
		r.PhaseCPU = map[string]float64{"plans": p50 / 10, "flip": p50 / 100}
		r.Write.Phases = append(r.Write.Phases, phaseWrites{Phase: "flip", Total: int(flipWrites)})
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
	assert.Contains(t, out.String(), "new          150.0 100.0 120.0   median 120.0   to bare 2.00 2.00 1.20, median 2.00×")
	assert.Contains(t, out.String(), "CPU beyond the same round's bare approver per approval, whole run (ms)\n  new          75.0 50.0 20.0   median 50.0\n")
	assert.Contains(t, out.String(), "CPU beyond the same round's bare approver per approval, plans phase (ms)\n  new          18.8 12.5 5.0   median 12.5\n")
	assert.Contains(t, out.String(), "CPU beyond the same round's bare approver per approval, flip phase (ms)\n  new          7.5 5.0 2.0   median 5.0\n")
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

func TestBusyOfCountsAllButIdleAndIowait(t *testing.T) {
	busy, err := busyOf("cpu  100 20 30 5000 70 1 2 3 40 0")
	require.NoError(t, err)
	assert.InDelta(t, 1.56, busy, 1e-9, "user, nice, system, irq, softirq and steal, in hundredths of a second")
	for _, line := range []string{"", "intr 1 2 3", "cpu 1 2 3", "cpu  1 2 x 4 5 6 7 8"} {
		_, err := busyOf(line)
		assert.Error(t, err, "%q", line)
	}
}

func TestPhaseCPUInterpolatesBetweenSamples(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 23, 59, 0, 0, time.UTC)
	samples := []sample{{t0, 10}, {t0.Add(10 * time.Second), 20}, {t0.Add(20 * time.Second), 40}}
	phases := []phaseWrites{{Phase: "startup", Seconds: 5}, {Phase: "plans", Seconds: 10}, {Phase: "flip", Seconds: 10}}
	got := phaseCPU(samples, t0, phases)
	assert.InDelta(t, 5.0, got["startup"], 1e-9)
	assert.InDelta(t, 15.0, got["plans"], 1e-9, "5 of the first ten seconds' 10, 5 of the next ten's 20")
	assert.InDelta(t, 10.0, got["flip"], 1e-9, "up to the last sample, none after it")
}

func TestSUTStartedReadsOlmsimsLog(t *testing.T) {
	runStart := time.Date(2026, 11, 26, 23, 59, 50, 0, time.UTC)
	log := "olmsim 23:59:50.100 output directory /tmp/x\n" +
		"I1126 23:59:59.000000 1 transport.go:356] system under test: not olmsim's line\n" +
		"olmsim 00:00:01.250 system under test: built-in \"correct\" approver (as user olmsim-sut)\n"
	at, err := sutStarted([]byte(log), runStart)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 11, 27, 0, 0, 1, 250e6, time.UTC), at, "past midnight is the next day")

	_, err = sutStarted([]byte("olmsim 23:59:50.100 output directory /tmp/x\n"), runStart)
	assert.Error(t, err)
}
