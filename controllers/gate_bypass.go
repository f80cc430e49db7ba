package controllers

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
)

// bypassesOf are the plans dec shows approved behind gate that its status does not record yet
// (bypass.InstallPlans), as the status records them; gatestatus adds the gate's decision then.
// A gate in Audit mode approves nothing, so every approval of its plans is someone else's by
// design: it reports none. Who approved a plan is read from the plan as the API server has it
// (the cache leaves out managed fields): one read per bypass found, none otherwise.
func (r *GateReconciler) bypassesOf(ctx context.Context, gate *tollgatev1alpha1.UpgradeGate, dec *approval.Decision) []tollgatev1alpha1.Bypass {
	if gate.Spec.Mode.Or(r.Input.WithDefaults().DefaultMode) == tollgatev1alpha1.ModeAudit {
		return nil
	}
	var out []tollgatev1alpha1.Bypass
	for _, f := range bypass.InstallPlans(gate, dec.PendingInstallPlans, dec.InstallPlan) {
		by, at := setterOf(r.livePlan(ctx, f.Plan), f.Path...)
		out = append(out, tollgatev1alpha1.Bypass{
			Kind: tollgatev1alpha1.BypassKindInstallPlan, Name: f.Plan.Name, UID: f.Plan.UID,
			Field: f.Field, To: f.To, By: by, At: at,
			SeenAt: metav1.NewTime(r.now().Truncate(time.Second)),
		})
	}
	return out
}

// livePlan is plan as the API server has it now, with its managed fields; nil when it cannot
// be read, or is another plan of the same name.
func (r *GateReconciler) livePlan(ctx context.Context, plan *v1alpha1.InstallPlan) client.Object {
	if r.APIReader == nil {
		return nil
	}
	got := &v1alpha1.InstallPlan{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(plan), got); err != nil || got.UID != plan.UID {
		return nil
	}
	return got
}

// reportBypasses reports the bypasses gate's status has just recorded (reportBypass), each
// plan's Warning on the plan as dec read it. A plan several Subscriptions share is reported
// by each of their gates, on the plan too: each Warning names its gate's decision.
func (r *GateReconciler) reportBypasses(gate *tollgatev1alpha1.UpgradeGate, dec *approval.Decision, recorded []tollgatev1alpha1.Bypass) {
	for _, b := range recorded {
		reportBypass(r.Recorder, r.DecisionLog, gate, planOf(dec, b.UID), b)
	}
}

// planOf is the plan of dec whose UID is uid; nil when there is none.
func planOf(dec *approval.Decision, uid types.UID) runtime.Object {
	for i := range dec.PendingInstallPlans {
		if dec.PendingInstallPlans[i].UID == uid {
			return &dec.PendingInstallPlans[i]
		}
	}
	if dec.InstallPlan != nil && dec.InstallPlan.UID == uid {
		return dec.InstallPlan
	}
	return nil
}
