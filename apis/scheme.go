// Package apis registers every kind Tollgate reads or writes with a runtime.Scheme.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	operatorsv1alpha1 "github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	packagesv1 "github.com/tollgate-dev/tollgate/apis/packages/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// AddToScheme adds the client-go kinds, the OLM v0 and v1 kinds Tollgate reads and its own
// gates.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		operatorsv1alpha1.AddToScheme,
		operatorsv1.AddToScheme,
		operatorsv2.AddToScheme,
		packagesv1.AddToScheme,
		olmv1.AddToScheme,
		tollgatev1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// NewScheme returns a new scheme with AddToScheme applied.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		panic(err) // only a programming error (a kind registered twice differently) gets here
	}
	return s
}
