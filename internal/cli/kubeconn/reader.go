package kubeconn

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

// Reader is the snapshot at paths, completed by prepare when set, or else the live cluster;
// and a phrase naming what it covers: -n's namespace, else all namespaces, of the snapshot or
// of the API server. -n with -A is refused.
func (f *Flags) Reader(ctx context.Context, paths []string, prepare func(context.Context, *snapshot.Snapshot) error) (client.Reader, string, error) {
	if err := f.CheckScope(); err != nil {
		return nil, "", err
	}
	scope := "all namespaces"
	if ns := f.Namespace(); ns != "" {
		scope = "namespace " + ns
	}
	if len(paths) > 0 {
		snap, err := snapshot.LoadDecidable(ctx, paths, false)
		if err != nil {
			return nil, "", err
		}
		if prepare != nil {
			if err := prepare(ctx, snap); err != nil {
				return nil, "", err
			}
		}
		return snap, scope + " of the snapshot", nil
	}
	c, _, cfg, err := f.Connect()
	if err != nil {
		return nil, "", err
	}
	return c, scope + " of " + cfg.Host, nil
}
