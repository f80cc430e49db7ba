package input

import (
	"encoding/json"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// Trimmed fields: what the input document never carries, because no policy needs it and
// it is large. The manager's cache drops them as objects arrive (Trim is its transform), and
// the document drops them whatever the reader, so a snapshot evaluates exactly as the cache.
//   - every object: metadata.managedFields, and the annotations below;
//   - ClusterServiceVersion: spec.install.spec (the operator's Deployments and permissions)
//     and spec.description (its long-form documentation);
//   - InstallPlan: the manifests of its steps (status.plan[].resource.manifest) but for the
//     CSVs' own, reduced to what a CSV's step says of the upgrade (the CSV it replaces), and
//     the Subscriptions' it creates, reduced to the dependency (name, package, starting CSV).
var trimmedAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
	"alm-examples", // a CSV's example custom resources
}

// Trim removes the trimmed fields from obj, in place, and returns it (a cache transform may
// pass anything; what is not an object is returned as is).
func Trim(obj any) (any, error) {
	o, ok := obj.(client.Object)
	if !ok {
		return obj, nil
	}
	o.SetManagedFields(nil)
	if ann := o.GetAnnotations(); len(ann) > 0 {
		for _, k := range trimmedAnnotations {
			delete(ann, k)
		}
		o.SetAnnotations(ann)
	}
	switch o := o.(type) {
	case *v1alpha1.ClusterServiceVersion:
		o.Spec.InstallStrategy.StrategySpec = nil
		o.Spec.Description = ""
	case *v1alpha1.InstallPlan:
		trimSteps(o)
	}
	return obj, nil
}

// trimSteps drops the manifest of every step of plan but its CSVs' and Subscriptions', and
// reduces those to what is read of them: the CSV's spec.replaces (InstallPlan.ReplacesOf), the
// Subscription's name, package and starting CSV (Step.Dependency).
func trimSteps(plan *v1alpha1.InstallPlan) {
	if plan.Status == nil {
		return
	}
	for _, step := range plan.Status.Plan {
		if step == nil || step.Resource.Manifest == "" {
			continue
		}
		var kept map[string]any
		switch step.Resource.Kind {
		case v1alpha1.ClusterServiceVersionKind:
			if replaces := plan.ReplacesOf(step.Resolving); replaces != "" {
				kept = map[string]any{"spec": map[string]any{"replaces": replaces}}
			}
		case v1alpha1.SubscriptionKind:
			if d := step.Dependency(); d != nil {
				kept = map[string]any{"metadata": map[string]any{"name": d.Subscription},
					"spec": map[string]any{"name": d.Package, "startingCSV": step.Resolving}}
			}
		}
		step.Resource.Manifest = ""
		if kept != nil {
			b, _ := json.Marshal(kept)
			step.Resource.Manifest = string(b)
		}
	}
}
