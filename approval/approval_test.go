package approval

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers/gather"
	"github.com/tollgate-dev/tollgate/engine"
)

func plan(approval v1alpha1.Approval, approved bool, phase v1alpha1.InstallPlanPhase, csvs ...string) *v1alpha1.InstallPlan {
	return &v1alpha1.InstallPlan{
		Spec:   v1alpha1.InstallPlanSpec{Approval: approval, Approved: approved, ClusterServiceVersionNames: csvs},
		Status: &v1alpha1.InstallPlanStatus{Phase: phase},
	}
}

func TestApprovable(t *testing.T) {
	allowed := Verdict{Subscription: "ns/a", Allowed: true, Mode: tollgatev1alpha1.ModeEnforce, Approval: v1alpha1.ApprovalManual}
	blocked := Verdict{Subscription: "ns/b", BlockedBy: "OperatorNotUpgradeable", Mode: tollgatev1alpha1.ModeEnforce, Approval: v1alpha1.ApprovalManual}
	audit := allowed
	audit.Mode = tollgatev1alpha1.ModeAudit
	automatic := allowed
	automatic.Approval = v1alpha1.ApprovalAutomatic
	manual, required := v1alpha1.ApprovalManual, v1alpha1.InstallPlanPhaseRequiresApproval

	for _, tc := range []struct {
		name     string
		plan     *v1alpha1.InstallPlan
		verdicts map[string]Verdict
		want     bool
		why      string
	}{
		{"a manual plan awaiting approval whose only CSV is allowed is approved",
			plan(manual, false, required, "a.v2"), map[string]Verdict{"a.v2": allowed}, true, ""},
		{"an automatic plan is never touched",
			plan(v1alpha1.ApprovalAutomatic, false, required, "a.v2"), map[string]Verdict{"a.v2": allowed}, false, "not Manual"},
		{"an approved plan is not approved again",
			plan(manual, true, required, "a.v2"), map[string]Verdict{"a.v2": allowed}, false, "already approved"},
		{"a plan still planning is not approved",
			plan(manual, false, v1alpha1.InstallPlanPhasePlanning, "a.v2"), map[string]Verdict{"a.v2": allowed}, false, `"Planning"`},
		{"a plan without status is not approved",
			&v1alpha1.InstallPlan{Spec: v1alpha1.InstallPlanSpec{Approval: manual, ClusterServiceVersionNames: []string{"a.v2"}}}, map[string]Verdict{"a.v2": allowed}, false, `phase is ""`},
		{"a plan listing no CSV is not approved",
			plan(manual, false, required), nil, false, "lists no"},
		{"a bundled plan with one blocked operator is held",
			plan(manual, false, required, "a.v2", "b.v2"), map[string]Verdict{"a.v2": allowed, "b.v2": blocked}, false, "b.v2 (ns/b: OperatorNotUpgradeable)"},
		{"a bundled plan with every operator allowed is approved",
			plan(manual, false, required, "a.v2", "b.v2"), map[string]Verdict{"a.v2": allowed, "b.v2": allowed}, true, ""},
		{"a plan listing a CSV no gate knows is held",
			plan(manual, false, required, "a.v2", "x.v1"), map[string]Verdict{"a.v2": allowed}, false, "x.v1 (no Subscription"},
		{"an audit-mode gate never approves",
			plan(manual, false, required, "a.v2"), map[string]Verdict{"a.v2": audit}, false, "Audit mode"},
		{"a CSV of an automatic Subscription holds the plan",
			plan(manual, false, required, "a.v2"), map[string]Verdict{"a.v2": automatic}, false, "approves automatically"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := Approvable(tc.plan, tc.verdicts)
			assert.Equal(t, tc.want, got)
			if tc.why == "" {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, tc.why)
			}
		})
	}
}

func TestVerdictsJudgePeersNowRatherThanTrustTheirGates(t *testing.T) {
	ctx := context.Background()
	snap := gather.NewSnapshot()
	peer := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "etcd"},
		Spec:   &v1alpha1.SubscriptionSpec{InstallPlanApproval: v1alpha1.ApprovalManual},
		Status: v1alpha1.SubscriptionStatus{CurrentCSV: "etcd.v2"}}
	now := metav1.Now()
	staleGate := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "etcd"},
		Spec:   tollgatev1alpha1.UpgradeGateSpec{Mode: tollgatev1alpha1.ModeEnforce},
		Status: tollgatev1alpha1.UpgradeGateStatus{Decision: tollgatev1alpha1.Decision{Allowed: true, EvaluatedAt: &now}}}
	require.NoError(t, snap.Add(peer))
	require.NoError(t, snap.Add(staleGate))
	p := plan(v1alpha1.ApprovalManual, false, v1alpha1.InstallPlanPhaseRequiresApproval, "redis.v2", "etcd.v2")
	p.Namespace = "ns"
	own := map[string]Verdict{"redis.v2": {Subscription: "ns/redis", Allowed: true, Mode: tollgatev1alpha1.ModeEnforce, Approval: v1alpha1.ApprovalManual}}
	judgeWith := func(codes ...string) Judge {
		return func(context.Context, types.NamespacedName) (*engine.Result, error) {
			res := &engine.Result{}
			for _, c := range codes {
				res.Decision.Denials = append(res.Decision.Denials, tollgatev1alpha1.Denial{Code: c})
			}
			return res, nil
		}
	}

	for _, tc := range []struct {
		name    string
		judge   Judge
		approve bool
	}{
		{"without a judge the peer gate's recorded decision counts", nil, true},
		{"a peer that is blocked now holds the plan, whatever its gate last said", judgeWith("OperatorNotUpgradeable"), false},
		{"a peer held only by the plan itself does not hold it", judgeWith(tollgatev1alpha1.CodeInstallPlanIncludesBlockedOperator), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verdicts, err := Verdicts(ctx, snap, p, tollgatev1alpha1.ModeEnforce, own, tc.judge)
			require.NoError(t, err)
			ok, why := Approvable(p, verdicts)
			assert.Equal(t, tc.approve, ok, why)
		})
	}
}
