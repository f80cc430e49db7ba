package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/stat's times on Linux: hundredths of a second.
const userHZ = 100

// sample is the machine's busy CPU time since boot at one instant, in seconds.
type sample struct {
	at   time.Time
	busy float64
}

// sampleCPU reads the machine's busy CPU time every interval until stop is closed, then
// sends what it read.
func sampleCPU(interval time.Duration, stop <-chan struct{}) <-chan []sample {
	done := make(chan []sample, 1)
	go func() {
		var samples []sample
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if busy, err := machineBusy(); err == nil {
				samples = append(samples, sample{time.Now(), busy})
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

// busyAt is the busy CPU time at t, interpolated between the samples around it.
func busyAt(samples []sample, t time.Time) float64 {
	if len(samples) == 0 {
		return 0
	}
	if !t.After(samples[0].at) {
		return samples[0].busy
	}
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if t.After(b.at) {
			continue
		}
		f := float64(t.Sub(a.at)) / float64(b.at.Sub(a.at))
		return a.busy + f*(b.busy-a.busy)
	}
	return samples[len(samples)-1].busy
}

// phaseCPU is the machine's busy CPU time in each of olmsim's phases, which follow each other
// from the system under test's start.
func phaseCPU(samples []sample, start time.Time, phases []phaseWrites) map[string]float64 {
	out := map[string]float64{}
	from := start
	for _, p := range phases {
		to := from.Add(time.Duration(p.Seconds * float64(time.Second)))
		out[p.Phase] = busyAt(samples, to) - busyAt(samples, from)
		from = to
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
