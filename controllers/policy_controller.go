package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policysource"
)

// Event reasons of the policy reconciler.
const (
	EventPolicyRejected = "PolicyRejected"
	EventPolicyLoaded   = "PolicyLoaded"
)

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;patch

// PolicyReconciler compiles the policy sources (embedded, bundles, ConfigMaps) whenever one
// changes and swaps the new set in only when it compiles in strict mode. A broken source
// keeps the last good set in service, and its errors are reported on the ConfigMap (the
// policysource.StatusAnnotation and a Warning Event), in a metric and in the log.
type PolicyReconciler struct {
	client.Client
	Recorder  record.EventRecorder
	Namespace string
	Policies  *Policies
	// Base is what every candidate set starts from: timeout and the embedded policies.
	Base engine.Options
	// Bundles returns the OPA bundles currently loaded (nil when none).
	Bundles func() []*bundle.Bundle
	// BundlesChanged receives an event when Bundles returns something new.
	BundlesChanged <-chan event.GenericEvent

	// reported are the metric labels of the ConfigMaps last reported, so a deleted
	// ConfigMap's error does not linger.
	reported map[string]bool
}

// policyRequest is the one request every policy change maps to: the whole set recompiles.
var policyRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: "policy-set"}}

// SetupWithManager watches the labelled ConfigMaps of the policy namespace. Writes that only
// change annotations (our own status) are ignored, so reporting never loops.
func (r *PolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{policyRequest}
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("policy").
		WatchesRawSource(source.Kind[client.Object](mgr.GetCache(), &corev1.ConfigMap{}, one,
			predicate.NewPredicateFuncs(r.isPolicy), contentChanged{}))
	if r.BundlesChanged != nil {
		b = b.WatchesRawSource(source.Channel(r.BundlesChanged, one))
	}
	// One load at start, even when no policy ConfigMap exists: the gates wait for it.
	start := make(chan event.GenericEvent, 1)
	start <- event.GenericEvent{}
	b = b.WatchesRawSource(source.Channel(start, one))
	return b.Complete(r)
}

func (r *PolicyReconciler) isPolicy(obj client.Object) bool {
	_, ok := obj.GetLabels()[policysource.Label]
	return ok && obj.GetNamespace() == r.Namespace
}

// contentChanged passes creates, deletes and updates of data or labels.
type contentChanged struct{ predicate.Funcs }

func (contentChanged) Update(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(*corev1.ConfigMap), e.ObjectNew.(*corev1.ConfigMap)
	return !equality.Semantic.DeepEqual(o.Data, n.Data) || !equality.Semantic.DeepEqual(o.BinaryData, n.BinaryData) ||
		!equality.Semantic.DeepEqual(o.Labels, n.Labels)
}

// Reconcile compiles the candidate set and swaps it in when it compiles.
func (r *PolicyReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	base := r.Base
	if r.Bundles != nil {
		base.Bundles = r.Bundles()
	}
	set, err := policysource.Read(ctx, r.Client, r.Namespace, base)
	if err != nil {
		return reconcile.Result{}, r.countPolicy(err)
	}
	e, err := set.Compile(ctx)
	if err != nil {
		return reconcile.Result{}, r.countPolicy(err)
	}
	if e != nil && (e.Revision() != r.Policies.Engine().Revision() || r.Policies.failure.Load() != nil) {
		r.Policies.Swap(e)
		ctrl.LoggerFrom(ctx).Info("policy set in service", "revision", e.Revision(), "modules", len(e.Modules()))
	}
	r.Policies.firstLoad(set.Failure())
	r.reportBundle(ctx, set)
	return reconcile.Result{}, r.report(ctx, set)
}

// reportBundle logs a bundle's compile errors and sets its metric.
func (r *PolicyReconciler) reportBundle(ctx context.Context, set *policysource.Set) {
	items, bad := set.Problems[""] // not from a ConfigMap: a bundle
	if !bad {
		policysource.SourceErrors.WithLabelValues("bundle").Set(0)
		return
	}
	policysource.SourceErrors.WithLabelValues("bundle").Set(1)
	ctrl.LoggerFrom(ctx).Error(&engine.CompileError{Items: items}, "policy bundle rejected; the last good policy set stays in service")
}

// report writes each ConfigMap's status annotation (only when it changed) and raises a
// Warning Event and the error metric for each rejected one.
func (r *PolicyReconciler) report(ctx context.Context, set *policysource.Set) error {
	seen := map[string]bool{}
	defer func() { // a deleted ConfigMap's error must not linger in the metric
		for label := range r.reported {
			if !seen[label] {
				policysource.SourceErrors.DeleteLabelValues(label)
			}
		}
		r.reported = seen
	}()
	for i := range set.ConfigMaps {
		cm := &set.ConfigMaps[i]
		label := "configmap/" + cm.Namespace + "/" + cm.Name
		seen[label] = true
		status := r.configMapStatus(ctx, set, cm, label)
		if err := r.annotate(ctx, cm, status); err != nil {
			return r.countPolicy(err)
		}
	}
	return nil
}

// configMapStatus is cm's status in set; a rejected ConfigMap is also reported (Event, log,
// metric).
func (r *PolicyReconciler) configMapStatus(ctx context.Context, set *policysource.Set, cm *corev1.ConfigMap, label string) policysource.Status {
	if items, bad := set.Problems[cm.Name]; bad {
		err := &engine.CompileError{Items: items}
		r.Recorder.Event(cm, corev1.EventTypeWarning, EventPolicyRejected,
			"Policy not loaded; the last good policy set stays in service. Fix and re-apply: "+err.Error())
		ctrl.LoggerFrom(ctx).Error(err, "policy configmap rejected; the last good policy set stays in service", "configmap", cm.Name)
		policysource.SourceErrors.WithLabelValues(label).Set(1)
		return policysource.Status{Status: "error", Errors: items}
	}
	policysource.SourceErrors.WithLabelValues(label).Set(0)
	if len(set.Problems) == 0 {
		return policysource.Status{Status: "ok"}
	}
	var held []string
	for _, name := range slices.Sorted(maps.Keys(set.Problems)) {
		if name == "" { // not from a ConfigMap: an OPA bundle
			name = "an OPA bundle (its errors are in the manager's log)"
		}
		held = append(held, name)
	}
	return policysource.Status{Status: "error", Errors: []engine.CompileErrorItem{{Message: fmt.Sprintf(
		"valid, but not in service: the policy set is held back by %s; the last good set stays in service", strings.Join(held, ", "))}}}
}

// annotate writes status into cm's annotation when it changed.
func (r *PolicyReconciler) annotate(ctx context.Context, cm *corev1.ConfigMap, status policysource.Status) error {
	value, err := json.Marshal(status)
	if err != nil {
		return err
	}
	if cm.Annotations[policysource.StatusAnnotation] == string(value) {
		return nil
	}
	orig := cm.DeepCopy()
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[policysource.StatusAnnotation] = string(value)
	if err := client.IgnoreNotFound(r.Patch(ctx, cm, client.MergeFrom(orig))); err != nil {
		return fmt.Errorf("annotate policy configmap %s: %w", cm.Name, err)
	}
	if status.Status == "ok" {
		r.Recorder.Event(cm, corev1.EventTypeNormal, EventPolicyLoaded, "Policy compiled and in service (revision "+r.Policies.Engine().Revision()+").")
	}
	return nil
}

func (r *PolicyReconciler) countPolicy(err error) error {
	if err != nil {
		reconcileErrorsTotal.WithLabelValues("policy").Inc()
	}
	return err
}
