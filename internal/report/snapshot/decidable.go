package snapshot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// LoadDecidable loads the snapshot at paths whole or not at all: a document that cannot be
// read as what it claims is an error, never skipped, since a skipped OperatorCondition would
// let an upgrade through that the cluster holds. A snapshot without a Subscription decides
// nothing: it is an error, unless it holds OLM v1 ClusterExtensions, or catalogsSuffice and it
// holds CatalogSources (to lint them).
func LoadDecidable(ctx context.Context, paths []string, catalogsSuffice bool) (*Snapshot, error) {
	snap, err := Load(paths...)
	if le := (*LoadError)(nil); errors.As(err, &le) {
		return nil, fmt.Errorf("the snapshot cannot be read whole, and Tollgate decides nothing on part of it; fix these documents:\n%w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w (check the --snapshot path)", err)
	}
	var subs v1alpha1.SubscriptionList
	if err := snap.List(ctx, &subs); err != nil {
		return nil, fmt.Errorf("list subscriptions in the snapshot: %w", err)
	}
	var exts olmv1.ClusterExtensionList
	if err := snap.List(ctx, &exts); err != nil {
		return nil, fmt.Errorf("list cluster extensions in the snapshot: %w", err)
	}
	if len(subs.Items) > 0 || len(exts.Items) > 0 {
		return snap, nil
	}
	where := strings.Join(paths, ", ")
	if !catalogsSuffice {
		return nil, fmt.Errorf("no Subscription (operators.coreos.com/v1alpha1) nor ClusterExtension (olm.operatorframework.io/v1) in %s: nothing to decide (is it the right snapshot?)", where)
	}
	var catalogs v1alpha1.CatalogSourceList
	if err := snap.List(ctx, &catalogs); err != nil {
		return nil, fmt.Errorf("list catalog sources in the snapshot: %w", err)
	}
	if len(catalogs.Items) == 0 {
		return nil, fmt.Errorf("no Subscription, CatalogSource (operators.coreos.com/v1alpha1) nor ClusterExtension (olm.operatorframework.io/v1) in %s: nothing to decide or check (is it the right snapshot?)", where)
	}
	return snap, nil
}
