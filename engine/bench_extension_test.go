package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// extensionInput is the extension document of a pin's move, as make bench-extensions decides
// it 1,000 times: a ClusterExtension installed and pinned at 1.1.0 and settled, its one
// catalog serving, no operands, 1.2.0 published, and its gate (range <2.0.0) recording the pin
// at 1.1.0. Built by the manager's own document builder.
func extensionInput(tb testing.TB) map[string]any {
	x := input.Extension{
		Extension: benchExtension(),
		Catalogs:  []olmv1.ClusterCatalog{benchClusterCatalog()},
		Gate:      benchExtensionGate(),
	}
	c := &input.ExtensionCandidate{Catalog: "bench", Package: "tollgate-demo", Version: "1.2.0", Channels: []string{"stable"},
		Bundle: fbc.Bundle{Name: "tollgate-demo.v1.2.0", Package: "tollgate-demo", Image: "registry.example/bundles/tollgate-demo:v1.2.0"}}
	doc := x.Document(c, input.Config{}, now)
	require.Empty(tb, doc["operands"])
	return doc
}

func benchExtension() *olmv1.ClusterExtension {
	settled := func(t, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: 1, LastTransitionTime: earlier}
	}
	return &olmv1.ClusterExtension{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "7d1c5a7e-0000-4000-8000-000000000001", Generation: 1, ResourceVersion: "363"},
		Spec: olmv1.ClusterExtensionSpec{Namespace: "demo", ServiceAccount: &olmv1.ServiceAccountReference{Name: "installer"},
			Source: olmv1.SourceConfig{SourceType: olmv1.SourceTypeCatalog, Catalog: &olmv1.CatalogFilter{
				PackageName: "tollgate-demo", Version: "1.1.0", Channels: []string{"stable"},
				UpgradeConstraintPolicy: olmv1.UpgradeConstraintPolicyCatalogProvided}}},
		Status: olmv1.ClusterExtensionStatus{
			Conditions: []metav1.Condition{
				settled("Installed", "Succeeded", "Installed bundle tollgate-demo.v1.1.0 successfully"),
				settled("Progressing", "Succeeded", "Desired state reached"),
			},
			Install: &olmv1.ClusterExtensionInstallStatus{Bundle: olmv1.BundleMetadata{Name: "tollgate-demo.v1.1.0", Version: "1.1.0"}},
		},
	}
}

func benchClusterCatalog() olmv1.ClusterCatalog {
	return olmv1.ClusterCatalog{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Generation: 1, Labels: map[string]string{"olm.operatorframework.io/metadata.name": "bench"}},
		Spec: olmv1.ClusterCatalogSpec{AvailabilityMode: "Available",
			Source: olmv1.CatalogSource{Type: "Image", Image: &olmv1.ImageSource{Ref: "registry.example/catalogs/bench:latest"}}},
		Status: olmv1.ClusterCatalogStatus{
			Conditions: []metav1.Condition{
				{Type: "Serving", Status: metav1.ConditionTrue, Reason: "Available", Message: "serving its content", ObservedGeneration: 1, LastTransitionTime: earlier},
				{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "unpacked", ObservedGeneration: 1, LastTransitionTime: earlier},
			},
			ResolvedSource: &olmv1.ResolvedCatalogSource{Type: "Image", Image: &olmv1.ResolvedImageSource{Ref: "registry.example/catalogs/bench@sha256:9c1e0f7b3a5d2e4c6b8a0f1e3d5c7b9a1e2f4d6c8b0a2e4f6d8c0b2a4e6f8d0c"}},
			URLs:           &olmv1.ClusterCatalogURLs{Base: "https://catalogd.olmv1-system.svc/catalogs/bench"},
			LastUnpacked:   &earlier,
		},
	}
}

func benchExtensionGate() *tollgatev1alpha1.ExtensionGate {
	cond := func(t string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: 1, LastTransitionTime: earlier}
	}
	return &tollgatev1alpha1.ExtensionGate{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "7d1c5a7e-0000-4000-8000-000000000002", Generation: 1},
		Spec:       tollgatev1alpha1.ExtensionGateSpec{Version: "<2.0.0"},
		Status: tollgatev1alpha1.ExtensionGateStatus{
			ObservedGeneration: 1, Package: "tollgate-demo", Installed: "1.1.0", Pin: "1.1.0",
			Catalogs: []string{"bench@registry.example/catalogs/bench@sha256:2f6bd7ad0d3b0fbc0f6a1f1ae7b4fba3c7b84b1e4f1a6c39f5ee1f0e0b1b2c3d"},
			Conditions: []metav1.Condition{
				cond("CatalogsServing", metav1.ConditionTrue, "AllCatalogsServing", "every selected ClusterCatalog serves its content: bench"),
				cond("ExtensionInstalled", metav1.ConditionTrue, "Installed", "tollgate-demo.v1.1.0 is installed at version 1.1.0"),
				cond("UpgradeBlocked", metav1.ConditionFalse, "NoUpgradeWaiting", "no upgrade is waiting: the selected catalogs offer no successor of the installed bundle that the ClusterExtension may move to"),
				cond("PinOwned", metav1.ConditionTrue, "Pinned", "pinned at 1.1.0; no successor within the gate's range and channels"),
				cond("DeniedBundleAdmitted", metav1.ConditionFalse, "NoneAdmitted", "every bundle the pin admits is allowed, or is the installed one"),
			},
			Health: []metav1.Condition{
				cond("Available", metav1.ConditionTrue, "NoOperands", "tollgate-demo.v1.1.0 has no operands; ClusterExtension demo reports Installed=True"),
				cond("Progressing", metav1.ConditionFalse, "NoOperands", "tollgate-demo.v1.1.0 has no operands"),
				cond("Degraded", metav1.ConditionFalse, "NoOperands", "tollgate-demo.v1.1.0 has no operands"),
			},
			Decision: tollgatev1alpha1.Decision{Allowed: true, EvaluatedAt: &earlier, PolicyRevision: "ceb740499156",
				InputDigest: "a1276509344b91a9e4e57eb1c8957ce45e90aac6d99a07e246cfe23ad930957a"},
		},
	}
}
