package statusreport_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/internal/report/statusreport"
)

var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func at(hoursAgo int) *metav1.Time {
	t := metav1.NewTime(now.Add(-time.Duration(hoursAgo) * time.Hour))
	return &t
}

// gate is an UpgradeGate whose decision was taken hoursAgo with revision; held by codes
// when any (a code ending in "!" is overridden), allowed otherwise.
func gate(ns, name, revision string, hoursAgo int, codes ...string) *tollgatev1alpha1.UpgradeGate {
	g := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	g.Status.Decision = tollgatev1alpha1.Decision{Allowed: true, PolicyRevision: revision, EvaluatedAt: at(hoursAgo)}
	for _, c := range codes {
		overridden := c[len(c)-1] == '!'
		if overridden {
			c = c[:len(c)-1]
		}
		g.Status.Decision.Denials = append(g.Status.Decision.Denials, tollgatev1alpha1.Denial{Code: c, Message: c + " says no", Overridden: overridden})
		if !overridden {
			g.Status.Decision.Allowed = false
		}
	}
	return g
}

// blockedSince marks g's UpgradeBlocked condition True since hoursAgo.
func blockedSince(g *tollgatev1alpha1.UpgradeGate, hoursAgo int, message string) *tollgatev1alpha1.UpgradeGate {
	g.Status.Conditions = append(g.Status.Conditions, metav1.Condition{
		Type: tollgatev1alpha1.ConditionUpgradeBlocked, Status: metav1.ConditionTrue, Reason: "Denied",
		Message: message, LastTransitionTime: *at(hoursAgo),
	})
	return g
}

func subscription(ns, name string) *v1alpha1.Subscription {
	return &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func plan(ns, name string, approval v1alpha1.Approval, approved bool, phase v1alpha1.InstallPlanPhase, csvs ...string) *v1alpha1.InstallPlan {
	p := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	p.Spec.Approval, p.Spec.Approved, p.Spec.ClusterServiceVersionNames = approval, approved, csvs
	if phase != "" {
		p.Status = &v1alpha1.InstallPlanStatus{Phase: phase}
	}
	return p
}

func policyConfigMap(name, status string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: policysource.DefaultNamespace, Name: name, Labels: map[string]string{policysource.Label: "rego"}}}
	if status != "" {
		cm.Annotations = map[string]string{policysource.StatusAnnotation: status}
	}
	return cm
}

func read(t *testing.T, o statusreport.Options, objs ...client.Object) *statusreport.Report {
	t.Helper()
	snap := snapshot.New()
	for _, obj := range objs {
		require.NoError(t, snap.Add(obj))
	}
	o.Now, o.PolicyNamespace = now, policysource.DefaultNamespace
	rep, err := statusreport.Read(context.Background(), snap, o)
	require.NoError(t, err)
	return rep
}

func TestGatesAreCountedByStateAndCode(t *testing.T) {
	undecided := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: "d", Name: "new"}}
	rep := read(t, statusreport.Options{Limit: 10},
		gate("a", "etcd", "r1", 1), gate("b", "etcd", "r1", 2, "ChangeFreeze"),
		gate("c", "etcd", "r1", 3, "ChangeFreeze", "OperatorNotUpgradeable"), gate("e", "etcd", "r1", 4, "ChangeFreeze!", "Window"),
		undecided, subscription("a", "etcd"), subscription("f", "lonely"))

	assert.Equal(t, statusreport.GateCounts{Total: 5, Allowed: 1, Held: 3, NoDecision: 1}, rep.Gates)
	assert.Equal(t, 1, rep.SubscriptionsWithoutGate, "f/lonely has no gate")
	assert.Equal(t, []statusreport.CodeCount{{Code: "ChangeFreeze", Gates: 2}, {Code: "OperatorNotUpgradeable", Gates: 1}, {Code: "Window", Gates: 1}}, rep.ByCode,
		"most gates first, then by code; an overridden code holds nothing")
}

func TestTheLongestHoldsComeFirst(t *testing.T) {
	noClock := gate("z", "etcd", "r1", 0, "Window")
	noClock.Status.Decision.EvaluatedAt = nil
	objs := []client.Object{
		gate("a", "recent", "r1", 1, "Window"),
		blockedSince(gate("b", "changed-codes", "r2", 1, "ChangeFreeze"), 48, "held since the freeze began"),
		gate("c", "overridden-first", "r1", 5, "ChangeFreeze!", "Window"),
		noClock,
	}
	rep := read(t, statusreport.Options{Limit: 10}, objs...)
	want := []statusreport.HeldGate{
		{Namespace: "b", Name: "changed-codes", Since: "2026-11-18T12:00:00Z", Code: "ChangeFreeze", Message: "ChangeFreeze says no", PolicyRevision: "r2"},
		{Namespace: "c", Name: "overridden-first", Since: "2026-11-20T07:00:00Z", Code: "Window", Message: "Window says no", PolicyRevision: "r1"},
		{Namespace: "a", Name: "recent", Since: "2026-11-20T11:00:00Z", Code: "Window", Message: "Window says no", PolicyRevision: "r1"},
		{Namespace: "z", Name: "etcd", Code: "Window", Message: "Window says no", PolicyRevision: "r1"},
	}
	assert.Empty(t, cmp.Diff(want, rep.HeldLongest, cmpopts.IgnoreFields(statusreport.HeldGate{}, "Start")),
		"the UpgradeBlocked condition dates a hold that changed codes; a hold of unknown start comes last")
	assert.Equal(t, now.Add(-48*time.Hour), rep.HeldLongest[0].Start)
	assert.True(t, rep.HeldLongest[3].Start.IsZero())

	limited := read(t, statusreport.Options{Limit: 1}, objs...)
	assert.Len(t, limited.HeldLongest, 1)
	assert.Equal(t, 4, limited.Gates.Held, "the limit shortens the list, not the count")
}

func TestTheRevisionInForceIsTheOneMostGatesWereDecidedWith(t *testing.T) {
	for _, tt := range []struct {
		scenario string
		gates    []client.Object
		want     string
		ranked   []string
	}{
		{"most gates win over a newer revision", []client.Object{gate("a", "x", "old", 9), gate("b", "x", "old", 8), gate("c", "x", "new", 1)}, "old", []string{"old", "new"}},
		{"on a tie the newest decision wins", []client.Object{gate("a", "x", "old", 9), gate("c", "x", "new", 1)}, "new", []string{"new", "old"}},
		{"no decision, no revision", []client.Object{&tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x"}}}, "", []string{}},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			rep := read(t, statusreport.Options{Limit: 10}, tt.gates...)
			assert.Equal(t, tt.want, rep.Policy.Revision)
			ranked := []string{}
			for _, rc := range rep.Policy.Revisions {
				ranked = append(ranked, rc.Revision)
			}
			assert.Equal(t, tt.ranked, ranked)
		})
	}
	rep := read(t, statusreport.Options{Limit: 10}, gate("a", "x", "r", 9), gate("b", "x", "r", 2))
	require.Len(t, rep.Policy.Revisions, 1)
	assert.Equal(t, 2, rep.Policy.Revisions[0].Gates)
	assert.Equal(t, "2026-11-20T10:00:00Z", rep.Policy.Revisions[0].LastEvaluatedAt, "the newest evaluation among the revision's gates")
}

func TestPlansAwaitingApprovalAreManualUnapprovedAndRequireApproval(t *testing.T) {
	rep := read(t, statusreport.Options{},
		plan("a", "waiting", v1alpha1.ApprovalManual, false, v1alpha1.InstallPlanPhaseRequiresApproval, "etcd.v0.9.4"),
		plan("a", "no-csvs", v1alpha1.ApprovalManual, false, v1alpha1.InstallPlanPhaseRequiresApproval),
		plan("a", "approved", v1alpha1.ApprovalManual, true, v1alpha1.InstallPlanPhaseInstalling),
		plan("a", "automatic", v1alpha1.ApprovalAutomatic, false, v1alpha1.InstallPlanPhaseInstalling),
		plan("a", "new", v1alpha1.ApprovalManual, false, ""),
		plan("a", "done", v1alpha1.ApprovalManual, true, v1alpha1.InstallPlanPhaseComplete),
		plan("a", "failed", v1alpha1.ApprovalManual, false, v1alpha1.InstallPlanPhaseFailed))
	assert.Equal(t, statusreport.PlanCounts{Pending: 5, AwaitingApproval: 2, Awaiting: []statusreport.PlanRef{
		{Namespace: "a", Name: "no-csvs", CSVs: []string{}},
		{Namespace: "a", Name: "waiting", CSVs: []string{"etcd.v0.9.4"}},
	}}, rep.InstallPlans)
}

func TestPolicyConfigMapsReportTheManagersAnnotation(t *testing.T) {
	rep := read(t, statusreport.Options{},
		policyConfigMap("fresh", ""),
		policyConfigMap("garbled", "{not json"),
		policyConfigMap("good", `{"status":"ok","serving":"current"}`))
	require.Len(t, rep.Policy.Sources, 3)
	assert.Equal(t, statusreport.SourceHealth{Name: "fresh", Kind: "rego", Status: "unknown", Errors: []string{}}, rep.Policy.Sources[0], "not reported yet")
	assert.Equal(t, "unreadable", rep.Policy.Sources[1].Status)
	assert.Contains(t, rep.Policy.Sources[1].Errors[0], "the tollgate.dev/policy-status annotation is not JSON")
	assert.Equal(t, statusreport.SourceHealth{Name: "good", Kind: "rego", Status: "ok", Serving: "current", Errors: []string{}}, rep.Policy.Sources[2])
}

func TestANamespaceNarrowsGatesSubscriptionsAndPlans(t *testing.T) {
	rep := read(t, statusreport.Options{Namespace: "a", Limit: 10, Scope: "namespace a"},
		gate("a", "etcd", "r1", 1, "Window"), gate("b", "etcd", "r1", 1, "Window"),
		subscription("a", "other"), subscription("b", "other"),
		plan("b", "waiting", v1alpha1.ApprovalManual, false, v1alpha1.InstallPlanPhaseRequiresApproval))
	assert.Equal(t, statusreport.GateCounts{Total: 1, Held: 1}, rep.Gates)
	assert.Equal(t, 1, rep.SubscriptionsWithoutGate)
	assert.Zero(t, rep.InstallPlans.Pending)
	assert.Equal(t, "namespace a", rep.Scope)
}

func TestBypassesOfBothKindsOfGateComeNewestFirst(t *testing.T) {
	seen := metav1.NewTime(now.Add(-time.Hour))
	planBypass := func(name string, hoursAgo int) tollgatev1alpha1.Bypass {
		return tollgatev1alpha1.Bypass{Kind: tollgatev1alpha1.BypassKindInstallPlan, Name: name, UID: "u-" + types.UID(name), Field: tollgatev1alpha1.BypassFieldApproved,
			To: "true", By: "kubectl-patch", At: at(hoursAgo), SeenAt: seen, Decision: tollgatev1alpha1.BypassDecision{Codes: []string{"MajorVersionUpgrade"}, PolicyRevision: "r1"}}
	}
	held := gate("a", "etcd", "r1", 9, "MajorVersionUpgrade")
	held.Status.Bypasses = []tollgatev1alpha1.Bypass{planBypass("install-new", 2), planBypass("install-old", 30)}
	xgate := &tollgatev1alpha1.ExtensionGate{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	xgate.Status.Bypasses = []tollgatev1alpha1.Bypass{{Kind: tollgatev1alpha1.BypassKindClusterExtension, Name: "demo", UID: "x1",
		Field: tollgatev1alpha1.BypassFieldVersion, From: "1.0.0", To: "1.2.0", By: tollgatev1alpha1.UnknownFieldManager, SeenAt: seen,
		Decision: tollgatev1alpha1.BypassDecision{Allowed: true, PolicyRevision: "r1"}}}

	rep := read(t, statusreport.Options{Limit: 10}, held, gate("b", "quiet", "r1", 1), xgate)
	lines := []string{}
	for _, b := range rep.Bypasses {
		lines = append(lines, b.GateKind+" "+b.Gate+": "+b.Line)
	}
	assert.Equal(t, []string{
		"ExtensionGate demo: ClusterExtension demo pin moved from 1.0.0 to 1.2.0 by an unknown field manager, seen at 2026-11-20T11:00:00Z, without Tollgate's approval (gate demo allowed it; policy revision r1)",
		"UpgradeGate etcd: InstallPlan a/install-new approved by field manager kubectl-patch at 2026-11-20T10:00:00Z, without Tollgate's approval (gate a/etcd held it: MajorVersionUpgrade; policy revision r1)",
		"UpgradeGate etcd: InstallPlan a/install-old approved by field manager kubectl-patch at 2026-11-19T06:00:00Z, without Tollgate's approval (gate a/etcd held it: MajorVersionUpgrade; policy revision r1)",
	}, lines, "newest first, by when the field was set, else when Tollgate saw it")

	b, err := json.Marshal(rep.Bypasses[1])
	require.NoError(t, err)
	assert.JSONEq(t, `{"gateKind": "UpgradeGate", "namespace": "a", "gate": "etcd", "kind": "InstallPlan", "name": "install-new", "uid": "u-install-new",
		"field": "spec.approved", "to": "true", "by": "kubectl-patch", "at": "2026-11-20T10:00:00Z", "seenAt": "2026-11-20T11:00:00Z",
		"decision": {"allowed": false, "codes": ["MajorVersionUpgrade"], "policyRevision": "r1"},
		"line": "InstallPlan a/install-new approved by field manager kubectl-patch at 2026-11-20T10:00:00Z, without Tollgate's approval (gate a/etcd held it: MajorVersionUpgrade; policy revision r1)"}`, string(b))
}

func TestAnEmptyReportHasListsNotNulls(t *testing.T) {
	b, err := json.Marshal(read(t, statusreport.Options{Scope: "all namespaces"}))
	require.NoError(t, err)
	assert.JSONEq(t, `{
  "now": "2026-11-20T12:00:00Z", "scope": "all namespaces",
  "gates": {"total": 0, "allowed": 0, "held": 0, "noDecision": 0},
  "subscriptionsWithoutGate": 0, "byCode": [], "heldLongest": [],
  "installPlans": {"pending": 0, "awaitingApproval": 0, "awaiting": []},
  "policy": {"revision": "", "revisions": [], "sources": []}
}`, string(b))
}
