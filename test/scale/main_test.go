package scale

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// TestCatalogFlip is the benchmark's correctness check, small and untimed: every gate gets a
// decision, the plan awaiting approval is approved, a flip of the global catalog's health
// reaches every gate and so does the flip back, and the bare baseline's writes land.
func TestCatalogFlip(t *testing.T) {
	w := newWorld(t, 5)
	w.untilDecided()
	w.awaitApproval()
	w.flip()
	w.flip()
	w.shutdown()
	w.bareWrites(2)
}
