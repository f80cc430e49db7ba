package scale

import (
	"testing"
	"time"
)

// pinWorkers is the baseline's worker count: the ExtensionGate controller's
// MaxConcurrentReconciles (controllers/extension_watches.go).
const pinWorkers = 4

// BenchmarkExtensionPins times Tollgate moving the version pins of TOLLGATE_EXTENSIONS_N OLM v1
// ClusterExtensions (default 1,000) when their catalog publishes a successor. Each is installed
// at 1.1.0 from the one ClusterCatalog, and gated (range <2.0.0, gates created on 16
// goroutines), each gate owning its pin at 1.1.0; then catalogd serves the catalog's next
// revision, which publishes 1.2.0. The figure is from that revision's digest in the catalog's
// status until a watch has seen every pin at 1.2.0. The baseline, once the manager has stopped:
// a bare client patching the pins of as many other ClusterExtensions the same way, one merge
// patch each, with the controller's concurrency (4). pins/bare is the figure. It also reports
// how long the gates took to own their pins (gates-s, not in the figure), the catalog fetches
// (it fails on more than one per digest), the manager's API requests per extension from the
// new revision until the last pin, the CPU time the API server, etcd and the test process (the
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
	pins, recorded        time.Duration // from the new revision to every pin moved, and recorded
	gates, bare           time.Duration
	pinsCPU, bareCPU      cpuTimes
	recordedCPU           cpuTimes // from the new revision to every pin recorded
	fetches, served       int64
	writes, reads         int64 // until every pin moved
	recordedWrites        int64 // until every pin recorded
	heapBefore, heapAfter uint64
}

// measure runs one round: Tollgate's pins, then the bare baseline's.
func (w *extWorld) measure() extRound {
	w.tb.Helper()
	r := extRound{n: w.n, heapBefore: heapInUse()}
	w.startManager()
	r.gates = w.gate()
	writes, reads := w.mgr.writes.Load(), w.mgr.reads.Load()
	cpu := cpuNow()
	pins, recorded := w.tollgatePins()
	r.pins, r.pinsCPU = pins, cpu.sub(cpuNow())
	r.writes, r.reads = w.mgr.writes.Load()-writes, w.mgr.reads.Load()-reads
	r.heapAfter = heapInUse()
	r.recorded = recorded()
	r.recordedCPU, r.recordedWrites = cpu.sub(cpuNow()), w.mgr.writes.Load()-writes
	r.fetches, r.served = w.mgr.catalogs.Fetches(), w.served.Load()
	w.shutdown()
	if r.fetches != 2 || r.served != 2 {
		w.tb.Fatalf("catalog content fetched %d times (catalogd served %d requests); want twice: once per digest", r.fetches, r.served)
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
	b.ReportMetric(r.recorded.Seconds(), "recorded-s")
	b.ReportMetric(float64(r.recordedWrites)/perExt, "recorded-writes/ext")
	b.ReportMetric(r.recordedCPU.apiServer.Seconds(), "recorded-apiserver-cpu-s")
	b.ReportMetric(r.recordedCPU.self.Seconds(), "recorded-test-cpu-s")
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

// TestExtensionPins is the benchmark's correctness check, small and untimed: the gates own
// the pins at 1.1.0, Tollgate moves every pin to 1.2.0 with its record once the catalog
// publishes it, fetching the catalog once per revision, every gate owns its pin, and the bare
// baseline's patches land.
func TestExtensionPins(t *testing.T) {
	w := newExtWorld(t, 5)
	w.startManager()
	w.gate()
	_, recorded := w.tollgatePins()
	recorded()
	w.checkRecords()
	if f, s := w.mgr.catalogs.Fetches(), w.served.Load(); f != 2 || s != 2 {
		t.Fatalf("catalog content fetched %d times (catalogd served %d requests); want once per revision", f, s)
	}
	w.shutdown()
	w.seed(setBare)
	w.barePins(pinWorkers)
}
