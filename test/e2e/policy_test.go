package e2e

import (
	"encoding/json"
	"fmt"
	"os"
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
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// policyMap creates a policy ConfigMap and removes it when the test ends.
func (k *cluster) policyMap(name, kind string, data map[string]string) *corev1.ConfigMap {
	k.T.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: name, Labels: map[string]string{policysource.Label: kind}}, Data: data}
	k.Create(cm)
	k.T.Cleanup(func() {
		_ = k.Client.Delete(k.Ctx, cm)
	})
	return cm
}

// policyStatus waits for the ConfigMap's status annotation to be status and returns it.
func (k *cluster) policyStatus(cm *corev1.ConfigMap, status string) policysource.Status {
	k.T.Helper()
	var got policysource.Status
	require.Eventually(k.T, func() bool {
		if k.Client.Get(k.Ctx, client.ObjectKeyFromObject(cm), cm) != nil {
			return false
		}
		got = policysource.Status{}
		return json.Unmarshal([]byte(cm.Annotations[policysource.StatusAnnotation]), &got) == nil && got.Status == status
	}, olmplay.Wait, olmplay.Tick, "configmap %s never reported %s; annotation: %q", cm.Name, status, cm.Annotations[policysource.StatusAnnotation])
	return got
}

func TestABrokenPolicyConfigMapIsReportedAndChangesNothingUntilFixed(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.Gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
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
	assert.Equal(t, 1.0, metric(t, "tollgate_policy_source_failing", map[string]string{"source": "configmap/" + policyNS + "/site-rules"}))
	assert.Equal(t, "configmap/site-rules/site.rego", status.Errors[0].File)
	assert.Positive(t, status.Errors[0].Row)
	assert.Equal(t, policysource.ServingNone, status.Serving, "it never compiled, so it is not in service")
	k.event(cm, corev1.EventTypeWarning, controllers.EventPolicyRejected, "this ConfigMap is not in service (it has never compiled)")
	assert.Equal(t, revision, policies.Engine().Revision(), "a broken module must not replace the policy set")
	plan := etcd.OfferUpgrade("0.9.4")
	k.Approved(plan) // the old policy set still decides

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
	require.NoError(t, k.Client.Update(k.Ctx, cm))
	k.policyStatus(cm, "ok")
	assert.NotEqual(t, revision, policies.Engine().Revision())
	gate := etcd.BlockedBy("SiteRule")
	assert.Contains(t, gate.Status.Decision.Denials[0].Source, "configmap/site-rules/site.rego")

	// Removing the ConfigMap returns to the embedded policies.
	require.NoError(t, k.Client.Delete(k.Ctx, cm))
	etcd.Gate("allowed again", func(g *tollgatev1alpha1.UpgradeGate) bool { return g.Status.Decision.Allowed })
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
	assert.Equal(t, 1.0, metric(t, "tollgate_policy_source_failing", source))
	require.NoError(t, k.Client.Delete(k.Ctx, cm))
	require.Eventually(t, func() bool { return metric(t, "tollgate_policy_source_failing", source) == 0 }, olmplay.Wait, olmplay.Tick)
}

func TestAMaintenanceWindowPackEnabledByConfigMapHoldsAnUpgradeOutsideItsWindow(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.Gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })

	pack, err := os.ReadFile(repo.Path("bundles", "packs", "window", "window.rego"))
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

	plan := etcd.OfferUpgrade("0.9.4")
	gate := etcd.BlockedBy("OutsideMaintenanceWindow")
	var denial tollgatev1alpha1.Denial
	for _, d := range gate.Status.Decision.Denials {
		if d.Code == "OutsideMaintenanceWindow" {
			denial = d
		}
	}
	assert.Contains(t, denial.Source, "configmap/pack-window/packs.window.rego:", "the explanation names the pack's rule")
	assert.Contains(t, denial.Message, "UTC")
	k.StillUnapproved(plan)

	// Switching the code off through data releases the plan.
	k.policyMap("disable-window", "data", map[string]string{"disabled.yaml": "disabledCodes: [OutsideMaintenanceWindow]\n"})
	k.Approved(plan)
}

// pkg is a Rego package name of this test's own.
func (k *cluster) pkg(name string) string {
	return "tollgate." + name + "_" + strings.ReplaceAll(k.NS, "-", "_")
}

// holdModule denies, with code, every Subscription of this test's namespace.
func (k *cluster) holdModule(pkg, code string) string {
	return "package " + pkg + `

# METADATA
# title: ` + code + ` holds the Subscriptions of ` + k.NS + `
# custom:
#   code: ` + code + `
deny contains {"code": "` + code + `", "message": "held by ` + code + `"} if input.subscription.metadata.namespace == "` + k.NS + `"
`
}

func TestRemovingThePolicyLabelTakesAConfigMapOutOfService(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	cm := k.policyMap("hold-"+k.NS, "rego", map[string]string{"hold.rego": k.holdModule(k.pkg("hold"), "LabelledHold")})
	k.policyStatus(cm, "ok")
	plan := etcd.OfferUpgrade("0.9.4")
	etcd.BlockedBy("LabelledHold")
	k.StillUnapproved(plan)

	delete(cm.Labels, policysource.Label)
	require.NoError(t, k.Client.Update(k.Ctx, cm))
	k.Approved(plan)
	require.Eventually(t, func() bool {
		_, annotated := cm.Annotations[policysource.StatusAnnotation]
		return k.Client.Get(k.Ctx, client.ObjectKeyFromObject(cm), cm) == nil && !annotated
	}, olmplay.Wait, olmplay.Tick, "the status annotation of a ConfigMap that is no longer policy is removed")
}

func TestABrokenConfigMapDoesNotHoldBackAnEmergencyDeny(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.Gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	site := k.policyMap("site-"+k.NS, "rego", map[string]string{"site.rego": k.holdModule(k.pkg("site"), "SiteHold")})
	k.policyStatus(site, "ok")
	etcd.BlockedBy("SiteHold")

	// Someone breaks site; the emergency deny applied next must go in all the same.
	site.Data["site.rego"] = "package " + k.pkg("site") + "\n\ndeny contains d if {\n"
	require.NoError(t, k.Client.Update(k.Ctx, site))
	emergency := k.policyMap("emergency-"+k.NS, "rego", map[string]string{"emergency.rego": k.holdModule(k.pkg("emergency"), "EmergencyHold")})
	k.policyStatus(emergency, "ok")
	status := k.policyStatus(site, "error")
	assert.Equal(t, policysource.ServingPrevious, status.Serving)
	require.NotEmpty(t, status.Errors)
	assert.Equal(t, "configmap/"+site.Name+"/site.rego", status.Errors[0].File)
	assert.Positive(t, status.Errors[0].Row)
	k.event(site, corev1.EventTypeWarning, controllers.EventPolicyRejected, "this ConfigMap's last good version stays in service")

	plan := etcd.OfferUpgrade("0.9.4")
	gate := etcd.BlockedBy("EmergencyHold")
	assert.True(t, olmplay.HasDenial(gate, "SiteHold", false), "site's last good version still holds too")
	k.StillUnapproved(plan)
}

func TestHostilePoliciesAreRejectedAndDecisionsContinue(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
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
			name := fmt.Sprintf("hostile-%d-%s", i, k.NS)
			cm := k.policyMap(name, "rego", map[string]string{"hostile.rego": tt.module})
			status := k.policyStatus(cm, "error")
			require.NotEmpty(t, status.Errors)
			assert.Equal(t, "configmap/"+name+"/hostile.rego", status.Errors[0].File)
			assert.Equal(t, tt.row, status.Errors[0].Row)
			assert.Contains(t, status.Errors[0].Message, tt.says)
		})
	}
	k.Approved(etcd.OfferUpgrade("0.9.4")) // decisions continue on the last good policy
}

func TestAReplacedMainCannotOverridePolicyError(t *testing.T) {
	k := newCluster(t)
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.Gate("evaluated", func(*tollgatev1alpha1.UpgradeGate) bool { return true })
	cm := k.policyMap("main-"+k.NS, "rego", map[string]string{"main.rego": `package tollgate.main

result := {"conditions": [], "health": [], "state": "None", "upToDate": false, "catalogStatus": [], "catalogValidation": [],
	"decision": {"allowed": true, "denials": [{"code": "PolicyError", "message": "trust me", "overridden": true, "overrideReason": "no"}]}}
`})
	k.policyStatus(cm, "ok")
	plan := etcd.OfferUpgrade("0.9.4")
	gate := etcd.BlockedBy(tollgatev1alpha1.CodePolicyError)
	assert.False(t, gate.Status.Decision.Allowed)
	k.StillUnapproved(plan)

	require.NoError(t, k.Client.Delete(k.Ctx, cm))
	k.Approved(plan)
}
