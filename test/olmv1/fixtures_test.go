package olmv1

import (
	"cmp"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	"github.com/tollgate-dev/tollgate/internal/report/evaluation"
	"github.com/tollgate-dev/tollgate/internal/report/policyset"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

// fixtureKinds are what a snapshot of an OLM v1 cluster holds for Tollgate: the kinds it reads,
// the policy ConfigMaps, and the sample's operands.
var fixtureKinds = []schema.GroupVersionKind{
	clusterCatalogKind, clusterExtensionKind,
	{Group: "tollgate.dev", Version: "v1alpha1", Kind: "ExtensionGate"},
	{Version: "v1", Kind: "ConfigMap"},
	{Group: widgetGroup, Version: "v1", Kind: "Widget"},
}

// fixture writes the world's state, with the content catalogd serves for each ClusterCatalog
// it serves,
// into $TOLLGATE_OLMV1_FIXTURES/<name>.yaml when that variable is set (make olmv1-fixtures): a
// snapshot `tollgate eval` decides as the manager did.
func (w *world) fixture(name, about string) {
	w.t.Helper()
	dir := os.Getenv("TOLLGATE_OLMV1_FIXTURES")
	if dir == "" {
		return
	}
	var b strings.Builder
	b.WriteString("# Written by real OLM v1 (make olmv1-fixtures, " + w.t.Name() + "): " + about + "\n")
	for _, gvk := range fixtureKinds {
		for _, item := range w.list(gvk) {
			w.writeObject(&b, item.Object)
			if gvk == clusterCatalogKind && nestedString(&item, "status", "urls", "base") != "" {
				w.writeObject(&b, w.contentOf(&item).Object)
			}
		}
	}
	text := strings.ReplaceAll(b.String(), w.registry.host, fixtureRegistry)
	require.NoError(w.t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(text), 0o644))
}

// list is every object of gvk but the ConfigMaps outside Tollgate's namespace, sorted by
// namespace and name, without managed fields.
func (w *world) list(gvk schema.GroupVersionKind) []unstructured.Unstructured {
	w.t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk)
	if err := w.c.List(w.ctx, list); err != nil {
		return nil // a kind not served (no Widget CRD yet)
	}
	items := slices.DeleteFunc(list.Items, func(u unstructured.Unstructured) bool {
		return gvk.Kind == "ConfigMap" && u.GetNamespace() != policyNS
	})
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	for i := range items {
		items[i].SetManagedFields(nil)
	}
	return items
}

// contentOf is the CatalogContent of the ClusterCatalog u: what catalogd serves at its base.
func (w *world) contentOf(u *unstructured.Unstructured) *unstructured.Unstructured {
	w.t.Helper()
	base := nestedString(u, "status", "urls", "base")
	ref := nestedString(u, "status", "resolvedSource", "image", "ref")
	lines := w.catalogContent(base)
	return snapshot.NewCatalogContent(u.GetName(), ref, strings.Join(lines, "\n")+"\n")
}

func (w *world) writeObject(b *strings.Builder, obj map[string]any) {
	w.t.Helper()
	data, err := yaml.Marshal(obj)
	require.NoError(w.t, err)
	b.WriteString("---\n")
	b.Write(data)
}

// directCatalogs reads catalog content from catalogd as the world reaches it (there is no
// Service in front of catalogd here for the API server to proxy to).
type directCatalogs struct{ w *world }

func (d directCatalogs) Raw(_ context.Context, src catalogd.Source) ([]byte, error) {
	return []byte(strings.Join(d.w.catalogContent(src.Base), "\n") + "\n"), nil
}

// requireSnapshotAgrees captures the cluster as `tollgate snapshot` does, decides the
// ClusterExtension name on it as `tollgate eval` does, and requires what the manager wrote
// into the ExtensionGate's status: the same candidates and decision, on the same content.
func (w *world) requireSnapshotAgrees(name string) {
	w.t.Helper()
	objs, err := snapshot.Capture(w.ctx, w.c, snapshot.Scope{All: true, PolicyNamespace: policyNS, PolicyLabel: policysource.Label, Catalogs: directCatalogs{w}}, io.Discard)
	require.NoError(w.t, err)
	path := filepath.Join(w.t.TempDir(), "snapshot.yaml")
	var b strings.Builder
	require.NoError(w.t, snapshot.Write(&b, "yaml", objs, "captured"))
	require.NoError(w.t, os.WriteFile(path, []byte(b.String()), 0o600))
	snap, err := snapshot.Load(path)
	require.NoError(w.t, err, "the captured snapshot loads")
	eng, _, err := policyset.Sources{}.Build(w.ctx, snap, io.Discard)
	require.NoError(w.t, err)
	ev := evaluation.New(snap, eng, input.Config{}, time.Now(), io.Discard)
	report, err := ev.Report(w.ctx)
	require.NoError(w.t, err)
	require.Len(w.t, report.Extensions, 1)
	gate := &tollgatev1alpha1.ExtensionGate{}
	require.NoError(w.t, w.c.Get(w.ctx, client.ObjectKey{Name: name}, gate))
	got := report.Extensions[0].Status
	require.Equal(w.t, gate.Status.Candidates, got.Candidates)
	require.Equal(w.t, gate.Status.Catalogs, got.Catalogs)
	require.Equal(w.t, gate.Status.Decision.Denials, got.Decision.Denials)
}
