package rbac

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// peopleRoles are the ClusterRoles of config/rbac for people, not for the manager.
func peopleRoles(t *testing.T) map[string]rbacv1.ClusterRole {
	t.Helper()
	objs, err := kustomize("config/rbac")
	require.NoError(t, err)
	out := map[string]rbacv1.ClusterRole{}
	for _, obj := range objs {
		if obj.GetKind() != "ClusterRole" || (obj.GetName() != "tollgate-upgradegate-viewer" && obj.GetName() != "tollgate-upgradegate-editor") {
			continue
		}
		var role rbacv1.ClusterRole
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role))
		out[role.Name] = role
	}
	return out
}

// The viewer and editor roles carry the labels the built-in view, edit and admin ClusterRoles
// aggregate, and their rules never reach the status, which only the manager writes. This is
// the part that holds on any cluster; the aggregation itself is kube-controller-manager's,
// which the test control plane does not run (the next test plays it).
func TestTheUpgradeGateRolesAggregateIntoViewEditAndAdmin(t *testing.T) {
	roles := peopleRoles(t)
	tests := []struct {
		role   string
		labels []string
		verbs  []string
	}{
		{"tollgate-upgradegate-viewer", []string{"view", "edit", "admin"}, []string{"get", "list", "watch"}},
		{"tollgate-upgradegate-editor", []string{"edit", "admin"}, []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			role, ok := roles[tt.role]
			require.True(t, ok, "config/rbac has %s", tt.role)
			want := map[string]string{}
			for _, l := range tt.labels {
				want["rbac.authorization.k8s.io/aggregate-to-"+l] = "true"
			}
			assert.Equal(t, want, role.Labels)
			assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{"tollgate.dev"}, Resources: []string{"upgradegates"}, Verbs: tt.verbs}}, role.Rules,
				"UpgradeGates only; upgradegates/status stays the manager's")
		})
	}
}

// A namespace's admin, editor and viewer (the built-in roles bound in that namespace) see its
// UpgradeGates; the admin and the editor may change their spec, and nobody but the manager
// their status. The test plays kube-controller-manager's aggregation of the built-in roles.
func TestANamespaceAdminSeesItsUpgradeGates(t *testing.T) {
	k := newCluster(t)
	other := newCluster(t)
	for _, builtin := range []string{"admin", "edit", "view"} {
		k.aggregate(builtin)
		k.Create(&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: k.NS, Name: "namespace-" + builtin},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: builtin},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "namespace-" + builtin}},
		})
	}
	gate := func(verb, sub, ns string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Group: "tollgate.dev", Resource: "upgradegates", Subresource: sub, Namespace: ns}
	}
	tests := []struct {
		scenario string
		user     string
		attrs    authorizationv1.ResourceAttributes
		allowed  bool
	}{
		{"the admin lists the namespace's gates", "namespace-admin", gate("list", "", k.NS), true},
		{"the admin overrides a denial", "namespace-admin", gate("patch", "", k.NS), true},
		{"the admin may not write a gate's status", "namespace-admin", gate("update", "status", k.NS), false},
		{"the admin sees no other namespace's gates", "namespace-admin", gate("list", "", other.NS), false},
		{"the editor watches the namespace's gates", "namespace-edit", gate("watch", "", k.NS), true},
		{"the editor changes a gate's mode", "namespace-edit", gate("update", "", k.NS), true},
		{"the editor may not write a gate's status", "namespace-edit", gate("patch", "status", k.NS), false},
		{"the viewer gets a gate", "namespace-view", gate("get", "", k.NS), true},
		{"the viewer may not change a gate", "namespace-view", gate("patch", "", k.NS), false},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: tt.user, Groups: []string{"system:authenticated"}, ResourceAttributes: &tt.attrs}}
			require.NoError(t, env.Client.Create(context.Background(), review))
			assert.Equal(t, tt.allowed, review.Status.Allowed, review.Status.Reason)
		})
	}
}
