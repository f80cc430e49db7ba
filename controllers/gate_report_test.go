package controllers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// TestADecisionIsReportedWhereAnUpgradeWaits: the Events a status change brings. The
// recorder is client-go's fake: it counts what would be sent.
func TestADecisionIsReportedWhereAnUpgradeWaits(t *testing.T) {
	at := metav1.Now()
	status := func(current string, allowed bool, code string) tollgatev1alpha1.UpgradeGateStatus {
		s := tollgatev1alpha1.UpgradeGateStatus{InstalledCSV: "etcd.v1", CurrentCSV: current,
			Decision: tollgatev1alpha1.Decision{Allowed: allowed, BlockedBy: code, EvaluatedAt: &at}}
		if code != "" {
			s.Decision.Denials = []tollgatev1alpha1.Denial{{Code: code, Message: "because"}}
		}
		return s
	}
	tests := []struct {
		name      string
		old, next tollgatev1alpha1.UpgradeGateStatus
		want      int
	}{
		{"held while no upgrade waits: no Event", status("etcd.v1", true, ""), status("etcd.v1", false, "CatalogSourceUnhealthy"), 0},
		{"an upgrade arrives held: one Event", status("etcd.v1", false, "OperatorNotUpgradeable"), status("etcd.v2", false, "OperatorNotUpgradeable"), 1},
		{"an upgrade arrives allowed: no Event", status("etcd.v1", true, ""), status("etcd.v2", true, ""), 0},
		{"a waiting upgrade held by another code: one Event", status("etcd.v2", false, "A"), status("etcd.v2", false, "B"), 1},
		{"a waiting upgrade released: one Event", status("etcd.v2", false, "A"), status("etcd.v2", true, ""), 1},
		{"a first decision holding nothing: no Event", tollgatev1alpha1.UpgradeGateStatus{}, status("etcd.v2", true, ""), 0},
		{"a first decision holding an upgrade", tollgatev1alpha1.UpgradeGateStatus{}, status("etcd.v2", false, "A"), 1},
		{"the same outcome: no Event", status("etcd.v2", false, "A"), status("etcd.v2", false, "A"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := record.NewFakeRecorder(10)
			r := &GateReconciler{Recorder: rec}
			sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "etcd"}}
			r.reportDecision(tt.old, tt.next, sub)
			assert.Len(t, rec.Events, tt.want)
			if tt.next.Decision.Allowed && tt.want > 0 {
				assert.Contains(t, <-rec.Events, "Normal UpgradeAllowed Upgrade allowed by policy")
			}
		})
	}
}
