package scale

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/internal/stats"
)

// statusPairs is how many times the two forms of the gate are timed in turn, each time over
// statusRounds rounds of N gate status updates.
const statusPairs, statusRounds = 2, 3

// BenchmarkGateStatusWrite measures what one gate status update costs the API server and
// etcd in CPU: N gates decided by the manager (default 400), then, with the manager stopped,
// a bare client writing all their status as a flip would (BenchmarkCatalogFlip's baseline).
// The gate's conditions and health are atomic lists as shipped ("atomic"), then lists keyed
// by type ("keyed"), the form they had before, in turn statusPairs times: keyed/atomic is
// what the list type costs.
func BenchmarkGateStatusWrite(b *testing.B) {
	w := newWorld(b, scaleN(b, 400))
	w.untilDecided()
	w.shutdown()
	for b.Loop() {
		var atomic, keyed [][]writeCost
		for range statusPairs {
			atomic = append(atomic, w.statusWriteCost())
			w.setListType("map")
			keyed = append(keyed, w.statusWriteCost())
			w.setListType("atomic")
		}
		a, k := medianCost(atomic), medianCost(keyed)
		b.ReportMetric(float64(w.n), "gates")
		b.ReportMetric(a.apiServer, "apiserver-ms/write")
		b.ReportMetric(a.etcd, "etcd-ms/write")
		b.ReportMetric(k.apiServer, "keyed-apiserver-ms/write")
		b.ReportMetric(k.etcd, "keyed-etcd-ms/write")
		b.ReportMetric(k.apiServer/a.apiServer, "keyed/atomic")
	}
}

// writeCost is the CPU per gate status update, in milliseconds.
type writeCost struct{ apiServer, etcd float64 }

// statusWriteCost writes every gate's status statusRounds times and returns the CPU per
// write of each round, counted from before the writes until a watch has seen them all.
func (w *world) statusWriteCost() []writeCost {
	var out []writeCost
	for range statusRounds {
		before := cpuNow()
		w.bareWrites(controllers.DefaultWorkers)
		used := before.sub(cpuNow())
		out = append(out, writeCost{float64(used.apiServer.Microseconds()) / 1e3 / float64(w.n),
			float64(used.etcd.Microseconds()) / 1e3 / float64(w.n)})
	}
	return out
}

// medianCost is the median of each part over every round of runs.
func medianCost(runs [][]writeCost) writeCost {
	var api, etcd []float64
	for _, r := range slices.Concat(runs...) {
		api, etcd = append(api, r.apiServer), append(etcd, r.etcd)
	}
	a, _ := stats.Median(api)
	e, _ := stats.Median(etcd)
	return writeCost{a, e}
}

// setListType makes the UpgradeGate CRD's status conditions and health lists of listType
// ("atomic", or "map" keyed by type), and waits until the API server tracks a gate's
// conditions so.
func (w *world) setListType(listType string) {
	w.tb.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(w.tb, w.c.Get(w.ctx, client.ObjectKey{Name: "upgradegates.tollgate.dev"}, crd))
	status := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	for _, list := range []string{"conditions", "health"} {
		p := status.Properties[list]
		p.XListType, p.XListMapKeys = &listType, nil
		if listType == "map" {
			p.XListMapKeys = []string{"type"}
		}
		status.Properties[list] = p
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"] = status
	require.NoError(w.tb, w.c.Update(w.ctx, crd))
	probe := 0
	err := wait.PollUntilContextTimeout(w.ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		g := &tollgatev1alpha1.UpgradeGate{}
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: nsName(0), Name: pkg}, g); err != nil {
			return false, err
		}
		probe++
		g.Status.Conditions[0].Message = fmt.Sprintf("probe %d", probe)
		if err := w.c.Status().Update(ctx, g); err != nil {
			return false, err
		}
		return keyedByType(g) == (listType == "map"), nil
	})
	require.NoError(w.tb, err, "the API server tracks a gate's conditions as a list of type %s", listType)
}

// keyedByType says whether g's managed fields track its conditions one by one, by type.
func keyedByType(g *tollgatev1alpha1.UpgradeGate) bool {
	for _, m := range g.ManagedFields {
		if m.FieldsV1 != nil && strings.Contains(string(m.FieldsV1.Raw), `"k:{\"type\":`) {
			return true
		}
	}
	return false
}
