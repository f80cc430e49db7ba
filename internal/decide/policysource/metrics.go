package policysource

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// SourceFailing is 1 for a policy source (ConfigMap or bundle) that does not load or compile
// now, 0 for one that does: a state per source, not a count of errors.
var SourceFailing = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "tollgate_policy_source_failing",
	Help: "1 when a policy source (ConfigMap or bundle) does not load or compile and the last good set stays in service.",
}, []string{"source"})

func init() { metrics.Registry.MustRegister(SourceFailing) }
