package compat

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

func TestGeneratedCatalogSourceCRDAcceptsExactlyOneSource(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, ours)
	image := &v1alpha1.CatalogImageSource{CatalogImage: "quay.io/operatorhubio/catalog:latest"}
	service := &v1alpha1.CatalogServiceSource{Address: "registry.ns.svc:50051"}
	configMap := &v1alpha1.ConfigMapSource{ConfigMap: "catalog"}
	for _, tc := range []struct {
		name    string
		spec    v1alpha1.CatalogSourceSpec
		message string // empty when the spec is valid
	}{
		{name: "a structured image source is accepted", spec: v1alpha1.CatalogSourceSpec{CatalogImageSource: image}},
		{name: "an image source with pod overrides is accepted", spec: v1alpha1.CatalogSourceSpec{CatalogImageSource: &v1alpha1.CatalogImageSource{
			CatalogImage: "quay.io/x:1", PodSpecOverrides: &v1alpha1.CatalogImageSourcePodSpecOverrides{NodeSelector: map[string]string{"a": "b"}},
		}}},
		{name: "a structured service source is accepted", spec: v1alpha1.CatalogSourceSpec{CatalogServiceSource: service}},
		{name: "a structured configmap source is accepted", spec: v1alpha1.CatalogSourceSpec{ConfigMapSource: configMap}},
		{name: "legacy grpc with an image is accepted", spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: "quay.io/x:1"}},
		{name: "legacy grpc with an address is accepted", spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Address: "r:50051"}},
		{name: "legacy configmap with a configMap is accepted", spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeConfigmap, ConfigMap: "c"}},
		{name: "no source at all is rejected", spec: v1alpha1.CatalogSourceSpec{DisplayName: "empty"},
			message: "set exactly one of catalogImageSource, catalogServiceSource, configMapSource, or the legacy sourceType"},
		{name: "two structured sources are rejected", spec: v1alpha1.CatalogSourceSpec{CatalogImageSource: image, ConfigMapSource: configMap},
			message: "set exactly one of"},
		{name: "a structured source beside a legacy sourceType is rejected", spec: v1alpha1.CatalogSourceSpec{CatalogServiceSource: service, SourceType: v1alpha1.SourceTypeGrpc, Address: "r:1"},
			message: "set exactly one of"},
		{name: "legacy grpc without image or address is rejected", spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc},
			message: "legacy sourceType grpc needs image or address"},
		{name: "legacy configmap without configMap is rejected", spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeConfigmap, Image: "x"},
			message: "configmap and internal need configMap"},
		{name: "a legacy field beside a structured source is rejected", spec: v1alpha1.CatalogSourceSpec{CatalogImageSource: image, Image: "quay.io/x:1"},
			message: "belong to the legacy sourceType"},
		{name: "an unknown legacy sourceType is rejected", spec: v1alpha1.CatalogSourceSpec{SourceType: "http", Address: "x"},
			message: "Unsupported value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "cs-"}, Spec: tc.spec}
			err := ours.Client.Create(ctx, cs)
			if tc.message == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.message)
		})
	}
}

func TestGeneratedUpgradeGateCRDValidatesSpec(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, ours)
	for _, tc := range []struct {
		name    string
		spec    tollgatev1alpha1.UpgradeGateSpec
		message string
	}{
		{name: "an override with code and reason is accepted", spec: tollgatev1alpha1.UpgradeGateSpec{Mode: tollgatev1alpha1.ModeAudit,
			Overrides: []tollgatev1alpha1.Override{{Code: "OperatorNotUpgradeable", Reason: "ticket OPS-12", Expires: &stamp}}}},
		{name: "an override without a reason is rejected", spec: tollgatev1alpha1.UpgradeGateSpec{
			Overrides: []tollgatev1alpha1.Override{{Code: "OperatorNotUpgradeable"}}}, message: "spec.overrides[0].reason"},
		{name: "two overrides of one code are rejected", spec: tollgatev1alpha1.UpgradeGateSpec{
			Overrides: []tollgatev1alpha1.Override{{Code: "A", Reason: "x"}, {Code: "A", Reason: "y"}}}, message: "Duplicate value"},
		{name: "an unknown mode is rejected", spec: tollgatev1alpha1.UpgradeGateSpec{Mode: "Sometimes"}, message: "Unsupported value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "gate-"}, Spec: tc.spec}
			err := ours.Client.Create(ctx, gate)
			if tc.message == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.message)
		})
	}
}
