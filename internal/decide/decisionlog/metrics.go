package decisionlog

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	droppedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tollgate_decision_log_dropped_total",
		Help: "Decision log events dropped: the upload buffer was full (oldest first), they were still pending when the manager stopped and could not be uploaded, or they came after the log had closed.",
	})
	uploadErrorsTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tollgate_decision_log_upload_errors_total",
		Help: "Failed uploads of decision log batches (retried with backoff).",
	})
)

func init() {
	metrics.Registry.MustRegister(droppedTotal, uploadErrorsTotal)
}
