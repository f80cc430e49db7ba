package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	decisionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tollgate_decisions_total",
		Help: "Decisions that changed a gate, by result (allowed or denied) and first standing denial code.",
	}, []string{"result", "code"})
	evaluationSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "tollgate_evaluation_duration_seconds",
		Help:    "Time to evaluate the policies for one Subscription.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	})
	approvalsTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tollgate_installplan_approvals_total",
		Help: "InstallPlans Tollgate approved.",
	})
	blockedSubscriptions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tollgate_blocked_subscriptions",
		Help: "Subscriptions whose upgrade is currently denied (1), by namespace and name.",
	}, []string{"namespace", "name"})
	// unreadableOperandKinds is what a gate's health says with reason OperandsUnreadable, as a
	// number an alert can watch: most often a missing tollgate-operand-reader binding or rule.
	unreadableOperandKinds = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tollgate_unreadable_operand_kinds",
		Help: "Operand kinds of a Subscription's operator that Tollgate may not read (its health is Unknown until granted), by namespace and name.",
	}, []string{"namespace", "name"})
	reconcileErrorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tollgate_reconcile_errors_total",
		Help: "Reconcile errors, by the step that failed (gate, gather, approve, status, policy).",
	}, []string{"step"})
)

func init() {
	metrics.Registry.MustRegister(decisionsTotal, evaluationSeconds, approvalsTotal, blockedSubscriptions, unreadableOperandKinds, reconcileErrorsTotal)
}
