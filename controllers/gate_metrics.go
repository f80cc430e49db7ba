package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
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
	// blockedSubscriptions has a series only for the Subscriptions held now (always 1): the
	// series count follows what is held, not how many Subscriptions the cluster has.
	blockedSubscriptions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tollgate_blocked_subscriptions",
		Help: "1 for each Subscription whose upgrade is currently denied, by namespace and name; an allowed Subscription has no series.",
	}, []string{"namespace", "name"})
	// unreadableOperandKinds is what a gate's health says with reason OperandsUnreadable, as a
	// number an alert can watch: most often a missing tollgate-operand-reader binding or rule.
	// Like blockedSubscriptions, only Subscriptions with such a kind have a series.
	unreadableOperandKinds = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tollgate_unreadable_operand_kinds",
		Help: "Operand kinds of a Subscription's operator that Tollgate may not read (its health is Unknown until granted), by namespace and name; a Subscription with none has no series.",
	}, []string{"namespace", "name"})
	reconcileErrorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tollgate_reconcile_errors_total",
		Help: "Reconcile errors, by the step that failed (gate, gather, approve, status, policy).",
	}, []string{"step"})
)

func init() {
	metrics.Registry.MustRegister(decisionsTotal, evaluationSeconds, approvalsTotal, blockedSubscriptions, unreadableOperandKinds, reconcileErrorsTotal)
}

// setPerSubscription sets a Subscription's series of g to v, or deletes it when v is 0, so
// that g carries series only for the Subscriptions it reports on.
func setPerSubscription(g *prometheus.GaugeVec, key types.NamespacedName, v float64) {
	if v == 0 {
		g.DeleteLabelValues(key.Namespace, key.Name)
		return
	}
	g.WithLabelValues(key.Namespace, key.Name).Set(v)
}

// forgetSubscription deletes a gone Subscription's series.
func forgetSubscription(key types.NamespacedName) {
	blockedSubscriptions.DeleteLabelValues(key.Namespace, key.Name)
	unreadableOperandKinds.DeleteLabelValues(key.Namespace, key.Name)
}
