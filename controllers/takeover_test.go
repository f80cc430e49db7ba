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
	"github.com/tollgate-dev/tollgate/test/controlplane"
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
