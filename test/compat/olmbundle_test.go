package compat

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/controlplane"
)

// Tollgate's own OLM bundle is accepted by the upstream ClusterServiceVersion schema and
// describes what config/ deploys.
func TestTollgatesOwnCSVIsAcceptedByTheUpstreamCRD(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "bundles", "olm", "manifests", "tollgate.clusterserviceversion.yaml"))
	require.NoError(t, err, "run make manifests to generate the bundle")
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(data, &u.Object))
	u.SetNamespace(namespace(t, upstream))
	require.NoError(t, upstream.Client.Create(ctx, u))

	csv := &v1alpha1.ClusterServiceVersion{}
	require.NoError(t, upstream.Client.Get(ctx, client.ObjectKeyFromObject(u), csv))
	assert.Equal(t, "deployment", csv.Spec.InstallStrategy.StrategyName)
	require.Len(t, csv.Spec.CustomResourceDefinitions.Owned, 1)
	assert.Equal(t, "upgradegates.tollgate.dev", csv.Spec.CustomResourceDefinitions.Owned[0].Name)
	assert.Contains(t, csv.Spec.InstallModes, v1alpha1.InstallMode{Type: "AllNamespaces", Supported: true})
	var spec struct {
		Deployments []struct {
			Name string `json:"name"`
		} `json:"deployments"`
		ClusterPermissions []struct {
			ServiceAccountName string `json:"serviceAccountName"`
		} `json:"clusterPermissions"`
	}
	require.NoError(t, yaml.Unmarshal(csv.Spec.InstallStrategy.StrategySpec.Raw, &spec))
	require.Len(t, spec.Deployments, 1)
	assert.Equal(t, "tollgate-manager", spec.Deployments[0].Name)
	require.Len(t, spec.ClusterPermissions, 1)
	assert.Equal(t, "tollgate-manager", spec.ClusterPermissions[0].ServiceAccountName)
}
