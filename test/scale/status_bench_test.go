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
)

// statusRounds is how many rounds of N gate status updates each form of the gate is timed.
const statusRounds = 3

// BenchmarkGateStatusWrite measures what one gate status update costs the API server and
// etcd in CPU: N gates decided by the manager (default 400), then, with the manager stopped,
// a bare client writing all their status as a flip would (BenchmarkCatalogFlip's baseline),
// statusRounds times. Then the same with the gate's conditions and health as lists keyed by
// type ("keyed"), the form they had before they were made atomic: keyed/atomic is what the
// list type costs.
func BenchmarkGateStatusWrite(b *testing.B) {
	w := newWorld(b, scaleN(b, 400))
	w.untilDecided()
	w.shutdown()
	for b.Loop() {
		atomic := w.statusWriteCost()
		w.keyConditionsByType()
		keyed := w.statusWriteCost()
		b.ReportMetric(float64(w.n), "gates")
		b.ReportMetric(atomic.apiServer, "apiserver-ms/write")
		b.ReportMetric(atomic.etcd, "etcd-ms/write")
		b.ReportMetric(keyed.apiServer, "keyed-apiserver-ms/write")
		b.ReportMetric(keyed.etcd, "keyed-etcd-ms/write")
		b.ReportMetric(keyed.apiServer/atomic.apiServer, "keyed/atomic")
	}
}

// writeCost is the CPU per gate status update, in milliseconds.
type writeCost struct{ apiServer, etcd float64 }

// statusWriteCost writes every gate's status statusRounds times and returns the median CPU
// per write, counted from before the writes until a watch has seen them all.
func (w *world) statusWriteCost() writeCost {
	var api, etcd []float64
	for range statusRounds {
		before := cpuNow()
		w.bareWrites(controllers.DefaultWorkers)
		used := before.sub(cpuNow())
		api = append(api, float64(used.apiServer.Microseconds())/1e3/float64(w.n))
		etcd = append(etcd, float64(used.etcd.Microseconds())/1e3/float64(w.n))
	}
	return writeCost{median(api), median(etcd)}
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// keyConditionsByType turns the UpgradeGate CRD's status conditions and health into lists
// keyed by type, and waits until the API server tracks a gate's conditions so.
func (w *world) keyConditionsByType() {
	w.tb.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(w.tb, w.c.Get(w.ctx, client.ObjectKey{Name: "upgradegates.tollgate.dev"}, crd))
	status := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	for _, list := range []string{"conditions", "health"} {
		p := status.Properties[list]
		keyed := "map"
		p.XListType, p.XListMapKeys = &keyed, []string{"type"}
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
			return false, client.IgnoreNotFound(err)
		}
		for _, m := range g.ManagedFields {
			if m.FieldsV1 != nil && strings.Contains(string(m.FieldsV1.Raw), `"k:{\"type\":`) {
				return true, nil
			}
		}
		return false, nil
	})
	require.NoError(w.tb, err, "the API server keys a gate's conditions by type")
}
