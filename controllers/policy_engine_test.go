package controllers

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/policies"
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

// policyTestbed is a policy reconciler over a fake client, after its first load.
type policyTestbed struct {
	t   *testing.T
	c   client.Client
	pol *Policies
	r   *PolicyReconciler
}

func newPolicyTestbed(t *testing.T, objs ...client.Object) *policyTestbed {
	t.Helper()
	ctx := context.Background()
	base := engine.Options{Policies: policies.FS}
	embedded, err := engine.New(ctx, base)
	require.NoError(t, err)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	pol := NewPolicies(embedded)
	tb := &policyTestbed{t: t, c: c, pol: pol, r: &PolicyReconciler{Client: c, Recorder: record.NewFakeRecorder(100),
		Namespace: "tollgate-system", Policies: pol, Base: base}}
	tb.reconcile()
	return tb
}

func (tb *policyTestbed) reconcile() {
	tb.t.Helper()
	_, err := tb.r.Reconcile(context.Background(), policyRequest)
	require.NoError(tb.t, err)
}

func (tb *policyTestbed) status(name string) policysource.Status {
	tb.t.Helper()
	cm := &corev1.ConfigMap{}
	require.NoError(tb.t, tb.c.Get(context.Background(), client.ObjectKey{Namespace: "tollgate-system", Name: name}, cm))
	var st policysource.Status
	if v, ok := cm.Annotations[policysource.StatusAnnotation]; ok {
		require.NoError(tb.t, json.Unmarshal([]byte(v), &st))
	}
	return st
}

func (tb *policyTestbed) update(name string, change func(*corev1.ConfigMap)) {
	tb.t.Helper()
	cm := &corev1.ConfigMap{}
	require.NoError(tb.t, tb.c.Get(context.Background(), client.ObjectKey{Namespace: "tollgate-system", Name: name}, cm))
	change(cm)
	require.NoError(tb.t, tb.c.Update(context.Background(), cm))
}

func (tb *policyTestbed) decide(sub string) *engine.Result {
	in := firstInstall()
	in["subscription"].(map[string]any)["metadata"].(map[string]any)["name"] = sub
	return tb.pol.Evaluate(context.Background(), in)
}

func regoMap(name, module string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "tollgate-system", Labels: map[string]string{policysource.Label: policysource.KindRego}},
		Data:       map[string]string{name + ".rego": module},
	}
}

func hold(pkg, code, sub string) string {
	return "package " + pkg + "\n\ndeny contains {\"code\": \"" + code + "\", \"message\": \"held\"} if input.subscription.metadata.name == \"" + sub + "\"\n"
}

func TestABrokenConfigMapDoesNotHoldBackAnEmergencyDeny(t *testing.T) {
	good := regoMap("site", hold("tollgate.site", "SiteHold", "mysql"))
	tb := newPolicyTestbed(t, good.DeepCopy())
	require.True(t, tb.decide("etcd").Decision.Allowed)
	assert.Equal(t, policysource.Digest(*good), tb.status("site").ServingDigest)

	tb.update("site", func(cm *corev1.ConfigMap) { cm.Data["site.rego"] = "package tollgate.site\n\ndeny contains d if {\n" })
	require.NoError(t, tb.c.Create(context.Background(), regoMap("emergency", hold("tollgate.emergency", "EmergencyHold", "etcd"))))
	tb.reconcile()

	assert.Equal(t, "EmergencyHold", tb.decide("etcd").Decision.BlockedBy(), "the emergency deny is in service")
	assert.Equal(t, "SiteHold", tb.decide("mysql").Decision.BlockedBy(), "site's last good version stays in force")
	site := tb.status("site")
	assert.Equal(t, "error", site.Status)
	assert.Equal(t, policysource.ServingPrevious, site.Serving)
	require.NotEmpty(t, site.Errors)
	assert.Equal(t, "configmap/site/site.rego", site.Errors[0].File)
	assert.Equal(t, policysource.Digest(*good), site.ServingDigest, "the digest of the last good version, which is served")
	emergency := regoMap("emergency", hold("tollgate.emergency", "EmergencyHold", "etcd"))
	assert.Equal(t, policysource.Status{Status: "ok", Serving: policysource.ServingCurrent, ServingDigest: policysource.Digest(*emergency)}, tb.status("emergency"))
}

func TestRemovingThePolicyLabelTakesAConfigMapOutOfService(t *testing.T) {
	tb := newPolicyTestbed(t, regoMap("emergency", hold("tollgate.emergency", "EmergencyHold", "etcd")))
	require.Equal(t, "EmergencyHold", tb.decide("etcd").Decision.BlockedBy())
	require.Equal(t, "ok", tb.status("emergency").Status)

	var old corev1.ConfigMap
	tb.update("emergency", func(cm *corev1.ConfigMap) {
		cm.DeepCopyInto(&old)
		delete(cm.Labels, policysource.Label)
	})
	unlabelled := &corev1.ConfigMap{}
	require.NoError(t, tb.c.Get(context.Background(), client.ObjectKeyFromObject(&old), unlabelled))
	p := policyConfigMap{tb.r.isPolicy}
	assert.True(t, p.Update(event.UpdateEvent{ObjectOld: &old, ObjectNew: unlabelled}), "the update that removes the label is seen")
	assert.True(t, contentChanged{}.Update(event.UpdateEvent{ObjectOld: &old, ObjectNew: unlabelled}))
	assert.False(t, p.Update(event.UpdateEvent{ObjectOld: unlabelled, ObjectNew: unlabelled}), "other ConfigMaps are not")
	assert.True(t, p.Delete(event.DeleteEvent{Object: &old}), "deleting a policy ConfigMap is seen")

	tb.reconcile()
	assert.True(t, tb.decide("etcd").Decision.Allowed, "its policy is out of service")
	assert.Equal(t, policysource.Status{}, tb.status("emergency"), "its status annotation is removed: it is no longer policy")
}

func TestAConfigMapBrokenAtStartFailsClosedUntilFixedOrRemoved(t *testing.T) {
	tb := newPolicyTestbed(t,
		regoMap("broken", "package tollgate.broken\n\ndeny contains d if {\n"),
		regoMap("emergency", hold("tollgate.emergency", "EmergencyHold", "etcd")))
	res := tb.decide("mysql")
	assert.Equal(t, tollgatev1alpha1.CodePolicyError, res.Decision.BlockedBy(), "its policy may have been in force before the restart")
	assert.Contains(t, res.Decision.Denials[0].Message, "broken")
	assert.Equal(t, policysource.ServingNone, tb.status("broken").Serving)
	assert.Empty(t, tb.status("broken").ServingDigest, "no version of it is served")

	// A later change of another ConfigMap goes in, and the failure stays.
	tb.update("emergency", func(cm *corev1.ConfigMap) {
		cm.Data["emergency.rego"] = hold("tollgate.emergency", "EmergencyHold", "mysql")
	})
	tb.reconcile()
	assert.Equal(t, tollgatev1alpha1.CodePolicyError, tb.decide("mysql").Decision.BlockedBy())
	assert.Contains(t, tb.pol.Engine().Modules(), "configmap/emergency/emergency.rego")

	require.NoError(t, tb.c.Delete(context.Background(), regoMap("broken", "")))
	tb.reconcile()
	assert.Equal(t, "EmergencyHold", tb.decide("mysql").Decision.BlockedBy(), "the failure is gone with the broken ConfigMap")
	assert.True(t, tb.decide("etcd").Decision.Allowed)

	// A ConfigMap created broken later was never in force: it does not fail anything.
	require.NoError(t, tb.c.Create(context.Background(), regoMap("later", "package tollgate.later\n\ndeny contains d if {\n")))
	tb.reconcile()
	assert.True(t, tb.decide("etcd").Decision.Allowed)
	assert.Equal(t, policysource.ServingNone, tb.status("later").Serving)
}
