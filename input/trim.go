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
//     CSVs' own, reduced to what a CSV's step says of the upgrade: the CSV it replaces.
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

// trimSteps drops the manifest of every step of plan but its CSVs', and reduces those to the
// CSV's spec.replaces, which is all that is read of them (InstallPlan.ReplacesOf).
func trimSteps(plan *v1alpha1.InstallPlan) {
	if plan.Status == nil {
		return
	}
	for _, step := range plan.Status.Plan {
		if step == nil || step.Resource.Manifest == "" {
			continue
		}
		replaces := ""
		if step.Resource.Kind == v1alpha1.ClusterServiceVersionKind {
			replaces = plan.ReplacesOf(step.Resolving)
		}
		step.Resource.Manifest = ""
		if replaces != "" {
			b, _ := json.Marshal(map[string]any{"spec": map[string]any{"replaces": replaces}})
			step.Resource.Manifest = string(b)
		}
	}
}
