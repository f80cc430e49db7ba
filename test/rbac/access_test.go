package rbac

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// access is one request Tollgate's ServiceAccount may or may not make.
type access struct {
	verb, group, resource, namespace string
}

// allowed asks the API server whether Tollgate's ServiceAccount may make request a.
func allowed(t *testing.T, a access) bool {
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   manager,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + policyNS, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: a.verb, Group: a.group, Resource: a.resource, Namespace: a.namespace},
	}}
	require.NoError(t, env.Client.Create(context.Background(), review))
	return review.Status.Allowed
}

func TestTheManagerMayDoOnlyWhatItNeeds(t *testing.T) {
	k := newCluster(t)
	tests := []struct {
		scenario string
		access
		allowed bool
	}{
		{"it may not read a Secret in its own namespace", access{"get", "", "secrets", policyNS}, false},
		{"it may not list Secrets anywhere", access{"list", "", "secrets", ""}, false},
		{"it may not watch Secrets anywhere", access{"watch", "", "secrets", ""}, false},
		{"it may not create InstallPlans", access{"create", "operators.coreos.com", "installplans", k.NS}, false},
		{"it may not delete InstallPlans", access{"delete", "operators.coreos.com", "installplans", k.NS}, false},
		{"it may not update InstallPlans, only patch them", access{"update", "operators.coreos.com", "installplans", k.NS}, false},
		{"it may approve an InstallPlan", access{"patch", "operators.coreos.com", "installplans", k.NS}, true},
		{"it may not patch a ConfigMap outside its namespace", access{"patch", "", "configmaps", k.NS}, false},
		{"it may not update a ConfigMap outside its namespace", access{"update", "", "configmaps", k.NS}, false},
		{"it may not read ConfigMaps outside its namespace", access{"list", "", "configmaps", ""}, false},
		{"it may annotate its policy ConfigMaps", access{"patch", "", "configmaps", policyNS}, true},
		{"it may patch a Subscription, to switch a dependency's to Manual", access{"patch", "operators.coreos.com", "subscriptions", k.NS}, true},
		{"it may not update Subscriptions", access{"update", "operators.coreos.com", "subscriptions", k.NS}, false},
		{"it may not delete Subscriptions", access{"delete", "operators.coreos.com", "subscriptions", k.NS}, false},
		{"it may not create Subscriptions", access{"create", "operators.coreos.com", "subscriptions", k.NS}, false},
		{"it may read Subscriptions", access{"watch", "operators.coreos.com", "subscriptions", ""}, true},
		{"it may not read Deployments (no wildcard)", access{"list", "apps", "deployments", ""}, false},
		{"it may get a CRD by name", access{"get", "apiextensions.k8s.io", "customresourcedefinitions", ""}, true},
		{"it may not list every CRD", access{"list", "apiextensions.k8s.io", "customresourcedefinitions", ""}, false},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			assert.Equal(t, tt.allowed, allowed(t, tt.access))
		})
	}
}

// The same, asked by acting as the ServiceAccount: the API server refuses.
func TestTheManagerIsRefused(t *testing.T) {
	k := newCluster(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: k.NS, Name: "someone-elses"}}
	k.Create(cm)
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: k.NS, Name: "install-x"},
		Spec: v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{"x.v1"}, Approval: v1alpha1.ApprovalManual}}
	k.Create(plan)
	ctx := context.Background()
	for scenario, err := range map[string]error{
		"list Secrets":      asManager.List(ctx, &corev1.SecretList{}),
		"get a Secret":      asManager.Get(ctx, types.NamespacedName{Namespace: policyNS, Name: "any"}, &corev1.Secret{}),
		"create a plan":     asManager.Create(ctx, &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: k.NS, Name: "forged"}, Spec: plan.Spec}),
		"delete a plan":     asManager.Delete(ctx, plan.DeepCopy()),
		"patch a ConfigMap": asManager.Patch(ctx, cm.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`))),
	} {
		assert.True(t, apierrors.IsForbidden(err), "%s: want Forbidden, got %v", scenario, err)
	}
}
