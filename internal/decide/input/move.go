package input

import (
	"context"
	"fmt"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	"github.com/tollgate-dev/tollgate/policies"
)

// From is the from end of a move that replaces csv, an existing CSV of its namespace, owned by
// owner (nil: nobody): its package (its olm.package property, else owner's), version (its
// spec.version as OLM parses it, else its name's, said), phase and OperatorCondition. The error
// is a failed read.
func (b *Builder) From(ctx context.Context, csv *v1alpha1.ClusterServiceVersion, owner *v1alpha1.Subscription) (*policies.End, error) {
	g := &gatherer{r: b.Reader}
	oc := g.optional(ctx, csv.Namespace, csv.Name, &operatorsv2.OperatorCondition{})
	if g.err != nil {
		return nil, fmt.Errorf("read the OperatorCondition of %s/%s: %w", csv.Namespace, csv.Name, g.err)
	}
	e := &policies.End{Name: csv.Name, Package: policies.PropertiesPackage(csv.Annotations[v1alpha1.PropertiesAnnotation]), Phase: string(csv.Status.Phase), OperatorCondition: object(oc)}
	if owner != nil {
		e.Owner = map[string]any{"kind": "Subscription", "namespace": owner.Namespace, "name": owner.Name}
		if e.Package == "" && owner.Spec != nil {
			e.Package = owner.Spec.Package
		}
	}
	e.SetVersion([2]string{csv.Spec.Version, fmt.Sprintf("ClusterServiceVersion %s spec.version", csv.Name)})
	return e, nil
}
