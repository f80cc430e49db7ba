package admission

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
)

// kustomize builds a kustomization folder; see controlplane.Kustomize.
func kustomize(dir string) ([]*unstructured.Unstructured, error) { return controlplane.Kustomize(dir) }
