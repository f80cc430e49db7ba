// Package apis gathers the API types Tollgate reads and writes into one scheme.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	operatorsv1alpha1 "github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	packagesv1 "github.com/tollgate-dev/tollgate/apis/packages/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

var schemeBuilder = runtime.NewSchemeBuilder(
	clientgoscheme.AddToScheme,
	operatorsv1alpha1.AddToScheme,
	operatorsv1.AddToScheme,
	operatorsv2.AddToScheme,
	packagesv1.AddToScheme,
	tollgatev1alpha1.AddToScheme,
)

// AddToScheme adds the Kubernetes built-in kinds, the OLM kinds and UpgradeGate to s.
func AddToScheme(s *runtime.Scheme) error { return schemeBuilder.AddToScheme(s) }

// NewScheme returns a scheme holding every kind Tollgate uses.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}
