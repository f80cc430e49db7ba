package gatestatus

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// AutomaticApproval is the condition that says whether Tollgate can hold sub's InstallPlans:
// OLM approves an Automatic Subscription's plans itself. takenOver says Tollgate has just
// switched it to Manual (--take-over-approval).
func AutomaticApproval(sub *v1alpha1.Subscription, approval v1alpha1.Approval, takenOver bool) metav1.Condition {
	c := metav1.Condition{Type: tollgatev1alpha1.ConditionAutomaticApproval, Status: metav1.ConditionFalse}
	switch {
	case takenOver:
		c.Reason, c.Message = "ApprovalTakenOver", "Tollgate switched installPlanApproval to Manual and approves InstallPlans when policy allows."
	case approval == v1alpha1.ApprovalManual:
		c.Reason, c.Message = "ManualApproval", "InstallPlans wait for approval, so Tollgate can hold them."
	default:
		c.Status, c.Reason = metav1.ConditionTrue, "AutomaticApproval"
		c.Message = fmt.Sprintf("installPlanApproval is Automatic, so OLM approves this operator's InstallPlans itself and Tollgate cannot hold them; "+
			"decisions are reported only. To let Tollgate gate upgrades: %s (or run the manager with --take-over-approval).",
			text.Command("kubectl", "patch", "subscription", "-n", sub.Namespace, sub.Name, "--type", "merge", "-p", `{"spec":{"installPlanApproval":"Manual"}}`))
	}
	return c
}
