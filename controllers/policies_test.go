package controllers

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/policysource"
)

// firstInstall is an input the embedded policies allow: a first install from a READY catalog.
func firstInstall() map[string]any {
	sub := map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"namespace": "ns", "name": "etcd"},
		"spec":     map[string]any{"name": "etcd", "source": "c", "sourceNamespace": "ns", "installPlanApproval": "Manual"},
		"status":   map[string]any{"currentCSV": "etcd.v1"}}
	catalog := map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
		"metadata": map[string]any{"namespace": "ns", "name": "c"},
		"spec":     map[string]any{"sourceType": "grpc", "image": "x"},
		"status":   map[string]any{"connectionState": map[string]any{"lastObservedState": "READY"}}}
	return map[string]any{
		"apiVersion": "tollgate.dev/input/v1", "subscription": sub, "installedCSV": nil, "currentCSV": nil,
		"installPlan": nil, "pendingInstallPlans": []any{}, "installPlanPeers": []any{}, "catalogSources": []any{catalog},
		"sourceCatalog": catalog, "operatorCondition": nil, "operatorGroup": nil, "packageManifest": nil,
		"operands": []any{}, "gate": nil, "now": "2026-11-20T12:00:00Z",
		"config": map[string]any{"globalCatalogNamespace": "olm", "defaultMode": "Enforce"},
	}
}

func TestStartupWaitsForTheAdminPolicyAndFailsClosedWhenItDoesNotCompile(t *testing.T) {
	ctx := context.Background()
	base := engine.Options{Policies: policies.FS}
	embedded, err := engine.New(ctx, base)
	require.NoError(t, err)
	require.True(t, embedded.Evaluate(ctx, firstInstall()).Decision.Allowed, "the input is allowed by the embedded policies")

	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	broken := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: "tollgate-system", Labels: map[string]string{policysource.Label: policysource.KindRego}},
		Data:       map[string]string{"site.rego": "package tollgate.site\n\ndeny contains x if {"},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(broken).Build()
	pol := NewPolicies(embedded)
	r := &PolicyReconciler{Client: c, Recorder: record.NewFakeRecorder(10), Namespace: "tollgate-system", Policies: pol, Base: base}

	assert.False(t, pol.Loaded(), "before the first load the gates wait")

	_, err = r.Reconcile(ctx, policyRequest)
	require.NoError(t, err)
	require.True(t, pol.Loaded())
	res := pol.Evaluate(ctx, firstInstall())
	assert.False(t, res.Decision.Allowed, "no admin policy has compiled yet: nothing is approved on the embedded policies alone")
	require.Len(t, res.Decision.Denials, 1)
	assert.Equal(t, tollgatev1alpha1.CodePolicyError, res.Decision.Denials[0].Code)
	assert.Contains(t, res.Decision.Denials[0].Message, "site")

	// The fix is compiled and served; later failures keep it (last good set).
	setModule := func(src string) {
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(broken), broken))
		broken.Data["site.rego"] = src
		require.NoError(t, c.Update(ctx, broken))
	}
	setModule("package tollgate.site\n")
	_, err = r.Reconcile(ctx, policyRequest)
	require.NoError(t, err)
	assert.True(t, pol.Evaluate(ctx, firstInstall()).Decision.Allowed)

	setModule("package tollgate.site\n\ndeny contains x if {")
	_, err = r.Reconcile(ctx, policyRequest)
	require.NoError(t, err)
	assert.True(t, pol.Evaluate(ctx, firstInstall()).Decision.Allowed, "a later failure keeps the last good set")
	got := &corev1.ConfigMap{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(broken), got))
	assert.Contains(t, got.Annotations[policysource.StatusAnnotation], `"status":"error"`)
}

func TestWithoutPolicyConfigMapsTheFirstLoadServesTheEmbeddedPolicies(t *testing.T) {
	ctx := context.Background()
	base := engine.Options{Policies: policies.FS}
	embedded, err := engine.New(ctx, base)
	require.NoError(t, err)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	pol := NewPolicies(embedded)
	r := &PolicyReconciler{Client: fake.NewClientBuilder().WithScheme(scheme).Build(), Recorder: record.NewFakeRecorder(10),
		Namespace: "tollgate-system", Policies: pol, Base: base}
	_, err = r.Reconcile(ctx, policyRequest)
	require.NoError(t, err)
	assert.True(t, pol.Loaded())
	assert.Same(t, embedded, pol.Engine())
	assert.True(t, pol.Evaluate(ctx, firstInstall()).Decision.Allowed)
}
