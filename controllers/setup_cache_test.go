package controllers_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
)

// TestTheCacheLeavesOutCopiedCSVs: the manager's cache, on a real API server, holds a
// namespace's own CSVs and not the copies OLM writes there for an operator of another
// namespace.
func TestTheCacheLeavesOutCopiedCSVs(t *testing.T) {
	env, ctx := apiServer(t)

	opts := controllers.CacheOptions("tollgate-system")
	opts.Scheme = apis.NewScheme()
	c, err := cache.New(env.Config, opts)
	require.NoError(t, err)
	go func() { _ = c.Start(ctx) }()

	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}))
	csv := func(name string, labels map[string]string) *v1alpha1.ClusterServiceVersion {
		return &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Labels: labels},
			Spec: v1alpha1.ClusterServiceVersionSpec{DisplayName: name, InstallStrategy: v1alpha1.NamedInstallStrategy{StrategyName: "deployment"}}}
	}
	// The copy first: once the cache shows the original, it would show the copy too.
	require.NoError(t, env.Client.Create(ctx, csv("global-operator.v2", map[string]string{v1alpha1.CopiedFromLabel: "operators"})))
	require.NoError(t, env.Client.Create(ctx, csv("etcd.v1", nil)))

	var names []string
	require.Eventually(t, func() bool {
		list := &v1alpha1.ClusterServiceVersionList{}
		if c.List(ctx, list, client.InNamespace("team-a")) != nil || len(list.Items) == 0 {
			return false
		}
		names = nil
		for _, item := range list.Items {
			names = append(names, item.Name)
		}
		return true
	}, 30*time.Second, 50*time.Millisecond)
	assert.Equal(t, []string{"etcd.v1"}, names)
}
