package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/policies"
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
		"a bypass": func(s *tollgatev1alpha1.UpgradeGateStatus) {
			s.Bypasses = []tollgatev1alpha1.Bypass{{UID: "u1", Field: tollgatev1alpha1.BypassFieldApproved, To: "true"}}
		},
	} {
		old := held
		if name == "no decision yet" {
			old = tollgatev1alpha1.UpgradeGateStatus{}
		}
		assert.True(t, urgent(old, with(change), ""), name)
	}
	assert.True(t, urgent(held, held, "install-1"), "an approval")
}

func TestAnEvaluationWaitsOnlyWhenItCouldNotBeUrgent(t *testing.T) {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Options{Policies: policies.FS})
	require.NoError(t, err)
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	preparing := v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Name: "install-2"}}
	awaitingPlan := v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Name: "install-1"},
		Status: &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval}}
	approvedPlan := *awaitingPlan.DeepCopy()
	approvedPlan.Spec.Approved = true
	copyingOC := &operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	copyingOC.Spec.Conditions = []metav1.Condition{{Type: "Upgradeable", Status: "True"}}
	decided := func() *tollgatev1alpha1.UpgradeGate {
		g := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "etcd", Generation: 1}}
		g.Status.ObservedGeneration = 1
		g.Status.Decision.EvaluatedAt = &metav1.Time{Time: t0}
		g.Status.Decision.PolicyRevision = e.Revision()
		return g
	}
	tests := []struct {
		name  string
		gate  func(*tollgatev1alpha1.UpgradeGate)
		doc   input.Document
		waits bool
	}{
		{"a plan being prepared", nil, input.Document{PendingInstallPlans: []v1alpha1.InstallPlan{preparing}}, true},
		{"a plan being prepared beside an approved one", nil, input.Document{PendingInstallPlans: []v1alpha1.InstallPlan{approvedPlan, preparing}}, true},
		{"the operator's word being copied, a plan awaiting approval", nil, input.Document{PendingInstallPlans: []v1alpha1.InstallPlan{awaitingPlan}, OperatorCondition: copyingOC}, true},
		{"OLM not midway", nil, input.Document{PendingInstallPlans: []v1alpha1.InstallPlan{awaitingPlan}}, false},
		{"a plan awaiting approval beside one being prepared", nil, input.Document{PendingInstallPlans: []v1alpha1.InstallPlan{awaitingPlan, preparing}}, false},
		{"no decision yet", func(g *tollgatev1alpha1.UpgradeGate) { g.Status = tollgatev1alpha1.UpgradeGateStatus{} },
			input.Document{PendingInstallPlans: []v1alpha1.InstallPlan{preparing}}, false},
		{"decided by other policies", func(g *tollgatev1alpha1.UpgradeGate) { g.Status.Decision.PolicyRevision = "older" },
			input.Document{PendingInstallPlans: []v1alpha1.InstallPlan{preparing}}, false},
		{"the gate's spec changed", func(g *tollgatev1alpha1.UpgradeGate) { g.Generation = 2 },
			input.Document{PendingInstallPlans: []v1alpha1.InstallPlan{preparing}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := t0
			r := &GateReconciler{Policies: NewPolicies(e), Now: func() time.Time { return now }}
			gate := decided()
			if tt.gate != nil {
				tt.gate(gate)
			}
			if !tt.waits {
				assert.Zero(t, r.deferral(gate, &tt.doc))
				return
			}
			assert.Equal(t, olmStepDelay, r.deferral(gate, &tt.doc))
			now = now.Add(time.Second)
			assert.Equal(t, time.Second, r.deferral(gate, &tt.doc), "the rest of the delay")
			now = now.Add(time.Second)
			assert.Zero(t, r.deferral(gate, &tt.doc), "once the delay is over, evaluate")
			assert.Zero(t, r.planning.wait(client.ObjectKeyFromObject(gate), false, true, now),
				"and the status change that evaluation finds is written: the same clock")
		})
	}
}

func TestAnEvaluationDoesNotWaitWhileThePoliciesFail(t *testing.T) {
	e, err := engine.New(context.Background(), engine.Options{Policies: policies.FS})
	require.NoError(t, err)
	p := NewPolicies(e)
	p.serve(e, errors.New("bundle acme: not compiled"))
	r := &GateReconciler{Policies: p}
	gate := &tollgatev1alpha1.UpgradeGate{}
	gate.Status.Decision.EvaluatedAt = &metav1.Time{Time: time.Now()}
	gate.Status.Decision.PolicyRevision = e.Revision()
	doc := input.Document{PendingInstallPlans: []v1alpha1.InstallPlan{{}}}
	assert.Zero(t, r.deferral(gate, &doc))
}
