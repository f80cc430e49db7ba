package olm

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// olmKinds are the kinds OLM writes, as a fixture or a dump holds them.
var olmKinds = []schema.GroupVersionKind{
	{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "CatalogSourceList"},
	{Group: "operators.coreos.com", Version: "v1", Kind: "OperatorGroupList"},
	{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "SubscriptionList"},
	{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "InstallPlanList"},
	{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "ClusterServiceVersionList"},
	{Group: "operators.coreos.com", Version: "v2", Kind: "OperatorConditionList"},
}

// gateKind is Tollgate's own, in a dump but not in a fixture (the manager that reads the
// fixture writes its own).
var gateKind = schema.GroupVersionKind{Group: "tollgate.dev", Version: "v1alpha1", Kind: "UpgradeGateList"}

// fixture writes the objects OLM wrote, as the API server returns them (what `kubectl get -o
// yaml` prints, minus managedFields), into $TOLLGATE_OLM_FIXTURES/name.yaml when that variable
// is set (make olm-fixtures): the real-shaped states that eval, the manager and the approval
// tests are checked on. operands are the operand kinds of the state, if any.
func (w *world) fixture(name, about string, operands ...schema.GroupVersionKind) {
	w.t.Helper()
	dir := os.Getenv("TOLLGATE_OLM_FIXTURES")
	if dir == "" {
		return
	}
	header := "# Written by real OLM (make olm-fixtures, " + w.t.Name() + "): " + about + "\n"
	require.NoError(w.t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(header+w.objects(append(slices.Clone(olmKinds), operands...))), 0o644))
}

// dumpOnCleanup writes every object of olmKinds and the gates into $TOLLGATE_OLM_DUMP/<test>.yaml
// when that variable is set: how to see what real OLM wrote when a test failed.
func (w *world) dumpOnCleanup() {
	dir := os.Getenv("TOLLGATE_OLM_DUMP")
	if dir == "" {
		return
	}
	w.t.Cleanup(func() {
		name := strings.ReplaceAll(w.t.Name(), "/", "_") + ".yaml"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(w.objects(append(slices.Clone(olmKinds), gateKind))), 0o600); err != nil {
			w.t.Logf("dump: %v", err)
		}
	})
}

// objects is every object of the list kinds as multi-document YAML, without managedFields,
// sorted by kind, namespace and name.
func (w *world) objects(lists []schema.GroupVersionKind) string {
	var b strings.Builder
	for _, gvk := range lists {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := w.c.List(w.ctx, list); err != nil {
			w.t.Logf("list %s: %v", gvk.Kind, err)
			continue
		}
		slices.SortFunc(list.Items, func(a, b unstructured.Unstructured) int {
			return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
		})
		for _, item := range list.Items {
			item.SetManagedFields(nil)
			data, err := yaml.Marshal(item.Object)
			if err != nil {
				continue
			}
			b.WriteString("---\n")
			b.Write(data)
		}
	}
	return b.String()
}
