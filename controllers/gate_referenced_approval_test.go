package controllers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// A plan OLM completed before the status write that follows its approval is no longer
// pending; the Subscription still references it, and its record still names the gate.
func TestReferencedApprovalReadsACompletePlansRecord(t *testing.T) {
	assert.Empty(t, referencedApproval(nil, "beta"))

	plan := &v1alpha1.InstallPlan{}
	plan.Name = "install-2"
	plan.Spec.Approved = true
	plan.Status = &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseComplete}
	assert.Empty(t, referencedApproval(plan, "beta"), "approved, but not by this gate's record")

	rec := tollgatev1alpha1.RecordOf("beta", tollgatev1alpha1.Decision{Allowed: true, PolicyRevision: "r1"}, metav1.Now())
	plan.Annotations = map[string]string{tollgatev1alpha1.ApprovalRecordAnnotation: rec.String()}
	assert.Equal(t, "install-2", referencedApproval(plan, "beta"))
	assert.Empty(t, referencedApproval(plan, "other"), "another gate's record")
	plan.Spec.Approved = false
	assert.Empty(t, referencedApproval(plan, "beta"), "a record on a plan not approved is not read")
}
