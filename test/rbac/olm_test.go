package rbac

import (
	"testing"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
)

// cluster is one test's namespace, where the test plays OLM's part (and the cluster admin's).
type cluster struct{ *olmplay.Cluster }

func newCluster(t *testing.T) *cluster {
	t.Helper()
	return &cluster{olmplay.NewCluster(t, env.Client, "rbac-")}
}

// grantOperandRead plays the admin (or the operator's bundle) extending Tollgate's operand
// reader with pkg's operand kind, and kube-controller-manager aggregating it.
func (k *cluster) grantOperandRead(pkg string) {
	k.T.Helper()
	k.Create(&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tollgate-read-" + olmplay.OperandPlural(pkg), Labels: map[string]string{controllers.OperandReaderLabel: "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{olmplay.OperandGroup(pkg)}, Resources: []string{olmplay.OperandPlural(pkg)}, Verbs: []string{"get", "list", "watch"}}},
	})
	k.aggregate("tollgate-operand-reader")
}

// aggregate plays kube-controller-manager's ClusterRole aggregation for the role name: its
// rules become those of every ClusterRole its selectors match.
func (k *cluster) aggregate(name string) {
	k.T.Helper()
	agg := &rbacv1.ClusterRole{}
	require.NoError(k.T, k.Client.Get(k.Ctx, client.ObjectKey{Name: name}, agg))
	require.NotNil(k.T, agg.AggregationRule, "%s is an aggregated ClusterRole", name)
	var roles rbacv1.ClusterRoleList
	require.NoError(k.T, k.Client.List(k.Ctx, &roles))
	agg.Rules = nil
	for _, s := range agg.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&s)
		require.NoError(k.T, err)
		for _, r := range roles.Items {
			if r.Name != name && selector.Matches(labels.Set(r.Labels)) {
				agg.Rules = append(agg.Rules, r.Rules...)
			}
		}
	}
	require.NoError(k.T, k.Client.Update(k.Ctx, agg))
}
