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
//     CSVs' own, reduced to what a CSV's step says of the upgrade (name, replaces, version,
//     bundle properties), and the Subscriptions' it creates, reduced to name and spec.
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
// reduces those to what InstallPlan.FactsOf reads of them: a CSV's name, spec.replaces,
// spec.version and bundle properties; a Subscription's name and spec. A manifest that does
// not parse is kept as it is, so that it stays unreadable (and holds) wherever it is read.
func trimSteps(plan *v1alpha1.InstallPlan) {
	if plan.Status == nil {
		return
	}
	for _, step := range plan.Status.Plan {
		if step == nil || step.Resource.Manifest == "" {
			continue
		}
		kept, ok := reducedManifest(step)
		if !ok {
			continue
		}
		step.Resource.Manifest = ""
		if kept != nil {
			b, _ := json.Marshal(kept)
			step.Resource.Manifest = string(b)
		}
	}
}

// reducedManifest is what is kept of step's manifest; nil when nothing is, and ok false when
// the manifest does not parse as its kind.
func reducedManifest(step *v1alpha1.Step) (kept any, ok bool) {
	switch step.Resource.Kind {
	case v1alpha1.ClusterServiceVersionKind:
		var m v1alpha1.CSVManifest
		if json.Unmarshal([]byte(step.Resource.Manifest), &m) != nil {
			return nil, false
		}
		if p, found := m.Metadata.Annotations[v1alpha1.PropertiesAnnotation]; found {
			m.Metadata.Annotations = map[string]string{v1alpha1.PropertiesAnnotation: p}
		} else {
			m.Metadata.Annotations = nil
		}
		return m, true
	case v1alpha1.SubscriptionKind:
		var m struct {
			Metadata struct {
				Name string `json:"name,omitempty"`
			} `json:"metadata"`
			Spec json.RawMessage `json:"spec,omitempty"`
		}
		if json.Unmarshal([]byte(step.Resource.Manifest), &m) != nil {
			return nil, false
		}
		return m, true
	}
	return nil, true
}
