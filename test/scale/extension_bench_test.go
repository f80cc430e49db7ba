package scale

import (
	"testing"
	"time"
)

// pinWorkers is the baseline's worker count: the ExtensionGate controller's
// MaxConcurrentReconciles (controllers/extension_watches.go).
const pinWorkers = 4

// BenchmarkExtensionPins times Tollgate moving the version pins of TOLLGATE_EXTENSIONS_N OLM v1
// ClusterExtensions (default 1,000), each installed at 1.0.0 from the one ClusterCatalog, from
// 1.0.0 to 1.1.0: from the creation of their ExtensionGates (range <1.2.0, on 16 goroutines)
// until a watch has seen every pin at 1.1.0. The baseline, once the manager has stopped: a bare
// client patching the pins of as many other ClusterExtensions the same way, one merge patch
// each, with the controller's concurrency (4). pins/bare is the figure. It also reports the
// catalog fetches (it fails on more than one: one digest), the manager's API requests per
// extension until the last pin, the CPU time the API server, etcd and the test process (the
// manager and the test's clients) used in each phase, and the heap in use after the last pin
// (heap-MiB holds the test's client too; mgr-B/ext is the growth from before the manager's
// start, per extension). One round per run: -benchtime 1x, -count for more.
func BenchmarkExtensionPins(b *testing.B) {
	w := newExtWorld(b, extensionsN(b, 1000))
	rounds := 0
	for b.Loop() {
		if rounds++; rounds > 1 {
			b.Fatal("one round per run: run with -benchtime 1x (and -count for more runs)")
		}
		w.measure().report(b)
	}
}

// extRound is one round's figures.
type extRound struct {
	n                     int
	pins, gates, bare     time.Duration
	pinsCPU, bareCPU      cpuTimes
	fetches, served       int64
	writes, reads         int64
	heapBefore, heapAfter uint64
}

// measure runs one round: Tollgate's pins, then the bare baseline's.
func (w *extWorld) measure() extRound {
	w.tb.Helper()
	r := extRound{n: w.n, heapBefore: heapInUse()}
	w.startManager()
	cpu := cpuNow()
	r.pins, r.gates = w.tollgatePins()
	r.pinsCPU = cpu.sub(cpuNow())
	r.heapAfter = heapInUse()
	r.fetches, r.served = w.mgr.catalogs.Fetches(), w.served.Load()
	r.writes, r.reads = w.mgr.writes.Load(), w.mgr.reads.Load()
	w.shutdown()
	if r.fetches != 1 || r.served != 1 {
		w.tb.Fatalf("catalog content fetched %d times (catalogd served %d requests); want once: one digest", r.fetches, r.served)
	}
	w.seed(setBare)
	cpu = cpuNow()
	r.bare = w.barePins(pinWorkers)
	r.bareCPU = cpu.sub(cpuNow())
	return r
}

func (r extRound) report(b *testing.B) {
	perExt := float64(r.n)
	b.ReportMetric(perExt, "extensions")
	b.ReportMetric(r.pins.Seconds(), "pins-s")
	b.ReportMetric(r.gates.Seconds(), "gates-s")
	b.ReportMetric(r.bare.Seconds(), "bare-s")
	b.ReportMetric(r.pins.Seconds()/r.bare.Seconds(), "pins/bare")
	b.ReportMetric(float64(r.fetches), "fetches")
	b.ReportMetric(float64(r.writes)/perExt, "mgr-writes/ext")
	b.ReportMetric(float64(r.reads)/perExt, "mgr-reads/ext")
	b.ReportMetric(r.pinsCPU.apiServer.Seconds(), "pins-apiserver-cpu-s")
	b.ReportMetric(r.bareCPU.apiServer.Seconds(), "bare-apiserver-cpu-s")
	b.ReportMetric(r.pinsCPU.etcd.Seconds(), "pins-etcd-cpu-s")
	b.ReportMetric(r.bareCPU.etcd.Seconds(), "bare-etcd-cpu-s")
	b.ReportMetric(r.pinsCPU.self.Seconds(), "pins-test-cpu-s")
	b.ReportMetric(r.bareCPU.self.Seconds(), "bare-test-cpu-s")
	b.ReportMetric(float64(r.heapAfter)/(1<<20), "heap-MiB")
	b.ReportMetric((float64(r.heapAfter)-float64(r.heapBefore))/perExt, "mgr-B/ext")
}

// TestExtensionPins is the benchmark's correctness check, small and untimed: Tollgate moves
// every pin to 1.1.0 with its record, fetching the catalog once, every gate owns its pin, and
// the bare baseline's patches land.
func TestExtensionPins(t *testing.T) {
	w := newExtWorld(t, 5)
	w.startManager()
	w.tollgatePins()
	w.checkRecords()
	if f, s := w.mgr.catalogs.Fetches(), w.served.Load(); f != 1 || s != 1 {
		t.Fatalf("catalog content fetched %d times (catalogd served %d requests); want once", f, s)
	}
	w.shutdown()
	w.seed(setBare)
	w.barePins(pinWorkers)
}
