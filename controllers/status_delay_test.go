package controllers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/input"
)

func TestAStatusChangeWaitsOnlyWhileOLMIsMidway(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "etcd"}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		urgent bool
		midway bool
		at     time.Duration // after the first wait
		want   time.Duration
	}{
		{"midway: wait", false, true, 0, olmStepDelay},
		{"still midway a second later: wait the rest", false, true, time.Second, time.Second},
		{"still midway after the delay: write", false, true, olmStepDelay, 0},
		{"urgent: write", true, true, 0, 0},
		{"OLM done: write", false, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p planning
			if tt.at > 0 {
				p.wait(key, false, true, t0)
			}
			assert.Equal(t, tt.want, p.wait(key, tt.urgent, tt.midway, t0.Add(tt.at)))
		})
	}
}

func TestOLMIsMidwayWhilePreparingAPlanOrCopyingConditions(t *testing.T) {
	planned := []v1alpha1.InstallPlan{{}} // no phase yet
	ready := []v1alpha1.InstallPlan{{Status: &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval}}}
	oc := func(generation int64, spec string, status string, observed int64) *operatorsv2.OperatorCondition {
		c := &operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Generation: generation}}
		c.Spec.Conditions = []metav1.Condition{{Type: "Upgradeable", Status: metav1.ConditionStatus(spec)}}
		if status != "" {
			c.Status.Conditions = []metav1.Condition{{Type: "Upgradeable", Status: metav1.ConditionStatus(status), ObservedGeneration: observed}}
		}
		return c
	}
	tests := []struct {
		name string
		doc  input.Document
		want bool
	}{
		{"a plan being prepared", input.Document{PendingInstallPlans: planned}, true},
		{"a plan awaiting approval", input.Document{PendingInstallPlans: ready}, false},
		{"nothing pending", input.Document{}, false},
		{"the operator's word not copied yet", input.Document{OperatorCondition: oc(2, "True", "False", 1)}, true},
		{"the operator's word never copied", input.Document{OperatorCondition: oc(1, "True", "", 0)}, true},
		{"the operator's word copied", input.Document{OperatorCondition: oc(2, "True", "True", 2), PendingInstallPlans: ready}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, midway(&tt.doc))
		})
	}
}

func TestOnlyAChangeOfOutcomeOrRecordIsUrgent(t *testing.T) {
	at := metav1.Now()
	held := tollgatev1alpha1.UpgradeGateStatus{ObservedGeneration: 1, Decision: tollgatev1alpha1.Decision{
		BlockedBy: "OperatorNotUpgradeable", PolicyRevision: "r1", EvaluatedAt: &at,
	}}
	with := func(change func(*tollgatev1alpha1.UpgradeGateStatus)) tollgatev1alpha1.UpgradeGateStatus {
		s := *held.DeepCopy()
		change(&s)
		return s
	}
	assert.False(t, urgent(held, with(func(s *tollgatev1alpha1.UpgradeGateStatus) { s.Decision.BlockedBy = "OperatorConditionStale" }), ""),
		"held by another code: may wait")
	assert.False(t, urgent(held, with(func(s *tollgatev1alpha1.UpgradeGateStatus) { s.State = "UpgradePending" }), ""))
	for name, change := range map[string]func(*tollgatev1alpha1.UpgradeGateStatus){
		"allowed":         func(s *tollgatev1alpha1.UpgradeGateStatus) { s.Decision.Allowed = true },
		"policy revision": func(s *tollgatev1alpha1.UpgradeGateStatus) { s.Decision.PolicyRevision = "r2" },
		"approval record": func(s *tollgatev1alpha1.UpgradeGateStatus) { s.Decision.LastApprovedInstallPlan = "install-1" },
		"gate spec":       func(s *tollgatev1alpha1.UpgradeGateStatus) { s.ObservedGeneration = 2 },
		"no decision yet": func(s *tollgatev1alpha1.UpgradeGateStatus) {},
	} {
		old := held
		if name == "no decision yet" {
			old = tollgatev1alpha1.UpgradeGateStatus{}
		}
		assert.True(t, urgent(old, with(change), ""), name)
	}
	assert.True(t, urgent(held, held, "install-1"), "an approval")
}
