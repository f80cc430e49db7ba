package controllers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

func TestAStatusChangeWaitsOnlyWhileOLMPreparesAPlan(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "etcd"}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	planned := []v1alpha1.InstallPlan{{}} // no phase yet
	ready := []v1alpha1.InstallPlan{{Status: &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval}}}
	tests := []struct {
		name    string
		urgent  bool
		pending []v1alpha1.InstallPlan
		at      time.Duration // after the first wait
		want    time.Duration
	}{
		{"a plan being prepared: wait", false, planned, 0, planningDelay},
		{"still being prepared a second later: wait the rest", false, planned, time.Second, time.Second},
		{"still being prepared after the delay: write", false, planned, planningDelay, 0},
		{"a new decision or an approval: write", true, planned, 0, 0},
		{"the plan awaits approval: write", false, ready, 0, 0},
		{"no plan: write", false, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p planning
			if tt.at > 0 {
				p.wait(key, false, planned, t0)
			}
			assert.Equal(t, tt.want, p.wait(key, tt.urgent, tt.pending, t0.Add(tt.at)))
		})
	}
}
