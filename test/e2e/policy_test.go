package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/policysource"
	"github.com/tollgate-dev/tollgate/test/controlplane"
)

// policyMap creates a policy ConfigMap and removes it when the test ends.
func (k *cluster) policyMap(name, kind string, data map[string]string) *corev1.ConfigMap {
	k.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: name, Labels: map[string]string{policysource.Label: kind}}, Data: data}
	k.create(cm)
	k.t.Cleanup(func() {
		_ = k.c.Delete(k.ctx, cm)
	})
	return cm
}

// policyStatus waits for the ConfigMap's status annotation to be status and returns it.
func (k *cluster) policyStatus(cm *corev1.ConfigMap, status string) policysource.Status {
	k.t.Helper()
	var got policysource.Status
	require.Eventually(k.t, func() bool {
		if k.c.Get(k.ctx, client.ObjectKeyFromObject(cm), cm) != nil {
			return false
		}
		got = policysource.Status{}
		return json.Unmarshal([]byte(cm.Annotations[policysource.StatusAnnotation]), &got) == nil && got.Status == status
	}, wait, tick, "configmap %s never reported %s; annotation: %q", cm.Name, status, cm.Annotations[policysource.StatusAnnotation])
	return got
}

func TestABrokenPolicyConfigMapIsReportedAndChangesNothingUntilFixed(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	revision := policies.Engine().Revision()

	cm := k.policyMap("site-rules", "rego", map[string]string{"site.rego": `package tollgate.site

# METADATA
# custom:
#   code: SiteRule
deny contains d if {
	input.subscription.metadata.name == "etcd"
	d := {"code": "SiteRule", "message": "etcd needs a ticket"
}
`})
	status := k.policyStatus(cm, "error")
	require.NotEmpty(t, status.Errors)
	assert.Equal(t, 1.0, metric(t, "tollgate_policy_source_errors", map[string]string{"source": "configmap/" + policyNS + "/site-rules"}))
	assert.Equal(t, "configmap/site-rules/site.rego", status.Errors[0].File)
	assert.Positive(t, status.Errors[0].Row)
	assert.Equal(t, policysource.ServingNone, status.Serving, "it never compiled, so it is not in service")
	k.event(cm, corev1.EventTypeWarning, controllers.EventPolicyRejected, "this ConfigMap is not in service (it has never compiled)")
	assert.Equal(t, revision, policies.Engine().Revision(), "a broken module must not replace the policy set")
	plan := etcd.offerUpgrade("0.9.4")
	k.approved(plan) // the old policy set still decides

	// The fix is picked up, clears the error, and re-evaluates every gate.
	cm.Data["site.rego"] = `package tollgate.site

# METADATA
# custom:
#   code: SiteRule
deny contains d if {
	input.subscription.metadata.name == "etcd"
	d := {"code": "SiteRule", "message": "etcd needs a ticket"}
}
`
	require.NoError(t, k.c.Update(k.ctx, cm))
	k.policyStatus(cm, "ok")
	assert.NotEqual(t, revision, policies.Engine().Revision())
	gate := etcd.blockedBy("SiteRule")
	assert.Contains(t, gate.Status.Decision.Denials[0].Source, "configmap/site-rules/site.rego")

	// Removing the ConfigMap returns to the embedded policies.
	require.NoError(t, k.c.Delete(k.ctx, cm))
	etcd.gate("allowed again", func(g *tollgatev1alpha1.UpgradeGate) bool { return g.Status.Decision.Allowed })
}

func TestAPolicyThatCallsTheNetworkIsRejected(t *testing.T) {
	k := newCluster(t)
	revision := policies.Engine().Revision()
	cm := k.policyMap("leaky", "rego", map[string]string{"leaky.rego": `package tollgate.leaky

deny contains {"code": "Leak", "message": "x"} if {
	http.send({"method": "GET", "url": "http://example.com"}).status_code == 200
}
`})
	status := k.policyStatus(cm, "error")
	require.NotEmpty(t, status.Errors)
	assert.Contains(t, status.Errors[0].Message, "http.send")
	assert.Equal(t, revision, policies.Engine().Revision())

	// Deleting the rejected ConfigMap clears its error from the metric.
	source := map[string]string{"source": "configmap/" + policyNS + "/leaky"}
	assert.Equal(t, 1.0, metric(t, "tollgate_policy_source_errors", source))
	require.NoError(t, k.c.Delete(k.ctx, cm))
	require.Eventually(t, func() bool { return metric(t, "tollgate_policy_source_errors", source) == 0 }, wait, tick)
}

func TestAMaintenanceWindowPackEnabledByConfigMapHoldsAnUpgradeOutsideItsWindow(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })

	pack, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "bundles", "packs", "window", "window.rego"))
	require.NoError(t, err)
	// A one-minute window twelve hours away: now is outside it, whatever the time.
	start := time.Now().UTC().Add(12 * time.Hour)
	window := `packs:
  window:
    windows:
      - {start: "` + start.Format("15:04") + `", end: "` + start.Add(time.Minute).Format("15:04") + `", timeZone: UTC}
`
	k.policyMap("pack-window-config", "data", map[string]string{"packs.yaml": window})
	cm := k.policyMap("pack-window", "rego", map[string]string{"packs.window.rego": string(pack)})
	k.policyStatus(cm, "ok")

	plan := etcd.offerUpgrade("0.9.4")
	gate := etcd.blockedBy("OutsideMaintenanceWindow")
	var denial tollgatev1alpha1.Denial
	for _, d := range gate.Status.Decision.Denials {
		if d.Code == "OutsideMaintenanceWindow" {
			denial = d
		}
	}
	assert.Contains(t, denial.Source, "configmap/pack-window/packs.window.rego:", "the explanation names the pack's rule")
	assert.Contains(t, denial.Message, "UTC")
	k.stillUnapproved(plan)

	// Switching the code off through data releases the plan.
	k.policyMap("disable-window", "data", map[string]string{"disabled.yaml": "disabledCodes: [OutsideMaintenanceWindow]\n"})
	k.approved(plan)
}

// pkg is a Rego package name of this test's own.
func (k *cluster) pkg(name string) string {
	return "tollgate." + name + "_" + strings.ReplaceAll(k.ns, "-", "_")
}

// holdModule denies, with code, every Subscription of this test's namespace.
func (k *cluster) holdModule(pkg, code string) string {
	return "package " + pkg + `

# METADATA
# title: ` + code + ` holds the Subscriptions of ` + k.ns + `
# custom:
#   code: ` + code + `
deny contains {"code": "` + code + `", "message": "held by ` + code + `"} if input.subscription.metadata.namespace == "` + k.ns + `"
`
}

func TestRemovingThePolicyLabelTakesAConfigMapOutOfService(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	cm := k.policyMap("hold-"+k.ns, "rego", map[string]string{"hold.rego": k.holdModule(k.pkg("hold"), "LabelledHold")})
	k.policyStatus(cm, "ok")
	plan := etcd.offerUpgrade("0.9.4")
	etcd.blockedBy("LabelledHold")
	k.stillUnapproved(plan)

	delete(cm.Labels, policysource.Label)
	require.NoError(t, k.c.Update(k.ctx, cm))
	k.approved(plan)
	require.Eventually(t, func() bool {
		_, annotated := cm.Annotations[policysource.StatusAnnotation]
		return k.c.Get(k.ctx, client.ObjectKeyFromObject(cm), cm) == nil && !annotated
	}, wait, tick, "the status annotation of a ConfigMap that is no longer policy is removed")
}

func TestABrokenConfigMapDoesNotHoldBackAnEmergencyDeny(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	site := k.policyMap("site-"+k.ns, "rego", map[string]string{"site.rego": k.holdModule(k.pkg("site"), "SiteHold")})
	k.policyStatus(site, "ok")
	etcd.blockedBy("SiteHold")

	// Someone breaks site; the emergency deny applied next must go in all the same.
	site.Data["site.rego"] = "package " + k.pkg("site") + "\n\ndeny contains d if {\n"
	require.NoError(t, k.c.Update(k.ctx, site))
	emergency := k.policyMap("emergency-"+k.ns, "rego", map[string]string{"emergency.rego": k.holdModule(k.pkg("emergency"), "EmergencyHold")})
	k.policyStatus(emergency, "ok")
	status := k.policyStatus(site, "error")
	assert.Equal(t, policysource.ServingPrevious, status.Serving)
	require.NotEmpty(t, status.Errors)
	assert.Equal(t, "configmap/"+site.Name+"/site.rego", status.Errors[0].File)
	assert.Positive(t, status.Errors[0].Row)
	k.event(site, corev1.EventTypeWarning, controllers.EventPolicyRejected, "this ConfigMap's last good version stays in service")

	plan := etcd.offerUpgrade("0.9.4")
	gate := etcd.blockedBy("EmergencyHold")
	assert.True(t, hasDenial(gate, "SiteHold", false), "site's last good version still holds too")
	k.stillUnapproved(plan)
}

func TestHostilePoliciesAreRejectedAndDecisionsContinue(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	tests := []struct {
		scenario string
		module   string
		row      int
		says     string
	}{
		{"a clock read", "package " + k.pkg("clock") + "\n\ndeny contains {\"code\": \"Late\", \"message\": \"m\"} if time.now_ns() > 0\n", 3,
			"time.now_ns is not allowed in Tollgate policies (its result is not a function of the input, so decisions could not be replayed; the clock is input.now"},
		{"a dice roll", "package " + k.pkg("dice") + "\n\ndeny contains {\"code\": \"Dice\", \"message\": \"m\"} if rand.intn(\"x\", 2) == 0\n", 3,
			"rand.intn is not allowed"},
		{"a deny in a deeper package", k.holdModule("tollgate.packs.acme."+strings.TrimPrefix(k.pkg("window"), "tollgate."), "AcmeWindow"), 7,
			"is never collected: tollgate.main collects deny only from packages tollgate.<name> and tollgate.packs.<name>, so this rule could never deny; move it to tollgate.<name> or tollgate.packs.<name>"},
	}
	for i, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			name := fmt.Sprintf("hostile-%d-%s", i, k.ns)
			cm := k.policyMap(name, "rego", map[string]string{"hostile.rego": tt.module})
			status := k.policyStatus(cm, "error")
			require.NotEmpty(t, status.Errors)
			assert.Equal(t, "configmap/"+name+"/hostile.rego", status.Errors[0].File)
			assert.Equal(t, tt.row, status.Errors[0].Row)
			assert.Contains(t, status.Errors[0].Message, tt.says)
		})
	}
	k.approved(etcd.offerUpgrade("0.9.4")) // decisions continue on the last good policy
}

func TestAReplacedMainCannotOverridePolicyError(t *testing.T) {
	k := newCluster(t)
	etcd := k.install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	cm := k.policyMap("main-"+k.ns, "rego", map[string]string{"main.rego": `package tollgate.main

result := {"conditions": [], "health": [], "state": "None", "upToDate": false, "catalogStatus": [], "catalogValidation": [],
	"decision": {"allowed": true, "denials": [{"code": "PolicyError", "message": "trust me", "overridden": true, "overrideReason": "no"}]}}
`})
	k.policyStatus(cm, "ok")
	plan := etcd.offerUpgrade("0.9.4")
	gate := etcd.blockedBy(tollgatev1alpha1.CodePolicyError)
	assert.False(t, gate.Status.Decision.Allowed)
	k.stillUnapproved(plan)

	require.NoError(t, k.c.Delete(k.ctx, cm))
	k.approved(plan)
}
