package input

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// Trimmed fields: what the input document never carries, because no policy needs it and
// it is large. The manager's cache drops them as objects arrive (Trim is its transform), and
// the document drops them whatever the reader, so a snapshot evaluates exactly as the cache.
//   - every object: metadata.managedFields, and the annotations below;
//   - ClusterServiceVersion: spec.install.spec (the operator's Deployments and permissions)
//     and spec.description (its long-form documentation).
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
	if csv, ok := o.(*v1alpha1.ClusterServiceVersion); ok {
		csv.Spec.InstallStrategy.StrategySpec = nil
		csv.Spec.Description = ""
	}
	return obj, nil
}
