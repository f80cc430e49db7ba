package policysource

import (
	"context"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policies"
)

func policyCM(name, kind string, data map[string]string) corev1.ConfigMap {
	return corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultNamespace, Labels: map[string]string{Label: kind}},
		Data:       data,
	}
}

// holdModule denies the Subscription named sub with code.
func holdModule(pkg, code, sub string) string {
	return `package ` + pkg + `

# METADATA
# title: ` + code + ` holds ` + sub + `
# custom:
#   code: ` + code + `
deny contains denial if {
	input.subscription.metadata.name == "` + sub + `"
	denial := {"code": "` + code + `", "message": "` + code + ` holds ` + sub + `"}
}
`
}

// emergency is a ConfigMap an admin applies to hold etcd at once.
var emergency = policyCM("emergency", KindRego, map[string]string{"emergency.rego": holdModule("tollgate.emergency", "EmergencyHold", "etcd")})

// site is a ConfigMap in service before each scenario: it holds mysql.
var site = policyCM("site", KindRego, map[string]string{"site.rego": holdModule("tollgate.site", "SiteHold", "mysql")})

// firstInstall is an input document the embedded policies allow: a first install of sub from
// a READY catalog.
func firstInstall(sub string) map[string]any {
	subscription := map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"namespace": "ns", "name": sub},
		"spec":     map[string]any{"name": sub, "source": "c", "sourceNamespace": "ns", "installPlanApproval": "Manual"},
		"status":   map[string]any{"currentCSV": sub + ".v1"}}
	catalog := map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
		"metadata": map[string]any{"namespace": "ns", "name": "c"},
		"spec":     map[string]any{"sourceType": "grpc", "image": "x"},
		"status":   map[string]any{"connectionState": map[string]any{"lastObservedState": "READY"}}}
	return map[string]any{
		"apiVersion": "tollgate.dev/input/v1", "subscription": subscription, "installedCSV": nil, "currentCSV": nil,
		"installPlan": nil, "pendingInstallPlans": []any{}, "installPlanPeers": []any{}, "catalogSources": []any{catalog},
		"sourceCatalog": catalog, "operatorCondition": nil, "operatorGroup": nil, "packageManifest": nil,
		"operands": []any{}, "gate": nil, "now": "2026-11-20T12:00:00Z",
		"config": map[string]any{"globalCatalogNamespace": "olm", "defaultMode": "Enforce"},
	}
}

func codes(r *engine.Result) []string {
	var out []string
	for _, d := range r.Decision.Denials {
		out = append(out, d.Code)
	}
	return out
}

var embeddedBase = engine.Options{Policies: policies.FS}

// resolved resolves cms from last and fails the test on an error.
func resolved(t *testing.T, cms []corev1.ConfigMap, last Versions) *Resolution {
	t.Helper()
	res, err := Resolve(context.Background(), embeddedBase, cms, last)
	require.NoError(t, err)
	return res
}

// inService resolves cms from nothing and insists that everything compiles.
func inService(t *testing.T, cms ...corev1.ConfigMap) *Resolution {
	t.Helper()
	res := resolved(t, cms, Versions{})
	require.NotNil(t, res.Engine)
	for name, st := range res.Sources {
		require.Empty(t, st.Errors, "%s", name)
	}
	return res
}

func TestResolveServesEveryCompilingChange(t *testing.T) {
	res := inService(t, site, emergency)
	assert.Equal(t, map[string]SourceStatus{"site": {Serving: ServingCurrent}, "emergency": {Serving: ServingCurrent}}, res.Sources)
	assert.Equal(t, []string{"EmergencyHold"}, codes(res.Engine.Evaluate(context.Background(), firstInstall("etcd"))))
	assert.Equal(t, []string{"SiteHold"}, codes(res.Engine.Evaluate(context.Background(), firstInstall("mysql"))))
}

func TestResolveKeepsABrokenConfigMapAtItsLastGoodVersionAndServesTheOthers(t *testing.T) {
	ctx := context.Background()
	last := inService(t, site).Served
	broken := site
	broken.Data = map[string]string{"site.rego": "package tollgate.site\n\ndeny contains d if {\n"}
	newcomer := policyCM("newcomer", KindRego, map[string]string{"new.rego": "package tollgate.newcomer\n\ndeny contains d if {\n"})

	res := resolved(t, []corev1.ConfigMap{broken, emergency, newcomer}, last)
	require.NotNil(t, res.Engine)
	assert.Equal(t, ServingPrevious, res.Sources["site"].Serving)
	require.NotEmpty(t, res.Sources["site"].Errors)
	assert.Equal(t, "site.rego", res.Sources["site"].Errors[0].File[len("configmap/site/"):])
	assert.Equal(t, ServingNone, res.Sources["newcomer"].Serving, "a ConfigMap that never compiled stays out")
	assert.Equal(t, SourceStatus{Serving: ServingCurrent}, res.Sources["emergency"], "the emergency deny goes in")
	assert.Equal(t, []string{"EmergencyHold"}, codes(res.Engine.Evaluate(ctx, firstInstall("etcd"))))
	assert.Equal(t, []string{"SiteHold"}, codes(res.Engine.Evaluate(ctx, firstInstall("mysql"))), "site's last good version stays in force")

	served, ok := res.Served.ConfigMap("site")
	require.True(t, ok)
	assert.Equal(t, Digest(site), Digest(served), "Served holds the version in service: the last good one")
	_, ok = res.Served.ConfigMap("newcomer")
	assert.False(t, ok, "none of newcomer is served")

	// The next resolve starts from what was served: site is still at its last good version.
	again := resolved(t, []corev1.ConfigMap{broken, emergency, newcomer}, res.Served)
	assert.Equal(t, res.Engine.Revision(), again.Engine.Revision())
	assert.Equal(t, res.Sources, again.Sources)
}

func TestResolveFindsTheCulpritOfAnErrorInAnEmbeddedModule(t *testing.T) {
	// An empty tollgate.lib breaks the embedded modules that use it: the errors are located
	// there, not in the ConfigMap, so the changed sources are tried one at a time.
	hollow := policyCM("hollow", KindRego, map[string]string{"lib.rego": "package tollgate.lib\n"})
	res := resolved(t, []corev1.ConfigMap{hollow, emergency}, inService(t).Served)
	require.NotNil(t, res.Engine)
	assert.Equal(t, ServingNone, res.Sources["hollow"].Serving)
	require.NotEmpty(t, res.Sources["hollow"].Errors)
	assert.NotEmpty(t, res.Sources["hollow"].Errors[0].File)
	assert.Equal(t, SourceStatus{Serving: ServingCurrent}, res.Sources["emergency"])
	assert.Contains(t, codes(res.Engine.Evaluate(context.Background(), firstInstall("etcd"))), "EmergencyHold")
}

func TestResolveIsDeterministicWhenTwoChangesConflict(t *testing.T) {
	a := policyCM("a", KindRego, map[string]string{"a.rego": "package tollgate.shared\n\nx := 1\n"})
	b := policyCM("b", KindRego, map[string]string{"b.rego": "package tollgate.shared\n\nx contains 2\n"})
	first := resolved(t, []corev1.ConfigMap{a, b, emergency}, inService(t).Served)
	require.NotNil(t, first.Engine)
	in := 0
	for _, name := range []string{"a", "b"} {
		if first.Sources[name].Serving == ServingCurrent {
			in++
		}
	}
	assert.Equal(t, 1, in, "one of the two goes in, the other is rejected: %v", first.Sources)
	assert.Equal(t, ServingCurrent, first.Sources["emergency"].Serving)
	for range 3 {
		again := resolved(t, []corev1.ConfigMap{a, b, emergency}, inService(t).Served)
		assert.Equal(t, first.Sources, again.Sources)
		assert.Equal(t, first.Engine.Revision(), again.Engine.Revision())
	}
}

func TestResolveChangesNothingWhenTheLastGoodVersionsNoLongerCompile(t *testing.T) {
	provider := policyCM("provider", KindRego, map[string]string{"f.rego": "package tollgate.shared\n\nheld(name) if name == \"etcd\"\n"})
	user := policyCM("user", KindRego, map[string]string{"u.rego": `package tollgate.user

import data.tollgate.shared

deny contains {"code": "Shared", "message": "held"} if shared.held(input.subscription.metadata.name)
`})
	last := inService(t, provider, user).Served
	res := resolved(t, []corev1.ConfigMap{user, emergency}, last) // provider deleted
	assert.Nil(t, res.Engine, "the set in service stays")
	assert.Equal(t, ServingCurrent, res.Sources["user"].Serving)
	require.NotEmpty(t, res.Sources["user"].Errors, "user no longer compiles without provider")
	assert.Equal(t, "configmap/user/u.rego", res.Sources["user"].Errors[0].File)
	assert.Equal(t, ServingNone, res.Sources["emergency"].Serving)
	require.NotEmpty(t, res.Sources["emergency"].Errors)
	assert.Contains(t, res.Sources["emergency"].Errors[0].Message, "no longer compile together (ConfigMap user)")
}

func TestResolveKeepsTheLastGoodBundles(t *testing.T) {
	read := func(files map[string]string) []*bundle.Bundle {
		src, err := LoadBundles(context.Background(), []string{writeFiles(t, t.TempDir(), files)}, quiet())
		require.NoError(t, err)
		return src.Bundles()
	}
	good := read(map[string]string{".manifest": demoManifest("tollgate/packs/demo"), "demo.rego": demoModule("demo", "held")})
	broken := read(map[string]string{".manifest": demoManifest("tollgate/packs/demo"), "demo.rego": strings.Replace(brokenModule, "packs.broken", "packs.demo", 1)})
	withBundles := func(bs []*bundle.Bundle) engine.Options { o := embeddedBase; o.Bundles = bs; return o }

	first, err := Resolve(context.Background(), withBundles(good), nil, Versions{})
	require.NoError(t, err)
	require.NotNil(t, first.Engine)
	res, err := Resolve(context.Background(), withBundles(broken), []corev1.ConfigMap{emergency}, first.Served)
	require.NoError(t, err)
	require.NotNil(t, res.Engine)
	assert.Equal(t, ServingPrevious, res.Sources[BundlesSource].Serving)
	require.NotEmpty(t, res.Sources[BundlesSource].Errors)
	assert.Equal(t, "demo.rego", res.Sources[BundlesSource].Errors[0].File)
	assert.Equal(t, SourceStatus{Serving: ServingCurrent}, res.Sources["emergency"])
	assert.Equal(t, []string{"DemoHold"}, codes(res.Engine.Evaluate(context.Background(), firstInstall("demo"))), "the last good bundle stays in force")

	// Bundles never served have no last good version: a broken one holds the set back.
	never, err := Resolve(context.Background(), withBundles(broken), []corev1.ConfigMap{emergency}, Versions{})
	require.NoError(t, err)
	assert.Nil(t, never.Engine)
	assert.NotEmpty(t, never.Sources[BundlesSource].Errors)
}

func TestTwoConfigMapsMayNotReplaceTheSameEmbeddedFile(t *testing.T) {
	lib := func(name string) corev1.ConfigMap {
		src, err := policies.FS.ReadFile("lib/lib.rego")
		require.NoError(t, err)
		return policyCM(name, KindRego, map[string]string{"lib.rego": string(src)})
	}
	res := resolved(t, []corev1.ConfigMap{lib("a"), lib("b"), emergency}, Versions{})
	require.NotNil(t, res.Engine)
	assert.Equal(t, SourceStatus{Serving: ServingCurrent}, res.Sources["a"])
	assert.Equal(t, ServingNone, res.Sources["b"].Serving)
	require.NotEmpty(t, res.Sources["b"].Errors)
	assert.Contains(t, res.Sources["b"].Errors[0].Message, "key lib.rego replaces lib/lib.rego, which ConfigMap a replaces too")
	assert.Equal(t, SourceStatus{Serving: ServingCurrent}, res.Sources["emergency"])
}
