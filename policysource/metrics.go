package policysource

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// SourceErrors is 1 for a policy source (ConfigMap or bundle) that is not in service.
var SourceErrors = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "tollgate_policy_source_errors",
	Help: "1 when a policy source (ConfigMap or bundle) does not load or compile and the last good set stays in service.",
}, []string{"source"})

func init() { metrics.Registry.MustRegister(SourceErrors) }
