package main

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc's times on Linux: hundredths of a second.
const userHZ = 100

// Where CPU time is counted: the whole machine, and olmsim's processes by their part.
const (
	machine   = "machine"
	apiServer = "API server"
	etcdPart  = "etcd"
	sutPart   = "system under test"
	harness   = "olmsim"
)

// parts are the processes' parts, in the order they are reported.
var parts = []string{sutPart, apiServer, etcdPart, harness}

// sample is the CPU time since boot (the machine's) or since start (a part's) at one
// instant, in seconds, by where it is counted.
type sample struct {
	at  time.Time
	cpu map[string]float64
}

// sampleCPU reads the machine's busy CPU time, and that of the processes olmsim (pid root)
// started by their part, every interval until stop is closed, then sends what it read.
func sampleCPU(root int, interval time.Duration, stop <-chan struct{}) <-chan []sample {
	done := make(chan []sample, 1)
	go func() {
		var samples []sample
		seen := map[int]counted{} // every process of olmsim's seen so far, as last seen
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if busy, err := machineBusy(); err == nil {
				cpu := tally(seen, processCPU(root))
				cpu[machine] = busy
				samples = append(samples, sample{time.Now(), cpu})
			}
			select {
			case <-stop:
				done <- samples
				return
			case <-tick.C:
			}
		}
	}()
	return done
}

// machineBusy is the busy CPU time of all the machine's cores since boot (/proc/stat's cpu
// line without idle and iowait), in seconds.
func machineBusy() (float64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	return busyOf(string(line))
}

func busyOf(cpuLine string) (float64, error) {
	fields := strings.Fields(cpuLine)
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", cpuLine)
	}
	busy := 0.0
	// user nice system idle iowait irq softirq steal; guest time is counted in user already.
	for i, f := range fields[1:9] {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %q: %w", cpuLine, err)
		}
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy / userHZ, nil
}

// proc is one process as /proc/PID/stat gives it.
type proc struct {
	ppid int
	comm string
	cpu  float64 // user and system time, in seconds
}

// tally adds the processes read now to those seen before (a process that has ended stays at
// what it was last seen at, so a part's time never falls) and sums their CPU time by part.
func tally(seen, now map[int]counted) map[string]float64 {
	maps.Copy(seen, now)
	cpu := map[string]float64{}
	for _, c := range seen {
		cpu[c.part] += c.cpu
	}
	return cpu
}

// counted is a process's CPU time (user and system, in seconds) and the part it counts for.
type counted struct {
	part string
	cpu  float64
}

// processCPU is the CPU time of root and of each process under it, by pid, with its part: the
// API server, etcd, olmsim itself (root, with its in-process approver) and the rest (the
// system under test and its set-up command).
func processCPU(root int) map[int]counted {
	procs := map[int]proc{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if data, err := os.ReadFile("/proc/" + d.Name() + "/stat"); err == nil {
			if p, ok := parseStat(string(data)); ok {
				procs[pid] = p
			}
		}
	}
	out := map[int]counted{}
	for pid, p := range procs {
		if under(procs, pid, root) {
			out[pid] = counted{partOf(pid, root, p.comm), p.cpu}
		}
	}
	return out
}

// parseStat reads a /proc/PID/stat line: "PID (COMM) STATE PPID ..." with utime and stime
// the 14th and 15th fields. COMM may hold spaces and parentheses.
func parseStat(line string) (proc, bool) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return proc{}, false
	}
	rest := strings.Fields(line[end+1:]) // from the 3rd field on
	if len(rest) < 13 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(rest[1])
	utime, err2 := strconv.ParseFloat(rest[11], 64)
	stime, err3 := strconv.ParseFloat(rest[12], 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return proc{}, false
	}
	return proc{ppid: ppid, comm: line[open+1 : end], cpu: (utime + stime) / userHZ}, true
}

// under says whether pid is root or one of its descendants.
func under(procs map[int]proc, pid, root int) bool {
	for range 64 { // deeper than any process tree olmsim makes
		if pid == root {
			return true
		}
		p, ok := procs[pid]
		if !ok || p.ppid == 0 {
			return false
		}
		pid = p.ppid
	}
	return false
}

func partOf(pid, root int, comm string) string {
	switch {
	case pid == root:
		return harness
	case comm == "kube-apiserver":
		return apiServer
	case comm == "etcd":
		return etcdPart
	default:
		return sutPart
	}
}

// cpuAt is the CPU time counted at key at t, interpolated between the samples around it.
func cpuAt(samples []sample, key string, t time.Time) float64 {
	if len(samples) == 0 {
		return 0
	}
	if !t.After(samples[0].at) {
		return samples[0].cpu[key]
	}
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if t.After(b.at) {
			continue
		}
		f := float64(t.Sub(a.at)) / float64(b.at.Sub(a.at))
		return a.cpu[key] + f*(b.cpu[key]-a.cpu[key])
	}
	return samples[len(samples)-1].cpu[key]
}

// phaseCPU is the CPU time in each of olmsim's phases, which follow each other from the
// system under test's start, by phase and by where it is counted (machine and parts).
func phaseCPU(samples []sample, start time.Time, phases []phaseWrites) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, p := range phases {
		from, to, _ := phaseWindow(start, phases, p.Phase)
		out[p.Phase] = map[string]float64{}
		for _, key := range append([]string{machine}, parts...) {
			out[p.Phase][key] = cpuAt(samples, key, to) - cpuAt(samples, key, from)
		}
	}
	return out
}

// sutStarted finds in olmsim's log when it started the system under test (its line
// "olmsim 15:04:05.000 system under test: ..."), on the day of runStart or the next.
func sutStarted(log []byte, runStart time.Time) (time.Time, error) {
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "olmsim ")
		clock, what, _ := strings.Cut(rest, " ")
		if !ok || !strings.HasPrefix(what, "system under test: ") {
			continue
		}
		c, err := time.ParseInLocation("15:04:05.000", clock, runStart.Location())
		if err != nil {
			return time.Time{}, fmt.Errorf("olmsim's log: %q: %w", sc.Text(), err)
		}
		y, m, d := runStart.Date()
		at := time.Date(y, m, d, c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), runStart.Location())
		if at.Before(runStart.Add(-time.Minute)) { // past midnight
			at = at.AddDate(0, 0, 1)
		}
		return at, nil
	}
	if err := sc.Err(); err != nil {
		return time.Time{}, fmt.Errorf("olmsim's log: %w", err)
	}
	return time.Time{}, fmt.Errorf("olmsim's log has no line saying when the system under test started")
}
