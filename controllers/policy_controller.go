package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
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
	"sigs.k8s.io/yaml"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policies"
)

// Labels and annotations of policy ConfigMaps.
const (
	// PolicyLabel marks a ConfigMap as policy: "rego" (each key a module) or "data"
	// (each key a JSON or YAML object merged under data.tollgate.config).
	PolicyLabel = "tollgate.dev/policy"
	// PolicyStatusAnnotation is where Tollgate says whether a ConfigMap's policy is in service.
	PolicyStatusAnnotation = "tollgate.dev/policy-status"

	policyKindRego = "rego"
	policyKindData = "data"

	EventPolicyRejected = "PolicyRejected"
	EventPolicyLoaded   = "PolicyLoaded"
)

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;patch

// PolicyReconciler compiles the policy sources (embedded, bundles, ConfigMaps) whenever one
// changes and swaps the new set in only when it compiles in strict mode. A broken source
// keeps the last good set in service, and its errors are reported on the ConfigMap (the
// PolicyStatusAnnotation and a Warning Event), in a metric and in the log.
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
	_, ok := obj.GetLabels()[PolicyLabel]
	return ok && obj.GetNamespace() == r.Namespace
}

// contentChanged passes creates, deletes and updates of data or labels.
type contentChanged struct{ predicate.Funcs }

func (contentChanged) Update(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(*corev1.ConfigMap), e.ObjectNew.(*corev1.ConfigMap)
	return !equality.Semantic.DeepEqual(o.Data, n.Data) || !equality.Semantic.DeepEqual(o.BinaryData, n.BinaryData) ||
		!equality.Semantic.DeepEqual(o.Labels, n.Labels)
}

// PolicyStatus is the value of the PolicyStatusAnnotation.
type PolicyStatus struct {
	Status string                    `json:"status"` // ok or error
	Errors []engine.CompileErrorItem `json:"errors,omitempty"`
}

// candidate is a policy set built from the ConfigMaps, with where each part came from.
type candidate struct {
	opts   engine.Options
	origin map[string]string // module path → ConfigMap name
	errors map[string][]engine.CompileErrorItem
	maps   []corev1.ConfigMap
}

// Reconcile compiles the candidate set and swaps it in when it compiles.
func (r *PolicyReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	cand, err := r.candidate(ctx)
	if err != nil {
		return reconcile.Result{}, r.countPolicy(err)
	}
	var compileErr *engine.CompileError
	if len(cand.errors) == 0 {
		e, err := engine.New(ctx, cand.opts)
		switch {
		case errors.As(err, &compileErr):
			for _, item := range compileErr.Items {
				for _, name := range cand.blame(item) {
					cand.errors[name] = append(cand.errors[name], item)
				}
			}
		case err != nil:
			return reconcile.Result{}, r.countPolicy(err)
		default:
			if e.Revision() != r.Policies.Engine().Revision() || r.Policies.failure.Load() != nil {
				r.Policies.Swap(e)
				log.Info("policy set in service", "revision", e.Revision(), "modules", len(e.Modules()))
			}
		}
	}
	r.Policies.firstLoad(cand.failure())
	for name, items := range cand.errors {
		if name == "" { // not from a ConfigMap: a bundle
			policyErrors.WithLabelValues("bundle").Set(1)
			log.Error(&engine.CompileError{Items: items}, "policy bundle rejected; the last good policy set stays in service")
		}
	}
	if _, bad := cand.errors[""]; !bad {
		policyErrors.WithLabelValues("bundle").Set(0)
	}
	return reconcile.Result{}, r.report(ctx, cand)
}

// failure summarises what keeps the candidate out of service, or nil when it compiled.
func (c *candidate) failure() error {
	if len(c.errors) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(c.errors))
	for i, name := range names {
		if name == "" {
			names[i] = "an OPA bundle"
		}
	}
	return fmt.Errorf("the admin policy does not compile (%s; see the tollgate.dev/policy-status annotation), and no good admin policy set has been loaded since the manager started", strings.Join(names, ", "))
}

// blame names the sources an error belongs to: the ConfigMap of the module it is in; else
// (an error located in an embedded module, such as a rule a ConfigMap module conflicts
// with) every Rego ConfigMap when no bundle is loaded, since the embedded set compiles on
// its own; else the bundles, named "".
func (c *candidate) blame(item engine.CompileErrorItem) []string {
	if name, ok := c.origin[item.File]; ok {
		return []string{name}
	}
	if len(c.opts.Bundles) > 0 {
		return []string{""}
	}
	var names []string
	for _, cm := range c.maps {
		if cm.Labels[PolicyLabel] == policyKindRego {
			names = append(names, cm.Name)
		}
	}
	if len(names) == 0 {
		return []string{""}
	}
	return names
}

// candidate reads the policy ConfigMaps into engine options. A data value that does not
// parse is an error of its ConfigMap, and keeps the whole candidate out of service.
func (r *PolicyReconciler) candidate(ctx context.Context) (*candidate, error) {
	list := &corev1.ConfigMapList{}
	if err := r.List(ctx, list, client.InNamespace(r.Namespace), client.HasLabels{PolicyLabel}); err != nil {
		return nil, fmt.Errorf("list policy configmaps in %s: %w", r.Namespace, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	c := &candidate{opts: r.Base, origin: map[string]string{}, errors: map[string][]engine.CompileErrorItem{}, maps: list.Items}
	if r.Bundles != nil {
		c.opts.Bundles = r.Bundles()
	}
	embedded := embeddedPaths()
	data := map[string]any{}
	for _, cm := range list.Items {
		switch kind := cm.Labels[PolicyLabel]; kind {
		case policyKindRego:
			for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
				p := "configmap/" + cm.Name + "/" + k
				if e, ok := embedded[k]; ok { // a key named like an embedded file replaces it
					p = e
				}
				c.origin[p] = cm.Name
				c.opts.Modules = append(c.opts.Modules, engine.Module{Path: p, Source: cm.Data[k]})
			}
		case policyKindData:
			// Each key is a JSON or YAML document (as kubectl create configmap --from-file
			// makes it) whose top-level keys land under data.tollgate.config.
			for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
				var doc map[string]any
				if err := yaml.Unmarshal([]byte(cm.Data[k]), &doc); err != nil {
					c.errors[cm.Name] = append(c.errors[cm.Name], engine.CompileErrorItem{File: k, Message: "not a JSON or YAML object: " + err.Error()})
					continue
				}
				for _, top := range slices.Sorted(maps.Keys(doc)) {
					if prev, dup := data[top]; dup && !equality.Semantic.DeepEqual(prev, doc[top]) {
						c.errors[cm.Name] = append(c.errors[cm.Name], engine.CompileErrorItem{File: k,
							Message: fmt.Sprintf("%q is also set, differently, by another policy data key or ConfigMap; set it in one place", top)})
						continue
					}
					data[top] = doc[top]
				}
			}
		default:
			c.errors[cm.Name] = append(c.errors[cm.Name], engine.CompileErrorItem{
				Message: fmt.Sprintf("label %s=%q: use %q (Rego modules) or %q (data)", PolicyLabel, kind, policyKindRego, policyKindData)})
		}
	}
	c.opts.Data = data
	return c, nil
}

// report writes each ConfigMap's status annotation (only when it changed) and raises a
// Warning Event and the error metric for each rejected one.
func (r *PolicyReconciler) report(ctx context.Context, c *candidate) error {
	log := ctrl.LoggerFrom(ctx)
	var held []string
	for name := range c.errors {
		if name != "" {
			held = append(held, name)
		}
	}
	sort.Strings(held)
	if _, bad := c.errors[""]; bad { // not from a ConfigMap: an OPA bundle
		held = append(held, "an OPA bundle (its errors are in the manager's log)")
	}
	seen := map[string]bool{}
	defer func() { // a deleted ConfigMap's error must not linger in the metric
		for label := range r.reported {
			if !seen[label] {
				policyErrors.DeleteLabelValues(label)
			}
		}
		r.reported = seen
	}()
	for i := range c.maps {
		cm := &c.maps[i]
		label := "configmap/" + cm.Namespace + "/" + cm.Name
		seen[label] = true
		status := PolicyStatus{Status: "ok"}
		if items, bad := c.errors[cm.Name]; bad {
			status = PolicyStatus{Status: "error", Errors: items}
			r.Recorder.Event(cm, corev1.EventTypeWarning, EventPolicyRejected, fmt.Sprintf(
				"Policy not loaded; the last good policy set stays in service. Fix and re-apply: %s", (&engine.CompileError{Items: items}).Error()))
			log.Error(&engine.CompileError{Items: items}, "policy configmap rejected; the last good policy set stays in service", "configmap", cm.Name)
			policyErrors.WithLabelValues(label).Set(1)
		} else {
			policyErrors.WithLabelValues(label).Set(0)
			if len(c.errors) > 0 {
				status = PolicyStatus{Status: "error", Errors: []engine.CompileErrorItem{{Message: fmt.Sprintf(
					"valid, but not in service: the policy set is held back by %s; the last good set stays in service", strings.Join(held, ", "))}}}
			}
		}
		value, err := json.Marshal(status)
		if err != nil {
			return err
		}
		if cm.Annotations[PolicyStatusAnnotation] == string(value) {
			continue
		}
		orig := cm.DeepCopy()
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[PolicyStatusAnnotation] = string(value)
		if err := r.Patch(ctx, cm, client.MergeFrom(orig)); err != nil {
			return r.countPolicy(fmt.Errorf("annotate policy configmap %s: %w", cm.Name, client.IgnoreNotFound(err)))
		}
		if status.Status == "ok" {
			r.Recorder.Event(cm, corev1.EventTypeNormal, EventPolicyLoaded, "Policy compiled and in service (revision "+r.Policies.Engine().Revision()+").")
		}
	}
	return nil
}

func (r *PolicyReconciler) countPolicy(err error) error {
	if err != nil {
		reconcileErrorsTotal.WithLabelValues("policy").Inc()
	}
	return err
}

// embeddedPaths maps the file name of each embedded module to its path, so a ConfigMap
// key "upgrade.rego" replaces "upgrade/upgrade.rego" (ConfigMap keys cannot hold "/").
func embeddedPaths() map[string]string {
	out := map[string]string{}
	_ = fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".rego") && !strings.HasSuffix(p, "_test.rego") {
			out[path.Base(p)] = p
		}
		return nil
	})
	return out
}
