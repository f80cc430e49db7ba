package explain

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// SubscriptionsNamed finds the Subscriptions called name in every namespace.
func SubscriptionsNamed(ctx context.Context, r client.Reader, name string) ([]types.NamespacedName, error) {
	var subs v1alpha1.SubscriptionList
	if err := r.List(ctx, &subs); err != nil {
		return nil, fmt.Errorf("list subscriptions: %w", err)
	}
	var out []types.NamespacedName
	for _, s := range subs.Items {
		if s.Name == name {
			out = append(out, client.ObjectKeyFromObject(&s))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Subscription %s in any namespace (list them with: kubectl get subscriptions -A)", name)
	}
	slices.SortFunc(out, func(a, b types.NamespacedName) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}

// Elsewhere turns "not in this namespace" into where the Subscription is, when it is in
// another: the usual slip is a missing or wrong -n.
func Elsewhere(ctx context.Context, r client.Reader, key types.NamespacedName, notFound error) error {
	found, err := SubscriptionsNamed(ctx, r, key.Name)
	if err != nil {
		return notFound
	}
	namespaces := make([]string, len(found))
	for i, k := range found {
		namespaces[i] = k.Namespace
	}
	where, hint := "namespace "+namespaces[0], "use -n "+namespaces[0]
	if len(namespaces) > 1 {
		where, hint = "namespaces "+strings.Join(namespaces, ", "), "use -n with one of them, or -A to explain each"
	}
	return fmt.Errorf("no Subscription %s in namespace %s; found in %s (%s)", key.Name, key.Namespace, where, hint)
}
