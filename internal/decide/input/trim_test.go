package input_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

func TestTrimDropsWhatNoPolicyReadsAndKeepsTheRest(t *testing.T) {
	csv := &v1alpha1.ClusterServiceVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd.v0.9.4",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "olm"}},
			Annotations: map[string]string{"createdAt": "2026-11-01T00:00:00Z", "alm-examples": "[{}]",
				"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
		Spec: v1alpha1.ClusterServiceVersionSpec{Version: "0.9.4", Description: "# etcd\n...",
			InstallStrategy:           v1alpha1.NamedInstallStrategy{StrategyName: "deployment", StrategySpec: &apiextensionsv1.JSON{Raw: []byte(`{"deployments":[]}`)}},
			CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{Owned: []v1alpha1.CRDDescription{{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}}}},
		Status: v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseSucceeded},
	}
	got, err := input.Trim(csv)
	assert.NoError(t, err)
	assert.Same(t, csv, got)
	assert.Nil(t, csv.ManagedFields)
	assert.Equal(t, map[string]string{"createdAt": "2026-11-01T00:00:00Z"}, csv.Annotations)
	assert.Nil(t, csv.Spec.InstallStrategy.StrategySpec)
	assert.Equal(t, "deployment", csv.Spec.InstallStrategy.StrategyName)
	assert.Empty(t, csv.Spec.Description)
	assert.Equal(t, "0.9.4", csv.Spec.Version)
	assert.Len(t, csv.Spec.CustomResourceDefinitions.Owned, 1, "the operand kinds stay")
	assert.Equal(t, v1alpha1.CSVPhaseSucceeded, csv.Status.Phase)

	notAnObject := map[string]any{"a": 1}
	same, err := input.Trim(notAnObject)
	assert.NoError(t, err)
	assert.Equal(t, notAnObject, same)
}
