package bypass_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
)

func installPlan(name string, approval v1alpha1.Approval, approved bool, phase v1alpha1.InstallPlanPhase, annotations map[string]string) v1alpha1.InstallPlan {
	return v1alpha1.InstallPlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name), Annotations: annotations},
		Spec:       v1alpha1.InstallPlanSpec{Approval: approval, Approved: approved},
		Status:     &v1alpha1.InstallPlanStatus{Phase: phase},
	}
}

func planNames(found []bypass.Found) []string {
	out := []string{}
	for _, f := range found {
		out = append(out, f.Plan.Name)
	}
	return out
}

func TestInstallPlansThatBypassedAGate(t *testing.T) {
	record := map[string]string{tollgatev1alpha1.ApprovalRecordAnnotation: tollgatev1alpha1.RecordOf("etcd", tollgatev1alpha1.Decision{PolicyRevision: "r1"}, metav1.Now()).String()}
	forged := map[string]string{tollgatev1alpha1.ApprovalRecordAnnotation: `{"gate": "Not A Name!"}`}
	manual, auto := v1alpha1.ApprovalManual, v1alpha1.ApprovalAutomatic
	pending := []v1alpha1.InstallPlan{
		installPlan("by-hand", manual, true, v1alpha1.InstallPlanPhaseInstalling, nil),
		installPlan("by-tollgate", manual, true, v1alpha1.InstallPlanPhaseInstalling, record),
		installPlan("forged-record", manual, true, v1alpha1.InstallPlanPhaseRequiresApproval, forged),
		installPlan("waiting", manual, false, v1alpha1.InstallPlanPhaseRequiresApproval, nil),
		installPlan("automatic", auto, true, v1alpha1.InstallPlanPhaseInstalling, nil),
		installPlan("run-unapproved", manual, false, v1alpha1.InstallPlanPhaseInstalling, nil),
		installPlan("unpack-failed", manual, false, v1alpha1.InstallPlanPhaseFailed, nil),
	}
	gate := &tollgatev1alpha1.UpgradeGate{}
	assert.Equal(t, []string{"by-hand", "forged-record", "run-unapproved"}, planNames(bypass.InstallPlans(gate, pending, &pending[0])),
		"Manual, approved without a readable record or run unapproved; the referenced plan among them once")

	gate.Status.Bypasses = []tollgatev1alpha1.Bypass{
		{UID: "uid-by-hand", Field: tollgatev1alpha1.BypassFieldApproved, To: "true"},
		{UID: "uid-run-unapproved", Field: tollgatev1alpha1.BypassFieldPhase, To: "Installing"},
	}
	assert.Equal(t, []string{"forged-record"}, planNames(bypass.InstallPlans(gate, pending, nil)), "one recorded already is not found again")
	completed := installPlan("run-unapproved", manual, false, v1alpha1.InstallPlanPhaseComplete, nil)
	assert.Empty(t, planNames(bypass.InstallPlans(gate, []v1alpha1.InstallPlan{completed}, nil)), "the run it completed is the same bypass")
}

func TestHowAPlanWentAroundItsGate(t *testing.T) {
	manual := v1alpha1.ApprovalManual
	c, ok := bypass.ChangeOf(new(installPlan("p", manual, true, v1alpha1.InstallPlanPhaseInstalling, nil)))
	assert.True(t, ok)
	assert.Equal(t, bypass.Change{Field: "spec.approved", To: "true", Path: []string{"spec", "approved"}}, c)
	for _, phase := range []v1alpha1.InstallPlanPhase{v1alpha1.InstallPlanPhaseInstalling, v1alpha1.InstallPlanPhaseComplete} {
		c, ok = bypass.ChangeOf(new(installPlan("p", manual, false, phase, nil)))
		assert.True(t, ok, phase)
		assert.Equal(t, bypass.Change{Field: "status.phase", To: "Installing", Path: []string{"status", "phase"}}, c, phase)
	}
	for _, phase := range []v1alpha1.InstallPlanPhase{v1alpha1.InstallPlanPhaseRequiresApproval, v1alpha1.InstallPlanPhaseFailed, ""} {
		_, ok = bypass.ChangeOf(new(installPlan("p", manual, false, phase, nil)))
		assert.False(t, ok, "phase %q runs nothing unapproved", phase)
	}
	_, ok = bypass.ChangeOf(new(installPlan("p", v1alpha1.ApprovalAutomatic, false, v1alpha1.InstallPlanPhaseInstalling, nil)))
	assert.False(t, ok, "an Automatic plan is OLM's to run")
}

func TestACompletedPlanIsABypassOnlyWhenTheGateSawItWaiting(t *testing.T) {
	done := installPlan("done", v1alpha1.ApprovalManual, true, v1alpha1.InstallPlanPhaseComplete, nil)
	failed := installPlan("failed", v1alpha1.ApprovalManual, true, v1alpha1.InstallPlanPhaseFailed, nil)
	awaiting := metav1.Condition{Type: tollgatev1alpha1.ConditionInstallPlanAwaitingManualApproval, Status: metav1.ConditionTrue, Reason: "RequiresApproval"}
	nothingAwaits := awaiting
	nothingAwaits.Status, nothingAwaits.Reason = metav1.ConditionFalse, "NoApprovalPending"
	gate := func(ref string, uid types.UID, c metav1.Condition) *tollgatev1alpha1.UpgradeGate {
		g := &tollgatev1alpha1.UpgradeGate{}
		g.Status.Conditions = []metav1.Condition{c}
		if ref != "" {
			g.Status.InstallPlanRef = &corev1.ObjectReference{Name: ref, UID: uid}
		}
		return g
	}
	tests := []struct {
		name string
		gate *tollgatev1alpha1.UpgradeGate
		plan v1alpha1.InstallPlan
		want []string
	}{
		{"the gate recorded it waiting: approved and completed before it looked again", gate("done", "", awaiting), done, []string{"done"}},
		{"the same, failed", gate("failed", "uid-failed", awaiting), failed, []string{"failed"}},
		{"history: approved and completed before the gate saw it", gate("", "", nothingAwaits), done, []string{}},
		{"the gate recorded it, nothing awaiting approval", gate("done", "", nothingAwaits), done, []string{}},
		{"the gate recorded another plan of that name", gate("done", "another-uid", awaiting), done, []string{}},
		{"a plan Tollgate never gated: no gate status", &tollgatev1alpha1.UpgradeGate{}, done, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, planNames(bypass.InstallPlans(tt.gate, nil, &tt.plan)))
		})
	}
}
