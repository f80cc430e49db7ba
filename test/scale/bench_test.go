package scale

import (
	"runtime"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/controllers"
)

// bareWorkersRef is the worker count of the reference baseline (the seeding's).
const bareWorkersRef = seedWorkers

// BenchmarkCatalogFlip times a flip of the global catalog's health until every gate reflects
// it (one flip per iteration, back and forth), then, with the manager stopped, a bare client
// writing the same N gate status updates with the manager's worker count: flip/bare is the
// figure, its target 1.5. It also reports the time from the manager's start until every gate
// has its first decision, and until the one plan awaiting approval (in the namespace a
// start-up reaches last) is approved, the manager's API requests per gate during the flips (writes: the
// status, and Events; reads: those not served from its cache), and the heap in use once every
// gate is decided; the manager runs in the test process, so that heap also holds the test's
// own client and its watch.
func BenchmarkCatalogFlip(b *testing.B) {
	w := newWorld(b, scaleN(b, 200))
	start := w.untilDecided()
	approval := w.awaitApproval()
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)

	var flips time.Duration
	rounds := 0
	writes, reads := w.writes.Load(), w.reads.Load()
	for b.Loop() {
		flips += w.flip()
		rounds++
	}
	writes, reads = w.writes.Load()-writes, w.reads.Load()-reads
	w.shutdown()
	var bare, bareRef time.Duration
	for range rounds {
		bare += w.bareWrites(controllers.DefaultWorkers)
		bareRef += w.bareWrites(bareWorkersRef)
	}
	flip, perBare := flips.Seconds()/float64(rounds), bare.Seconds()/float64(rounds)
	b.ReportMetric(float64(w.n), "gates")
	b.ReportMetric(flip, "flip-s")
	b.ReportMetric(perBare, "bare-s")
	b.ReportMetric(bareRef.Seconds()/float64(rounds), "bare16-s")
	b.ReportMetric(flip/perBare, "flip/bare")
	b.ReportMetric(start.Seconds(), "start-s")
	b.ReportMetric(approval.Seconds(), "first-approval-s")
	perGate := float64(rounds * w.n)
	b.ReportMetric(float64(writes)/perGate, "mgr-writes/gate")
	b.ReportMetric(float64(reads)/perGate, "mgr-reads/gate")
	b.ReportMetric(float64(mem.HeapInuse)/(1<<20), "heap-MiB")
}
