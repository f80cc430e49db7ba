package controllers

import (
	"cmp"
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
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
)

// Event reasons of the policy reconciler.
const (
	EventPolicyRejected = "PolicyRejected"
	EventPolicyLoaded   = "PolicyLoaded"
)

// +kubebuilder:rbac:groups="",namespace=tollgate-system,resources=configmaps,verbs=get;list;watch;patch

// PolicyReconciler compiles the policy sources (embedded, bundles, ConfigMaps) whenever one
// changes and serves the new set only when it compiles in strict mode. Each source keeps its
// own last good version: a ConfigMap (or bundle) whose new version does not compile with the
// others stays at its last good version, or out when it never compiled, while the other
// sources' changes go in (policysource.Resolve). Its errors are reported on the ConfigMap (the
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

	// served are the versions of the sources in the set in service.
	served policysource.Versions
	// loaded is true once the first load has been tried; unproven are the ConfigMaps present
	// then that have not compiled since; servedOnce says that a set has compiled since the
	// manager started. Until every unproven ConfigMap compiles and a set has compiled, every
	// evaluation fails closed.
	loaded     bool
	unproven   map[string]bool
	servedOnce bool
	// reported are the ConfigMaps last reported, so a deleted ConfigMap's error does not linger
	// in the metric, and one that lost its label loses its status annotation.
	reported map[string]bool
}

// policyRequest is the one request every policy change maps to: the whole set recompiles.
var policyRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: "policy-set"}}

// SetupWithManager watches the ConfigMaps of the policy namespace that are, or were until
// this change, labelled as policy: removing the label takes a ConfigMap's policy out of
// service like deleting it. Writes that only change annotations (our own status) are ignored,
// so reporting never loops.
func (r *PolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{policyRequest}
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("policy").
		WatchesRawSource(source.Kind[client.Object](mgr.GetCache(), &corev1.ConfigMap{}, one,
			policyConfigMap{r.isPolicy}, contentChanged{}))
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

// policyConfigMap passes events of policy ConfigMaps; an update passes when the ConfigMap is
// policy before or after it, so removing the label is seen (predicate.NewPredicateFuncs
// would look at the new object only, and drop it).
type policyConfigMap struct{ is func(client.Object) bool }

func (p policyConfigMap) Create(e event.CreateEvent) bool   { return p.is(e.Object) }
func (p policyConfigMap) Delete(e event.DeleteEvent) bool   { return p.is(e.Object) }
func (p policyConfigMap) Generic(e event.GenericEvent) bool { return p.is(e.Object) }
func (p policyConfigMap) Update(e event.UpdateEvent) bool {
	return p.is(e.ObjectOld) || p.is(e.ObjectNew)
}

// contentChanged passes creates, deletes and updates of data or labels.
type contentChanged struct{ predicate.Funcs }

func (contentChanged) Update(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(*corev1.ConfigMap), e.ObjectNew.(*corev1.ConfigMap)
	return !equality.Semantic.DeepEqual(o.Data, n.Data) || !equality.Semantic.DeepEqual(o.BinaryData, n.BinaryData) ||
		!equality.Semantic.DeepEqual(o.Labels, n.Labels)
}

// Reconcile resolves the sources' versions (policysource.Resolve), serves the set that
// compiles, and reports each source's status.
func (r *PolicyReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	base := r.Base
	if r.Bundles != nil {
		base.Bundles = r.Bundles()
	}
	cms, err := policysource.List(ctx, r.Client, r.Namespace)
	if err != nil {
		return reconcile.Result{}, r.countPolicy(err)
	}
	res, err := policysource.Resolve(ctx, base, cms, r.served)
	if err != nil {
		return reconcile.Result{}, r.countPolicy(err)
	}
	e := res.Engine
	if e != nil {
		r.served = res.Served
		if e.Revision() == r.Policies.Engine().Revision() {
			e = nil // the same set: keep the one in service
		}
	}
	r.Policies.serve(e, r.failure(res))
	if e != nil {
		ctrl.LoggerFrom(ctx).Info("policy set in service", "revision", e.Revision(), "modules", len(e.Modules()))
	}
	r.reportBundle(ctx, res)
	return reconcile.Result{}, r.report(ctx, cms, res)
}

// failure is why every evaluation must fail closed, or nil: a ConfigMap present at the first
// load has not compiled since, or no set has compiled since the manager started. A ConfigMap
// that breaks later keeps its last good version; one created broken later was never in force.
func (r *PolicyReconciler) failure(res *policysource.Resolution) error {
	if !r.loaded {
		r.loaded, r.unproven = true, map[string]bool{}
		for name, st := range res.Sources {
			if name != policysource.BundlesSource && st.Serving == policysource.ServingNone {
				r.unproven[name] = true
			}
		}
	}
	for name := range r.unproven {
		if st, ok := res.Sources[name]; !ok || st.Serving != policysource.ServingNone {
			delete(r.unproven, name) // compiled, deleted or no longer policy
		}
	}
	r.servedOnce = r.servedOnce || res.Engine != nil
	if len(r.unproven) == 0 && r.servedOnce {
		return nil
	}
	names := slices.Sorted(maps.Keys(r.unproven))
	if !r.servedOnce {
		for _, name := range slices.Sorted(maps.Keys(res.Sources)) {
			if len(res.Sources[name].Errors) > 0 && !r.unproven[name] {
				names = append(names, cmp.Or(name, "an OPA bundle"))
			}
		}
	}
	return fmt.Errorf("the admin policy does not compile (%s; see the %s annotation), and no good admin policy set has been loaded since the manager started",
		strings.Join(names, ", "), policysource.StatusAnnotation)
}

// reportBundle logs the bundles' errors and sets their metric.
func (r *PolicyReconciler) reportBundle(ctx context.Context, res *policysource.Resolution) {
	st, bad := res.Sources[policysource.BundlesSource]
	if !bad {
		policysource.SourceFailing.WithLabelValues("bundle").Set(0)
		return
	}
	policysource.SourceFailing.WithLabelValues("bundle").Set(1)
	ctrl.LoggerFrom(ctx).Error(&engine.CompileError{Items: st.Errors}, "policy bundle rejected", "serving", st.Serving)
}

// report writes each ConfigMap's status annotation (only when it changed), raises a Warning
// Event and the error metric for each rejected one, and clears what is left of ConfigMaps no
// longer reported (deleted, or no longer labelled).
func (r *PolicyReconciler) report(ctx context.Context, cms []corev1.ConfigMap, res *policysource.Resolution) error {
	seen := map[string]bool{}
	for i := range cms {
		cm := &cms[i]
		seen[cm.Name] = true
		status := r.configMapStatus(ctx, cm, res.Sources[cm.Name])
		if served, ok := res.Served.ConfigMap(cm.Name); ok { // what tollgate explain compares with
			status.ServingDigest = policysource.Digest(served)
		}
		if err := r.annotate(ctx, cm, status); err != nil {
			return r.countPolicy(err)
		}
	}
	for name := range r.reported {
		if !seen[name] {
			policysource.SourceFailing.DeleteLabelValues(r.metricLabel(name))
			if err := r.forget(ctx, name); err != nil {
				return r.countPolicy(err)
			}
		}
	}
	r.reported = seen
	return nil
}

func (r *PolicyReconciler) metricLabel(name string) string {
	return "configmap/" + r.Namespace + "/" + name
}

// configMapStatus is cm's status; a rejected ConfigMap is also reported (Event, log, metric).
func (r *PolicyReconciler) configMapStatus(ctx context.Context, cm *corev1.ConfigMap, st policysource.SourceStatus) policysource.Status {
	label := r.metricLabel(cm.Name)
	if len(st.Errors) == 0 {
		policysource.SourceFailing.WithLabelValues(label).Set(0)
		return policysource.Status{Status: "ok", Serving: policysource.ServingCurrent}
	}
	err := &engine.CompileError{Items: st.Errors}
	var what string
	switch st.Serving {
	case policysource.ServingPrevious:
		what = "this ConfigMap's last good version stays in service; the other policy sources' changes go in"
	case policysource.ServingNone:
		what = "this ConfigMap is not in service (it has never compiled); the other policy sources' changes go in"
	default:
		what = "the last good policy set stays in service"
	}
	r.Recorder.Event(cm, corev1.EventTypeWarning, EventPolicyRejected, "Policy not loaded: "+what+". Fix and re-apply: "+err.Error())
	ctrl.LoggerFrom(ctx).Error(err, "policy configmap rejected", "configmap", cm.Name, "serving", st.Serving)
	policysource.SourceFailing.WithLabelValues(label).Set(1)
	return policysource.Status{Status: "error", Errors: st.Errors, Serving: st.Serving}
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

// forget removes the status annotation of a ConfigMap that is no longer policy: a status
// saying "ok" would claim that its policy is in service.
func (r *PolicyReconciler) forget(ctx context.Context, name string) error {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: name}, cm); err != nil {
		return client.IgnoreNotFound(err)
	}
	if _, ok := cm.Annotations[policysource.StatusAnnotation]; !ok || r.isPolicy(cm) {
		return nil
	}
	orig := cm.DeepCopy()
	delete(cm.Annotations, policysource.StatusAnnotation)
	if err := client.IgnoreNotFound(r.Patch(ctx, cm, client.MergeFrom(orig))); err != nil {
		return fmt.Errorf("clear the status of configmap %s: %w", name, err)
	}
	return nil
}

func (r *PolicyReconciler) countPolicy(err error) error {
	if err != nil {
		reconcileErrorsTotal.WithLabelValues("policy").Inc()
	}
	return err
}
