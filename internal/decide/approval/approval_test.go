package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

const ns = "operators"

// verdicts is a stand-in for the policies: each Subscription's result, by name, and the
// installPlanPeers each evaluation saw.
type verdicts struct {
	results map[string]engine.Decision
	peers   map[string][]any
}

func (v *verdicts) Evaluate(_ context.Context, input map[string]any) *engine.Result {
	name := input["subscription"].(map[string]any)["metadata"].(map[string]any)["name"].(string)
	if peers, _ := input["installPlanPeers"].([]any); len(peers) > 0 {
		v.peers[name] = peers
	}
	return &engine.Result{Decision: v.results[name]}
}

func allowed() engine.Decision { return engine.Decision{Allowed: true} }

func deniedBy(code string) engine.Decision {
	return engine.Decision{Denials: []engine.Denial{{Denial: tollgatev1alpha1.Denial{Code: code}}}}
}

func subscription(name, csv string, approval v1alpha1.Approval) *v1alpha1.Subscription {
	return &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:   &v1alpha1.SubscriptionSpec{InstallPlanApproval: approval},
		Status: v1alpha1.SubscriptionStatus{CurrentCSV: csv}}
}

func gate(name string, mode tollgatev1alpha1.Mode, storedAllowed bool) *tollgatev1alpha1.UpgradeGate {
	now := metav1.Now()
	return &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:   tollgatev1alpha1.UpgradeGateSpec{Mode: mode},
		Status: tollgatev1alpha1.UpgradeGateStatus{Decision: tollgatev1alpha1.Decision{Allowed: storedAllowed, EvaluatedAt: &now}}}
}

func plan(name string, approval v1alpha1.Approval, approved bool, phase v1alpha1.InstallPlanPhase, csvs ...string) *v1alpha1.InstallPlan {
	return &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:   v1alpha1.InstallPlanSpec{Approval: approval, Approved: approved, ClusterServiceVersionNames: csvs},
		Status: &v1alpha1.InstallPlanStatus{Phase: phase}}
}

func world(t *testing.T, objs ...client.Object) *snapshot.Snapshot {
	t.Helper()
	snap := snapshot.New()
	for _, o := range objs {
		require.NoError(t, snap.Add(o))
	}
	return snap
}

const (
	manual    = v1alpha1.ApprovalManual
	automatic = v1alpha1.ApprovalAutomatic
	waiting   = v1alpha1.InstallPlanPhaseRequiresApproval
	enforce   = tollgatev1alpha1.ModeEnforce
)

func TestAPlanMustBeTollgatesToApprove(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan *v1alpha1.InstallPlan
		why  string
	}{
		{"an automatic plan is OLM's", plan("p", automatic, false, waiting, "a.v2"), `"Automatic", not Manual`},
		{"an approved plan is not approved again", plan("p", manual, true, waiting, "a.v2"), "already approved"},
		{"an approval by Tollgate says on which decision", recorded(plan("p", manual, true, waiting, "a.v2")),
			"already approved (by Tollgate, on the decision of gate a, policy revision rev-1, at 2026-11-23T10:00:00Z)"},
		{"a plan still planning waits", plan("p", manual, false, v1alpha1.InstallPlanPhasePlanning, "a.v2"), `"Planning", not RequiresApproval`},
		{"a plan listing no CSV is not approved", plan("p", manual, false, waiting), "lists no ClusterServiceVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &approval.Decider{Reader: world(t, subscription("a", "a.v2", manual), gate("a", enforce, true)),
				Policies: &verdicts{results: map[string]engine.Decision{"a": allowed()}, peers: map[string][]any{}}}
			v, err := d.Judge(context.Background(), tc.plan)
			require.NoError(t, err)
			assert.False(t, v.Approvable)
			assert.Contains(t, v.Ineligible, tc.why)
			assert.Contains(t, v.WhyNot(), tc.why)
		})
	}
}

// recorded gives plan the approval record of gate a.
func recorded(plan *v1alpha1.InstallPlan) *v1alpha1.InstallPlan {
	rec := tollgatev1alpha1.ApprovalRecord{Gate: "a", PolicyRevision: "rev-1", ApprovedAt: metav1.NewTime(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))}
	plan.Annotations = map[string]string{tollgatev1alpha1.ApprovalRecordAnnotation: rec.String()}
	return plan
}

func TestEveryOperatorOfABundledPlanMustBeAllowed(t *testing.T) {
	bundled := plan("install-both", manual, false, waiting, "a.v2", "b.v2")
	for _, tc := range []struct {
		name     string
		b        engine.Decision
		bGate    *tollgatev1alpha1.UpgradeGate
		bSub     *v1alpha1.Subscription
		approve  bool
		blockers []approval.Blocker
	}{
		{"both allowed: approved", allowed(), gate("b", enforce, true), subscription("b", "b.v2", manual), true, nil},
		{"a peer whose policy says allowed: false without a denial holds the plan", engine.Decision{Allowed: false}, gate("b", enforce, true), subscription("b", "b.v2", manual), false,
			[]approval.Blocker{{CSV: "b.v2", Subscription: ns + "/b", Reason: approval.BlockDenied, Codes: []string{}}}},
		{"a peer blocked now holds the plan, whatever its gate last recorded", deniedBy("OperatorNotUpgradeable"), gate("b", enforce, true), subscription("b", "b.v2", manual), false,
			[]approval.Blocker{{CSV: "b.v2", Subscription: ns + "/b", Reason: approval.BlockDenied, Codes: []string{"OperatorNotUpgradeable"}}}},
		{"a peer in Audit mode holds the plan", allowed(), gate("b", tollgatev1alpha1.ModeAudit, true), subscription("b", "b.v2", manual), false,
			[]approval.Blocker{{CSV: "b.v2", Subscription: ns + "/b", Reason: approval.BlockAudit}}},
		{"a peer that approves automatically holds the plan", allowed(), gate("b", enforce, true), subscription("b", "b.v2", automatic), false,
			[]approval.Blocker{{CSV: "b.v2", Subscription: ns + "/b", Reason: approval.BlockAutomatic}}},
		{"a peer without a gate holds the plan", allowed(), nil, subscription("b", "b.v2", manual), false,
			[]approval.Blocker{{CSV: "b.v2", Subscription: ns + "/b", Reason: approval.BlockNoGate}}},
		{"a CSV no Subscription wants holds the plan", allowed(), gate("b", enforce, true), subscription("b", "b.v3", manual), false,
			[]approval.Blocker{{CSV: "b.v2", Reason: approval.BlockNoSubscription}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := []client.Object{subscription("a", "a.v2", manual), gate("a", enforce, true), tc.bSub, bundled}
			if tc.bGate != nil {
				objs = append(objs, tc.bGate)
			}
			policies := &verdicts{results: map[string]engine.Decision{"a": allowed(), "b": tc.b}, peers: map[string][]any{}}
			d := &approval.Decider{Reader: world(t, objs...), Policies: policies}
			dec, err := d.Decide(context.Background(), types.NamespacedName{Namespace: ns, Name: "a"})
			require.NoError(t, err)
			require.Len(t, dec.Plans, 1)
			assert.Equal(t, tc.approve, dec.Plans[0].Approvable, dec.Plans[0].WhyNot())
			assert.Equal(t, tc.blockers, nilIfEmpty(dec.Plans[0].Blockers))

			judged, err := d.Judge(context.Background(), bundled)
			require.NoError(t, err)
			assert.Equal(t, dec.Plans[0], judged, "the plan's verdict does not depend on which Subscription asks")
		})
	}
}

func TestAPeerIsSeenThroughItsOwnDecision(t *testing.T) {
	policies := &verdicts{results: map[string]engine.Decision{"a": allowed(), "b": engine.Decision{Allowed: false}}, peers: map[string][]any{}}
	d := &approval.Decider{Reader: world(t, subscription("a", "a.v2", manual), gate("a", enforce, true),
		subscription("b", "b.v2", manual), gate("b", enforce, true), plan("install-both", manual, false, waiting, "a.v2", "b.v2")), Policies: policies}
	dec, err := d.Decide(context.Background(), types.NamespacedName{Namespace: ns, Name: "a"})
	require.NoError(t, err)
	want := []any{map[string]any{"installPlan": "install-both", "csv": "b.v2", "subscription": map[string]any{"namespace": ns, "name": "b"}, "allowed": false, "codes": []any{}}}
	assert.Equal(t, want, policies.peers["a"], "installPlanPeers carries the peer's own allowed, not only its codes")
	require.Len(t, dec.Peers, 1)
	assert.Equal(t, &types.NamespacedName{Namespace: ns, Name: "b"}, dec.Peers[0].Subscription)
}

func TestAGoneSubscriptionHasNoDecision(t *testing.T) {
	d := &approval.Decider{Reader: world(t), Policies: &verdicts{}}
	dec, err := d.Decide(context.Background(), types.NamespacedName{Namespace: ns, Name: "gone"})
	require.NoError(t, err)
	assert.Nil(t, dec)
}

func nilIfEmpty(b []approval.Blocker) []approval.Blocker {
	if len(b) == 0 {
		return nil
	}
	return b
}
