package explain_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/internal/report/explain"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

func subscriptions(t *testing.T, namespaces ...string) *snapshot.Snapshot {
	t.Helper()
	var docs string
	for _, ns := range namespaces {
		docs += "---\napiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: etcd, namespace: " + ns + "}\nspec: {name: etcd, source: operatorhubio, sourceNamespace: olm}\n"
	}
	docs += "---\napiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: other, namespace: team-z}\nspec: {name: other, source: operatorhubio, sourceNamespace: olm}\n"
	path := filepath.Join(t.TempDir(), "subs.yaml")
	require.NoError(t, os.WriteFile(path, []byte(docs), 0o600))
	snap, err := snapshot.Load(path)
	require.NoError(t, err)
	return snap
}

func TestSubscriptionsNamedInEveryNamespace(t *testing.T) {
	found, err := explain.SubscriptionsNamed(context.Background(), subscriptions(t, "team-b", "team-a"), "etcd")
	require.NoError(t, err)
	assert.Equal(t, []types.NamespacedName{{Namespace: "team-a", Name: "etcd"}, {Namespace: "team-b", Name: "etcd"}}, found, "sorted by namespace")

	_, err = explain.SubscriptionsNamed(context.Background(), subscriptions(t, "team-a"), "prometheus")
	require.EqualError(t, err, "no Subscription prometheus in any namespace (list them with: kubectl get subscriptions -A)")
}

func TestElsewhereSaysWhereTheSubscriptionIs(t *testing.T) {
	notFound := errors.New("not found")
	ctx := context.Background()
	err := explain.Elsewhere(ctx, subscriptions(t, "team-a"), types.NamespacedName{Namespace: "default", Name: "etcd"}, notFound)
	require.EqualError(t, err, "no Subscription etcd in namespace default; found in namespace team-a (use -n team-a)")

	err = explain.Elsewhere(ctx, subscriptions(t, "team-a", "team-b"), types.NamespacedName{Namespace: "default", Name: "etcd"}, notFound)
	require.EqualError(t, err, "no Subscription etcd in namespace default; found in namespaces team-a, team-b (use -n with one of them, or -A to explain each)")

	err = explain.Elsewhere(ctx, subscriptions(t, "team-a"), types.NamespacedName{Namespace: "default", Name: "prometheus"}, notFound)
	require.ErrorIs(t, err, notFound, "in no namespace: the error as it was")
}
