package olm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/test/framework/gatelock"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// loadPack puts the pack bundles/packs/<name> in service as an admin does: its Rego in a
// policy ConfigMap of Tollgate's namespace, at its defaults. It waits until Tollgate says the
// ConfigMap is in service.
func (w *world) loadPack(name string) {
	w.t.Helper()
	rego, err := os.ReadFile(repo.Path("bundles", "packs", name, name+".rego"))
	require.NoError(w.t, err)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: "pack-" + name, Labels: map[string]string{policysource.Label: policysource.KindRego}},
		Data:       map[string]string{"packs." + name + ".rego": string(rego)},
	}
	w.create(cm)
	w.eventually("pack "+name+" in service", func() bool {
		var st policysource.Status
		return w.get(policyNS, cm.Name, cm) && json.Unmarshal([]byte(cm.Annotations[policysource.StatusAnnotation]), &st) == nil &&
			st.Status == "ok" && st.Serving == policysource.ServingCurrent
	}, func() string { return "status annotation " + cm.Annotations[policysource.StatusAnnotation] })
}

// approveByHand sets spec.approved on the plan ns/name, as a person does: the gate lock
// refuses a cluster admin, and a member of its break-glass group approves.
func (w *world) approveByHand(ns, name string) {
	w.t.Helper()
	approve := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"approved":true}}`))
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	err := w.c.Patch(w.ctx, plan, approve)
	require.True(w.t, gatelock.Refused(err), "the gate lock refuses a cluster admin's approval: %v", err)
	w.t.Logf("refused: %v", err)
	breakGlass, err := gatelock.BreakGlass(w.env.Config)
	require.NoError(w.t, err)
	require.NoError(w.t, breakGlass.Patch(w.ctx, plan, approve, client.FieldOwner("kubectl-patch")))
	if w.byHand == nil {
		w.byHand = map[string]bool{}
	}
	w.byHand[name] = true
}

// noBypassButByHand fails the test when a gate recorded a bypass of a plan the test did not
// approve by hand: whatever real OLM does, approving, moving and completing the plans Tollgate
// approved, is never taken for someone going around a gate.
func (w *world) noBypassButByHand() {
	gates := &tollgatev1alpha1.UpgradeGateList{}
	if err := w.c.List(context.WithoutCancel(w.ctx), gates); err != nil {
		if !apimeta.IsNoMatchError(err) { // no gates where OLM was to install Tollgate's CRDs
			w.t.Errorf("list the gates for their bypasses: %v", err)
		}
		return
	}
	for _, g := range gates.Items {
		for _, b := range g.Status.Bypasses {
			if !w.byHand[b.Name] {
				w.t.Errorf("gate %s/%s recorded a bypass no one made: %+v", g.Namespace, g.Name, b)
			}
		}
	}
}

// bypassReported waits until the gate ns/gate records the hand approval of plan, once, naming
// the client that made it, and a Bypassed Warning is on the plan and on the gate.
func (w *world) bypassReported(ns, gate, plan string) {
	w.t.Helper()
	g := w.gate(ns, gate, "the bypass of "+plan+" recorded", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return len(g.Status.Bypasses) > 0
	})
	require.Len(w.t, g.Status.Bypasses, 1, "recorded once")
	b := g.Status.Bypasses[0]
	require.Equal(w.t, []string{tollgatev1alpha1.BypassKindInstallPlan, plan, "kubectl-patch"}, []string{b.Kind, b.Name, b.By})
	var seen []string
	w.eventually("Bypassed on the plan and the gate", func() bool {
		events := &corev1.EventList{}
		if err := w.c.List(w.ctx, events, client.InNamespace(ns)); err != nil {
			return false
		}
		seen = seen[:0]
		kinds := map[string]bool{}
		for _, e := range events.Items {
			seen = append(seen, e.InvolvedObject.Kind+" "+e.InvolvedObject.Name+": "+e.Reason)
			if e.Reason == "Bypassed" && e.Type == corev1.EventTypeWarning {
				kinds[e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name] = true
				w.t.Logf("%s %s: %s", e.InvolvedObject.Kind, e.Reason, e.Message)
			}
		}
		return kinds["InstallPlan/"+plan] && kinds["UpgradeGate/"+gate]
	}, func() string { return strings.Join(seen, "\n") })
}

// overrideOnGate adds an override of code to the UpgradeGate ns/name, as an admin does.
func (w *world) overrideOnGate(ns, name, code, reason string) {
	w.t.Helper()
	gate := &tollgatev1alpha1.UpgradeGate{}
	require.True(w.t, w.get(ns, name, gate), "UpgradeGate %s/%s", ns, name)
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"overrides": []tollgatev1alpha1.Override{{Code: code, Reason: reason}}}})
	require.NoError(w.t, err)
	require.NoError(w.t, w.c.Patch(w.ctx, gate, client.RawPatch(types.MergePatchType, patch)))
}

// plansOf are the InstallPlans of ns that list csv, by name.
func (w *world) plansOf(ns, csv string) []v1alpha1.InstallPlan {
	w.t.Helper()
	var plans v1alpha1.InstallPlanList
	require.NoError(w.t, w.c.List(w.ctx, &plans, client.InNamespace(ns)))
	var out []v1alpha1.InstallPlan
	for _, p := range plans.Items {
		if slices.Contains(p.Spec.ClusterServiceVersionNames, csv) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b v1alpha1.InstallPlan) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// resolutionFailed is the message of sub's ResolutionFailed=True condition; "" when it has
// none.
func resolutionFailed(sub *v1alpha1.Subscription) string {
	for _, c := range sub.Status.Conditions {
		if c.Type == "ResolutionFailed" && c.Status == corev1.ConditionTrue {
			return c.Message
		}
	}
	return ""
}

// describePlans is every InstallPlan of ns in a line each: name, CSVs, phase, approved and
// Tollgate's approval record, for a test's log.
func (w *world) describePlans(ns string) string {
	w.t.Helper()
	var plans v1alpha1.InstallPlanList
	require.NoError(w.t, w.c.List(w.ctx, &plans, client.InNamespace(ns)))
	var b strings.Builder
	for _, p := range plans.Items {
		phase := v1alpha1.InstallPlanPhase("")
		if p.Status != nil {
			phase = p.Status.Phase
		}
		fmt.Fprintf(&b, "\n  plan %s: CSVs %v, phase %s, approved %v, approval record %q", p.Name, p.Spec.ClusterServiceVersionNames,
			phase, p.Spec.Approved, p.Annotations[tollgatev1alpha1.ApprovalRecordAnnotation])
	}
	return b.String()
}

// describeCSVs is every ClusterServiceVersion of ns in a line each: name, replaces, phase
// and reason, for a test's log.
func (w *world) describeCSVs(ns string) string {
	w.t.Helper()
	var csvs v1alpha1.ClusterServiceVersionList
	require.NoError(w.t, w.c.List(w.ctx, &csvs, client.InNamespace(ns)))
	var b strings.Builder
	for _, c := range csvs.Items {
		fmt.Fprintf(&b, "\n  CSV %s (replaces %q): phase %s, reason %s", c.Name, c.Spec.Replaces, c.Status.Phase, c.Status.Reason)
	}
	return b.String()
}

// describeSubscription is sub's status in a line, for a test's log.
func describeSubscription(sub *v1alpha1.Subscription) string {
	plan := ""
	if sub.Status.InstallPlanRef != nil {
		plan = sub.Status.InstallPlanRef.Name
	}
	return fmt.Sprintf("Subscription %s: installedCSV %q, currentCSV %q, state %q, installPlanRef %q, ResolutionFailed %q",
		sub.Name, sub.Status.InstalledCSV, sub.Status.CurrentCSV, sub.Status.State, plan, resolutionFailed(sub))
}

// csvStepReplaces is the spec.replaces of the CSV that the plan ns/name's step for csv
// creates, as the step's manifest says.
func (w *world) csvStepReplaces(ns, name, csv string) string {
	w.t.Helper()
	plan := &v1alpha1.InstallPlan{}
	require.True(w.t, w.get(ns, name, plan), "plan %s/%s", ns, name)
	require.NotNil(w.t, plan.Status, "plan %s/%s has no status", ns, name)
	for _, s := range plan.Status.Plan {
		if s.Resolving != csv || s.Resource.Kind != "ClusterServiceVersion" {
			continue
		}
		var manifest struct {
			Spec struct {
				Replaces string `json:"replaces"`
			} `json:"spec"`
		}
		require.NoError(w.t, json.Unmarshal([]byte(s.Resource.Manifest), &manifest), "plan %s/%s's step for %s", ns, name, csv)
		return manifest.Spec.Replaces
	}
	w.t.Fatalf("plan %s/%s has no CSV step for %s", ns, name, csv)
	return ""
}

// csvReason waits until the CSV ns/name is in phase for reason.
func (w *world) csvReason(ns, name string, phase v1alpha1.ClusterServiceVersionPhase, reason string) *v1alpha1.ClusterServiceVersion {
	w.t.Helper()
	csv := &v1alpha1.ClusterServiceVersion{}
	w.eventually(fmt.Sprintf("CSV %s/%s %s (%s)", ns, name, phase, reason), func() bool {
		return w.get(ns, name, csv) && csv.Status.Phase == phase && string(csv.Status.Reason) == reason
	}, func() string {
		return fmt.Sprintf("phase %q, reason %q, message %q", csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
	})
	return csv
}
