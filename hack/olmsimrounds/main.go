// Command olmsimrounds runs olmsim (../shared/olmsim) at 1,000 namespaces with --flip for each
// build of Tollgate given and for olmsim's bare approver, in rounds whose order rotates round
// by round, and prints one table per figure: each run's value, the median per build, and the
// median of each build's ratios to the bare approver of the same round. One run takes about
// two minutes; a build-to-build change of a tenth needs eight rounds or more
// (docs/performance.md).
//
// Beside the latencies it reports what a run cost the machine: the CPU time of olmsim and
// everything it ran and waited for (the API server, etcd, the system under test); the
// machine's CPU in the plans and the flip phases, and the plans phase's by process; and, for
// each build, the CPU beyond the same round's bare approver divided by the build's approvals.
// From the API server's audit log it also counts each build's writes in the plans phase per
// tenant, for the tenants it approved and for those it held.
// On a machine whose cores are all busy the latencies follow every process's load; the CPU
// beyond the bare approver is what Tollgate costs, its own work and what it makes the API
// server and etcd do. It reads /proc, so it runs on Linux.
//
//	make build && go -C ../shared/olmsim build -o "$PWD/bin/olmsim" .
//	go run ./hack/olmsimrounds -rounds 8 before=bin/tollgate-before after=bin/tollgate
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/internal/stats"
)

// bare names olmsim's own approver among the builds.
const bare = "bare"

// build is one system under test: its name, the tollgate binary to run (none for bare), and
// the directory of the CRDs olmsim installs for it (config/crd/bases unless given).
type build struct{ name, binary, crds string }

// result is what one olmsim run reported (its --json file), and the CPU time it took.
type result struct {
	// CPU is the user and system time of olmsim and of its children it waited for (the
	// control plane and the system under test), in seconds; not part of olmsim's report.
	CPU float64 `json:"-"`
	// PhaseCPU is the CPU time in each of olmsim's phases, in seconds, by phase name and by
	// where it is counted: the machine, and olmsim's processes by part; not part of
	// olmsim's report.
	PhaseCPU map[string]map[string]float64 `json:"-"`
	// Tenants are the system under test's writes in the plans phase per tenant, approved or
	// held, from the audit log; not part of olmsim's report.
	Tenants tenants `json:"-"`
	Plans   phase   `json:"plans"`
	Flip    phase   `json:"flip"`
	Write   struct {
		Phases []phaseWrites `json:"phases"`
		// ByResource is the whole run's writes by verb and resource ("patch
		// installplans.operators.coreos.com", "create events"), from the audit log.
		ByResource map[string]int `json:"sut_writes_by_verb_and_resource"`
	} `json:"writes"`
}

// phaseWrites is one phase of olmsim's write report: its name, how long it took, and the
// system under test's writes in it. The phases follow each other from the system under
// test's start.
type phaseWrites struct {
	Phase   string  `json:"phase"`
	Seconds float64 `json:"seconds"`
	Total   int     `json:"sut_writes_total"`
}

type phase struct {
	Correct int `json:"correct_approvals"`
	Wrong   int `json:"wrong_approvals"`
	Missed  int `json:"missed_approvals"`
	Latency struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
	} `json:"latency_ms"`
}

// figures are the rows printed, each read from a result.
// A latency figure (added) also gets, per build, what it adds to the bare approver of the same
// round, in milliseconds: the figure an admin reads ("Tollgate adds 40 ms to an approval"),
// steadier than the ratio when the bare approver's own latency is mostly queueing.
var figures = []struct {
	name   string
	format string
	value  func(result) float64
	added  bool
}{
	{"approval p50 (ms)", "%.0f", func(r result) float64 { return r.Plans.Latency.P50 }, true},
	{"approval p99 (ms)", "%.0f", func(r result) float64 { return r.Plans.Latency.P99 }, true},
	// olmsim times a flip from the write that makes each tenant's plan approvable (OLM's
	// status write with the new observedGeneration) to that plan's approval: each tenant's own
	// approval, the same measure for every build.
	{"flip p50 (ms)", "%.0f", func(r result) float64 { return r.Flip.Latency.P50 }, true},
	{"flip p99 (ms)", "%.0f", func(r result) float64 { return r.Flip.Latency.P99 }, true},
	{"writes per approval in the plans phase, system under test", "%.2f", func(r result) float64 { return r.perApproval("plans") }, false},
	{"writes per approved tenant in the plans phase, system under test", "%.2f", func(r result) float64 { return r.Tenants.ApprovedWrites }, false},
	{"writes per held tenant in the plans phase, system under test", "%.2f", func(r result) float64 { return r.Tenants.HeldWrites }, false},
	{"writes in the flip window", "%.0f", func(r result) float64 { return float64(r.flipWrites()) }, false},
	{"machine CPU in the plans phase (s)", "%.1f", func(r result) float64 { return r.PhaseCPU["plans"][machine] }, false},
	{"CPU in the plans phase, system under test (s)", "%.1f", func(r result) float64 { return r.PhaseCPU["plans"][sutPart] }, false},
	{"CPU in the plans phase, API server (s)", "%.1f", func(r result) float64 { return r.PhaseCPU["plans"][apiServer] }, false},
	{"CPU in the plans phase, etcd (s)", "%.1f", func(r result) float64 { return r.PhaseCPU["plans"][etcdPart] }, false},
	{"CPU in the plans phase, olmsim with its bare approver (s)", "%.1f", func(r result) float64 { return r.PhaseCPU["plans"][harness] }, false},
	{"machine CPU in the flip phase (s)", "%.1f", func(r result) float64 { return r.PhaseCPU["flip"][machine] }, false},
	{"CPU of the whole run (s)", "%.1f", func(r result) float64 { return r.CPU }, false},
}

// beyond are the rows of CPU beyond the bare approver per approval: a CPU figure and the
// approvals it is divided by.
var beyond = []struct {
	name      string
	cpu       func(result) float64
	approvals func(result) int
}{
	{"plans phase", func(r result) float64 { return r.PhaseCPU["plans"][machine] }, func(r result) int { return r.Plans.Correct }},
	{"flip phase", func(r result) float64 { return r.PhaseCPU["flip"][machine] }, func(r result) int { return r.Flip.Correct }},
	{"whole run", func(r result) float64 { return r.CPU }, func(r result) int { return r.Plans.Correct + r.Flip.Correct }},
}

func (r result) flipWrites() int { return r.phaseWrites("flip") }

// phaseWrites is the system under test's writes in the phase name.
func (r result) phaseWrites(name string) int {
	for _, p := range r.Write.Phases {
		if p.Phase == name {
			return p.Total
		}
	}
	return 0
}

// perApproval is the system under test's writes in the plans phase per correct approval of
// that phase (0 when it made none): the approvals, the gates' status, Events.
func (r result) perApproval(name string) float64 {
	if r.Plans.Correct == 0 {
		return 0
	}
	return float64(r.phaseWrites(name)) / float64(r.Plans.Correct)
}

func main() {
	olmsim := flag.String("olmsim", "bin/olmsim", "the olmsim binary (go -C ../shared/olmsim build -o \"$PWD/bin/olmsim\" .)")
	rounds := flag.Int("rounds", 8, "rounds to run; each runs every build and the bare approver once")
	out := flag.String("out", "", "directory for each run's JSON and log (default: a new temporary directory)")
	namespaces := flag.Int("namespaces", 1000, "olmsim's --namespaces")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./hack/olmsimrounds [flags] NAME=TOLLGATE_BINARY[,CRD_DIRECTORY]...\n\n"+
			"Runs olmsim --flip for each build and for olmsim's bare approver in every round, the order\n"+
			"rotated round by round, and prints each figure per run, its median, and each build's\n"+
			"median ratio to the bare approver of the same round. Run from the project root with\n"+
			"KUBEBUILDER_ASSETS set (as the Makefile sets it). A build's CRDs are config/crd/bases unless\n"+
			"CRD_DIRECTORY is given (to compare a change of the CRDs).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	builds, err := parseBuilds(flag.Args())
	if err == nil && *rounds < 1 {
		err = fmt.Errorf("-rounds %d: give at least 1", *rounds)
	}
	if err == nil {
		err = run(*olmsim, *out, *namespaces, *rounds, builds)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "olmsimrounds:", err)
		os.Exit(1)
	}
}

// parseBuilds reads NAME=BINARY arguments, and adds the bare approver.
func parseBuilds(args []string) ([]build, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("name at least one build, e.g. tollgate=bin/tollgate (see -h)")
	}
	builds := []build{}
	for _, a := range args {
		name, binary, ok := strings.Cut(a, "=")
		binary, crds, withCRDs := strings.Cut(binary, ",")
		switch {
		case !ok || name == "" || binary == "" || withCRDs && crds == "":
			return nil, fmt.Errorf("%q: give NAME=TOLLGATE_BINARY or NAME=TOLLGATE_BINARY,CRD_DIRECTORY", a)
		case name == bare || slices.ContainsFunc(builds, func(b build) bool { return b.name == name }):
			return nil, fmt.Errorf("%q: the name %s is taken", a, name)
		}
		for _, f := range []string{binary, crds} {
			if _, err := os.Stat(f); f != "" && err != nil {
				return nil, fmt.Errorf("%q: %w", a, err)
			}
		}
		if !withCRDs {
			crds = "config/crd/bases"
		}
		builds = append(builds, build{name, binary, crds})
	}
	return append(builds, build{name: bare}), nil
}

// order is the builds of round i (from 0), rotated by i so that no build always runs first.
func order(builds []build, i int) []build {
	k := i % len(builds)
	return append(slices.Clone(builds[k:]), builds[:k]...)
}

func run(olmsim, out string, namespaces, rounds int, builds []build) error {
	if _, err := os.Stat(olmsim); err != nil {
		return fmt.Errorf("-olmsim: %w (build it: go -C ../shared/olmsim build -o \"$PWD/bin/olmsim\" .)", err)
	}
	if out == "" {
		var err error
		if out, err = os.MkdirTemp("", "olmsimrounds-"); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(out, 0o750); err != nil {
		return err
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return fmt.Errorf("KUBEBUILDER_ASSETS is not set: set it as the Makefile does (bin/k8s/...)")
	}
	fmt.Fprintf(os.Stderr, "%d rounds of %d runs, about two minutes each; each run's JSON and log go to %s\n", rounds, len(builds), out)
	results := map[string][]result{}
	for i := range rounds {
		for _, b := range order(builds, i) {
			start := time.Now()
			r, err := runOnce(olmsim, out, namespaces, b, i+1)
			if err != nil {
				return err
			}
			results[b.name] = append(results[b.name], r)
			fmt.Fprintf(os.Stderr, "round %d of %d, %s: approval p50 %.0f ms, flip p50 %.0f ms, CPU %.0f s, %d wrong, %d missed (%s)\n",
				i+1, rounds, b.name, r.Plans.Latency.P50, r.Flip.Latency.P50, r.CPU, r.Plans.Wrong+r.Flip.Wrong,
				r.Plans.Missed+r.Flip.Missed, time.Since(start).Round(time.Second))
		}
	}
	return report(os.Stdout, builds, results)
}

// runOnce runs olmsim once for b and reads its JSON. The run's JSON and log are NAME-ROUND.json
// and .log in out, the CPU it took NAME-ROUND.cpu.json; olmsim's own directory (the API
// server's and the manager's logs, the audit log) is NAME-ROUND.
func runOnce(olmsim, out string, namespaces int, b build, round int) (result, error) {
	base := filepath.Join(out, fmt.Sprintf("%s-%d", b.name, round))
	args := []string{"--namespaces", fmt.Sprint(namespaces), "--flip", "--json", base + ".json", "--out", base}
	if b.binary != "" { // olmsim runs both commands with /bin/sh
		kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
		args = append(args, "--crds", b.crds,
			"--setup-cmd", quoted(kubectl)+" create namespace tollgate-system",
			"--manager-cmd", "exec "+quoted(b.binary)+" run --global-catalog-namespace olm --metrics-bind-address 0 --health-probe-bind-address 0")
	}
	cmd, start, samples, err := runSampled(olmsim, args, base+".log")
	if err != nil {
		return result{}, fmt.Errorf("olmsim for %s, round %d: %w (its log: %s.log)", b.name, round, err, base)
	}
	data, err := os.ReadFile(base + ".json")
	if err != nil {
		return result{}, err
	}
	var r result
	if err := json.Unmarshal(data, &r); err != nil {
		return result{}, fmt.Errorf("%s.json: %w", base, err)
	}
	r.CPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	logged, err := os.ReadFile(base + ".log")
	if err != nil {
		return result{}, err
	}
	sutStart, err := sutStarted(logged, start)
	if err != nil {
		return result{}, fmt.Errorf("%s.log: %w", base, err)
	}
	r.PhaseCPU = phaseCPU(samples, sutStart, r.Write.Phases)
	if from, to, ok := phaseWindow(sutStart, r.Write.Phases, "plans"); ok && b.binary != "" {
		if r.Tenants, err = tenantWrites(filepath.Join(base, "audit.log"), from, to); err != nil {
			return result{}, err
		}
	}
	cpu, err := json.MarshalIndent(map[string]any{"cpu_seconds": r.CPU, "cpu_seconds_by_phase": r.PhaseCPU,
		"plans_tenants": r.Tenants}, "", "  ")
	if err != nil {
		return result{}, err
	}
	return r, os.WriteFile(base+".cpu.json", append(cpu, '\n'), 0o600)
}

// runSampled runs olmsim with args, its output to the file logPath, and samples the CPU time
// of the machine and of olmsim's processes while it runs. It returns the finished command,
// when it started, and the samples.
func runSampled(olmsim string, args []string, logPath string) (*exec.Cmd, time.Time, []sample, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, time.Time{}, nil, err
	}
	defer func() { _ = log.Close() }()
	cmd := exec.Command(olmsim, args...) //nolint:gosec // the olmsim binary the person running this names
	cmd.Stdout, cmd.Stderr = log, log
	start, stop := time.Now(), make(chan struct{})
	if err := cmd.Start(); err != nil {
		return nil, start, nil, err
	}
	sampled := sampleCPU(cmd.Process.Pid, 100*time.Millisecond, stop)
	err = cmd.Wait()
	close(stop)
	return cmd, start, <-sampled, err
}

// quoted is s as one word of /bin/sh.
func quoted(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// report prints, for each figure, each build's value per round and median, and each build's
// median ratio to the bare approver of the same round; then the wrong and the missed
// approvals, and fails when there is one.
func report(w io.Writer, builds []build, results map[string][]result) error {
	for _, f := range figures {
		fmt.Fprintf(w, "\n%s\n", f.name)
		for _, b := range builds {
			values := mapped(results[b.name], f.value)
			fmt.Fprintf(w, "  %-12s %s   median "+f.format, b.name, joined(values, f.format), median(values))
			// No ratio where the bare approver has nothing to compare with (the system under
			// test's own process: the bare approver runs inside olmsim).
			if baseline := mapped(results[bare], f.value); b.name != bare && slices.ContainsFunc(baseline, func(x float64) bool { return x != 0 }) {
				ratios := ratios(values, baseline)
				fmt.Fprintf(w, "   to bare %s, median %.2f×", joined(ratios, "%.2f"), median(ratios))
				if f.added {
					fmt.Fprintf(w, "\n  %-12s added to bare %s", "", spread(differences(values, baseline)))
				}
			}
			fmt.Fprintln(w)
		}
	}
	for _, row := range beyond {
		fmt.Fprintf(w, "\nCPU beyond the same round's bare approver per approval, %s (ms)\n", row.name)
		for _, b := range builds {
			if b.name != bare {
				ms := cpuBeyond(results[b.name], results[bare], row.cpu, row.approvals)
				fmt.Fprintf(w, "  %-12s %s   median %.1f\n", b.name, joined(ms, "%.1f"), median(ms))
			}
		}
	}
	for _, b := range builds {
		if b.name != bare {
			writesFor(w, b.name, results[b.name])
		}
	}
	wrong, missed := 0, 0
	for _, rs := range results {
		for _, r := range rs {
			wrong += r.Plans.Wrong + r.Flip.Wrong
			missed += r.Plans.Missed + r.Flip.Missed
		}
	}
	fmt.Fprintf(w, "\nin all runs: %d wrong approvals, %d missed\n", wrong, missed)
	if wrong+missed > 0 {
		return fmt.Errorf("%d wrong and %d missed approvals: see the runs' logs", wrong, missed)
	}
	return nil
}

// writesFor prints what the build's writes were for: each verb and resource of the whole run,
// per approval (of both phases), round by round and the median; an approval is one patch of
// its plan, and whatever else is written around it shows beside it.
func writesFor(w io.Writer, name string, rs []result) {
	keys := map[string]bool{}
	for _, r := range rs {
		for k := range r.Write.ByResource {
			keys[k] = true
		}
	}
	if len(keys) == 0 {
		return
	}
	fmt.Fprintf(w, "\nwrites per approval by verb and resource, whole run, %s\n", name)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		per := mapped(rs, func(r result) float64 {
			if n := r.Plans.Correct + r.Flip.Correct; n > 0 {
				return float64(r.Write.ByResource[k]) / float64(n)
			}
			return 0
		})
		fmt.Fprintf(w, "  %-48s %s   median %.2f\n", k, joined(per, "%.2f"), median(per))
	}
}

// cpuBeyond is, round by round, the CPU time of a build's run beyond the bare approver's run
// of the same round, per approval the build made, in milliseconds.
func cpuBeyond(rs, bareRuns []result, cpu func(result) float64, approvals func(result) int) []float64 {
	out := make([]float64, min(len(rs), len(bareRuns)))
	for i := range out {
		if n := approvals(rs[i]); n > 0 {
			out[i] = 1000 * (cpu(rs[i]) - cpu(bareRuns[i])) / float64(n)
		}
	}
	return out
}

func mapped(rs []result, f func(result) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

// ratios divides each value by the baseline of the same round (0 where the baseline is 0).
func ratios(values, baseline []float64) []float64 {
	out := make([]float64, min(len(values), len(baseline)))
	for i := range out {
		if baseline[i] != 0 {
			out[i] = values[i] / baseline[i]
		}
	}
	return out
}

// differences subtracts the baseline of the same round from each value.
func differences(values, baseline []float64) []float64 {
	out := make([]float64, min(len(values), len(baseline)))
	for i := range out {
		out[i] = values[i] - baseline[i]
	}
	return out
}

// spread is the rounds' values, signed, then their median and range: "+31 +40 +52, median
// +40 (+31 to +52) ms".
func spread(xs []float64) string {
	if len(xs) == 0 {
		return "none"
	}
	return fmt.Sprintf("%s, median %+.0f (%+.0f to %+.0f) ms", joined(xs, "%+.0f"), median(xs), slices.Min(xs), slices.Max(xs))
}

// median is the middle of xs, 0 when there is none.
func median(xs []float64) float64 {
	m, _ := stats.Median(xs)
	return m
}

func joined(xs []float64, format string) string {
	words := make([]string, len(xs))
	for i, x := range xs {
		words[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(words, " ")
}
