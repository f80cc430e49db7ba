package controllers

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
)

// The switch from Automatic to Manual is a real patch with a resourceVersion precondition,
// so it runs against a real API server.
func TestHoldAutomatic(t *testing.T) {
	env, err := controlplane.Start(controlplane.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "takeover-"}}
	require.NoError(t, env.Client.Create(ctx, ns))
	newSub := func(name string, approval v1alpha1.Approval) *v1alpha1.Subscription {
		sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name},
			Spec: &v1alpha1.SubscriptionSpec{CatalogSource: "c", CatalogSourceNamespace: ns.Name, Package: name, InstallPlanApproval: approval}}
		require.NoError(t, env.Client.Create(ctx, sub))
		return sub
	}

	for i, tc := range []struct {
		name      string
		approval  v1alpha1.Approval
		takeOver  bool
		status    metav1.ConditionStatus
		reason    string
		wantSpec  v1alpha1.Approval
		wantEvent string
	}{
		{"a Manual Subscription is left alone", v1alpha1.ApprovalManual, true, metav1.ConditionFalse, "ManualApproval", v1alpha1.ApprovalManual, ""},
		{"an Automatic Subscription is reported with the fix", v1alpha1.ApprovalAutomatic, false, metav1.ConditionTrue, "AutomaticApproval", v1alpha1.ApprovalAutomatic, ""},
		{"an empty approval is OLM's Automatic default", "", false, metav1.ConditionTrue, "AutomaticApproval", "", ""},
		{"--take-over-approval switches an Automatic Subscription to Manual", v1alpha1.ApprovalAutomatic, true, metav1.ConditionFalse, "ApprovalTakenOver", v1alpha1.ApprovalManual, EventApprovalTakenOver},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := newSub(fmt.Sprintf("operator-%d", i), tc.approval)
			recorder := record.NewFakeRecorder(4)
			r := &GateReconciler{Client: env.Client, Recorder: recorder, TakeOverApproval: tc.takeOver}
			conds, err := r.holdAutomatic(ctx, sub)
			require.NoError(t, err)
			require.Len(t, conds, 1)
			assert.Equal(t, tollgatev1alpha1.ConditionAutomaticApproval, conds[0].Type)
			assert.Equal(t, tc.status, conds[0].Status)
			assert.Equal(t, tc.reason, conds[0].Reason)
			if tc.reason == "AutomaticApproval" {
				assert.Contains(t, conds[0].Message, "kubectl patch subscription -n "+ns.Name+" "+sub.Name+` --type merge -p '{"spec":{"installPlanApproval":"Manual"}}'`)
			}
			got := &v1alpha1.Subscription{}
			require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(sub), got))
			assert.Equal(t, tc.wantSpec, got.Spec.InstallPlanApproval)
			if tc.wantEvent != "" {
				assert.Contains(t, <-recorder.Events, tc.wantEvent)
			}
		})
	}
}

// A Subscription OLM created for a dependency of a plan Tollgate approved is switched to
// Manual without --take-over-approval (OLM creates it Automatic, and its upgrades would
// bypass the gate), unless --leave-dependencies-automatic; one of a plan approved by someone
// else is left alone.
func TestDependencySubscriptionsAreGated(t *testing.T) {
	env, err := controlplane.Start(controlplane.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "deps-"}}
	require.NoError(t, env.Client.Create(ctx, ns))
	plan := func(name string, byTollgate bool) {
		p := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name},
			Spec: v1alpha1.InstallPlanSpec{Approval: v1alpha1.ApprovalManual, Approved: true, ClusterServiceVersionNames: []string{"gamma.v1", "delta.v1"}}}
		if byTollgate {
			p.Annotations = map[string]string{tollgatev1alpha1.ApprovalRecordAnnotation: tollgatev1alpha1.RecordOf("gamma", tollgatev1alpha1.Decision{Allowed: true}, metav1.Now()).String()}
		}
		require.NoError(t, env.Client.Create(ctx, p))
		p.Status = &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseComplete, CatalogSources: []string{"c"}, Plan: []*v1alpha1.Step{{Resolving: "delta.v1", Status: "Created",
			Resource: v1alpha1.StepResource{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "Subscription", Name: "delta-" + name}}}}
		require.NoError(t, env.Client.Status().Update(ctx, p))
	}
	for _, tc := range []struct {
		name, plan string
		byTollgate bool
		leave      bool
		want       v1alpha1.Approval
	}{
		{"a dependency of a plan Tollgate approved is switched to Manual", "approved-by-tollgate", true, false, v1alpha1.ApprovalManual},
		{"--leave-dependencies-automatic leaves it", "approved-by-tollgate-left", true, true, v1alpha1.ApprovalAutomatic},
		{"a dependency of a plan approved by hand is left", "approved-by-hand", false, false, v1alpha1.ApprovalAutomatic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan(tc.plan, tc.byTollgate)
			sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "delta-" + tc.plan,
				Annotations: map[string]string{GeneratedByAnnotation: tc.plan}},
				Spec: &v1alpha1.SubscriptionSpec{CatalogSource: "c", CatalogSourceNamespace: ns.Name, Package: "delta", InstallPlanApproval: v1alpha1.ApprovalAutomatic}}
			require.NoError(t, env.Client.Create(ctx, sub))
			r := &GateReconciler{Client: env.Client, Recorder: record.NewFakeRecorder(4), LeaveDependenciesAutomatic: tc.leave}
			conds, err := r.holdAutomatic(ctx, sub)
			require.NoError(t, err)
			require.Len(t, conds, 1)
			got := &v1alpha1.Subscription{}
			require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(sub), got))
			assert.Equal(t, tc.want, got.Spec.InstallPlanApproval)
		})
	}
}
