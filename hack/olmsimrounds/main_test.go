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

func TestParseBuildsNeedsNamedExistingBinariesAndCRDs(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tollgate")
	require.NoError(t, os.WriteFile(bin, nil, 0o755))
	crds := t.TempDir()
	builds, err := parseBuilds([]string{"before=" + bin + "," + crds, "after=" + bin})
	require.NoError(t, err)
	assert.Equal(t, []build{{"before", bin, crds}, {"after", bin, "config/crd/bases"}, {name: bare}}, builds)

	for _, args := range [][]string{nil, {"tollgate"}, {"=" + bin}, {"bare=" + bin}, {"a=" + bin, "a=" + bin},
		{"a=/no/such/binary"}, {"a=" + bin + ","}, {"a=" + bin + ",/no/such/crds"}} {
		_, err := parseBuilds(args)
		assert.Error(t, err, "%q", args)
	}
}

func TestReportGivesMediansAndRatiosToTheSameRoundsBare(t *testing.T) {
	run := func(p50, flipWrites float64) result {
		var r result
		r.Plans.Latency.P50, r.Flip.Latency.P50 = p50, 2*p50
		r.Plans.Correct, r.Flip.Correct, r.CPU = 800, 200, p50/2
		r.PhaseCPU = map[string]map[string]float64{"plans": {machine: p50 / 10, apiServer: p50 / 20}, "flip": {machine: p50 / 100}}
		r.Write.Phases = append(r.Write.Phases, phaseWrites{Phase: "plans", Total: int(8 * p50)}, phaseWrites{Phase: "flip", Total: int(flipWrites)})
		r.Write.ByResource = map[string]int{"patch installplans.operators.coreos.com": 1000, "update upgradegates.tollgate.dev/status": int(4 * p50)}
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
	assert.Contains(t, out.String(), "median 2.00×\n               added to bare +150 +100 +40, median +100 (+40 to +150) ms\n", "what Tollgate adds, round by round")
	assert.Contains(t, out.String(), "writes per approval in the plans phase, system under test\n  new          3.00 2.00 2.40   median 2.40")
	assert.Contains(t, out.String(), "bare         150 100 200   median 150\n")
	assert.Contains(t, out.String(), "new          400 380 390   median 390")
	assert.Contains(t, out.String(), "new          150.0 100.0 120.0   median 120.0   to bare 2.00 2.00 1.20, median 2.00×")
	assert.Contains(t, out.String(), "CPU in the plans phase, system under test (s)\n  new          0.0 0.0 0.0   median 0.0\n", "no ratio to a baseline of nothing")
	assert.Contains(t, out.String(), "CPU in the plans phase, API server (s)\n  new          15.0 10.0 12.0   median 12.0   to bare 2.00 2.00 1.20, median 2.00×")
	assert.Contains(t, out.String(), "CPU beyond the same round's bare approver per approval, whole run (ms)\n  new          75.0 50.0 20.0   median 50.0\n")
	assert.Contains(t, out.String(), "CPU beyond the same round's bare approver per approval, plans phase (ms)\n  new          18.8 12.5 5.0   median 12.5\n")
	assert.Contains(t, out.String(), "CPU beyond the same round's bare approver per approval, flip phase (ms)\n  new          7.5 5.0 2.0   median 5.0\n")
	assert.Contains(t, out.String(), "writes per approval by verb and resource, whole run, new\n"+
		"  patch installplans.operators.coreos.com          1.00 1.00 1.00   median 1.00\n"+
		"  update upgradegates.tollgate.dev/status          1.20 0.80 0.96   median 0.96\n")
	assert.NotContains(t, out.String(), "whole run, bare", "the bare approver's writes are olmsim's own")
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
	at := func(s float64, machineCPU, api float64) sample {
		return sample{t0.Add(time.Duration(s * float64(time.Second))), map[string]float64{machine: machineCPU, apiServer: api}}
	}
	samples := []sample{at(0, 10, 0), at(10, 20, 4), at(20, 40, 12)}
	phases := []phaseWrites{{Phase: "startup", Seconds: 5}, {Phase: "plans", Seconds: 10}, {Phase: "flip", Seconds: 10}}
	got := phaseCPU(samples, t0, phases)
	assert.InDelta(t, 5.0, got["startup"][machine], 1e-9)
	assert.InDelta(t, 15.0, got["plans"][machine], 1e-9, "5 of the first ten seconds' 10, 5 of the next ten's 20")
	assert.InDelta(t, 6.0, got["plans"][apiServer], 1e-9)
	assert.InDelta(t, 10.0, got["flip"][machine], 1e-9, "up to the last sample, none after it")
	assert.InDelta(t, 0.0, got["flip"][etcdPart], 1e-9, "a part never seen took none")
}

func TestParseStatAndParts(t *testing.T) {
	p, ok := parseStat("4242 (kube-apiserver) S 4200 4242 4200 0 -1 4194560 100 0 0 0 1234 566 0 0 20 0 12 0 99 1 2")
	require.True(t, ok)
	assert.Equal(t, proc{ppid: 4200, comm: "kube-apiserver", cpu: 18.0}, p)
	p, ok = parseStat("7 (a (b) c) R 1 7 1 0 -1 0 0 0 0 0 50 50 0 0 20 0 1 0 5 1 2")
	require.True(t, ok, "a command name with spaces and parentheses")
	assert.Equal(t, proc{ppid: 1, comm: "a (b) c", cpu: 1.0}, p)
	for _, line := range []string{"", "1 (x", "1 (x) S", "1 (x) S y 1 1 0 -1 0 0 0 0 0 1 1"} {
		_, ok := parseStat(line)
		assert.False(t, ok, "%q", line)
	}

	procs := map[int]proc{1: {}, 10: {ppid: 1}, 11: {ppid: 10, comm: "kube-apiserver"}, 12: {ppid: 10, comm: "sh"}, 13: {ppid: 12, comm: "tollgate"}, 20: {ppid: 1}}
	assert.True(t, under(procs, 13, 10))
	assert.True(t, under(procs, 10, 10))
	assert.False(t, under(procs, 20, 10))
	assert.False(t, under(procs, 99, 10), "a process that is gone")
	assert.Equal(t, harness, partOf(10, 10, "olmsim"))
	assert.Equal(t, apiServer, partOf(11, 10, "kube-apiserver"))
	assert.Equal(t, etcdPart, partOf(14, 10, "etcd"))
	assert.Equal(t, sutPart, partOf(13, 10, "tollgate"))
}

func TestTallyKeepsEndedProcesses(t *testing.T) {
	seen := map[int]counted{}
	assert.Equal(t, map[string]float64{apiServer: 5, sutPart: 3}, tally(seen, map[int]counted{1: {apiServer, 5}, 2: {sutPart, 1}, 3: {sutPart, 2}}))
	assert.Equal(t, map[string]float64{apiServer: 6, sutPart: 4}, tally(seen, map[int]counted{1: {apiServer, 6}, 3: {sutPart, 3}}),
		"process 2 has ended: its last second still counts")
}

func TestProcessCPUSeesThisTestsOwnProcess(t *testing.T) {
	cpu := processCPU(os.Getpid())
	assert.Equal(t, harness, cpu[os.Getpid()].part, "the root's own CPU time is counted as olmsim's")
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
