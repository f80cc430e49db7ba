package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
)

// captureExtensions reads what OLM v1's decisions rest on beyond the kinds listed: the content
// of every ClusterCatalog catalogd serves (CatalogContent), and the operands of each
// ClusterExtension, gathered as the manager gathers them.
func captureExtensions(ctx context.Context, c client.Reader, scope Scope, progress io.Writer) ([]map[string]any, error) {
	var exts olmv1.ClusterExtensionList
	if err := c.List(ctx, &exts); err != nil || len(exts.Items) == 0 {
		if err != nil && !meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("list ClusterExtensions: %w", err)
		}
		return nil, nil
	}
	out, content, err := captureContent(ctx, c, scope.Catalogs, progress)
	if err != nil {
		return nil, err
	}
	g := pin.Gatherer{Reader: c, Operands: c, Content: content, Now: time.Now()}
	operands := 0
	for i := range exts.Items {
		facts, err := g.Gather(ctx, nil, &exts.Items[i])
		if err != nil {
			fmt.Fprintf(progress, "  operands of ClusterExtension %s skipped: %v\n", exts.Items[i].Name, shortErr(err))
			continue
		}
		for _, o := range facts.Operands {
			out = append(out, o.(map[string]any))
			operands++
		}
	}
	fmt.Fprintf(progress, "  %-24s %d\n", "extension operands", operands)
	return out, nil
}

// captureContent reads every served ClusterCatalog's content, as CatalogContent objects and as
// what the gathering reads.
func captureContent(ctx context.Context, c client.Reader, raw RawCatalogs, progress io.Writer) ([]map[string]any, contentByName, error) {
	var catalogs olmv1.ClusterCatalogList
	if err := c.List(ctx, &catalogs); err != nil {
		return nil, nil, fmt.Errorf("list ClusterCatalogs: %w", err)
	}
	content := contentByName{}
	var out []map[string]any
	for i := range catalogs.Items {
		src, ok := pin.Served(&catalogs.Items[i])
		if !ok {
			continue
		}
		if raw == nil {
			fmt.Fprintf(progress, "  content of ClusterCatalog %s skipped: no way to reach catalogd\n", src.Catalog)
			continue
		}
		data, err := raw.Raw(ctx, src)
		if err != nil {
			fmt.Fprintf(progress, "  content of ClusterCatalog %s skipped: %v\n", src.Catalog, err)
			continue
		}
		if cat, err := fbc.Read(bytes.NewReader(data), fbc.DefaultLimits); err == nil {
			content[src.Catalog] = cat
		}
		out = append(out, NewCatalogContent(src.Catalog, src.Ref, string(data)).Object)
	}
	fmt.Fprintf(progress, "  %-24s %d\n", "CatalogContents", len(out))
	return out, content, nil
}

// contentByName serves the content captured (pin.Content).
type contentByName map[string]*fbc.Catalog

func (m contentByName) Catalog(_ context.Context, src catalogd.Source) (*fbc.Catalog, error) {
	if cat, ok := m[src.Catalog]; ok {
		return cat, nil
	}
	return nil, fmt.Errorf("the content of ClusterCatalog %s was not read", src.Catalog)
}

var _ pin.Content = contentByName{}
