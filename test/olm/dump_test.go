package olm

import (
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// olmKinds are the kinds OLM writes, as dumped for a reader comparing them with our types.
var olmKinds = []schema.GroupVersionKind{
	{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "CatalogSourceList"},
	{Group: "operators.coreos.com", Version: "v1", Kind: "OperatorGroupList"},
	{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "SubscriptionList"},
	{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "InstallPlanList"},
	{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "ClusterServiceVersionList"},
	{Group: "operators.coreos.com", Version: "v2", Kind: "OperatorConditionList"},
	{Group: "tollgate.dev", Version: "v1alpha1", Kind: "UpgradeGateList"},
}

// dumpOnCleanup writes every object of olmKinds, as the API server returns them, into
// $TOLLGATE_OLM_DUMP/<test>.yaml when that variable is set: how to see what real OLM writes.
func (w *world) dumpOnCleanup() {
	dir := os.Getenv("TOLLGATE_OLM_DUMP")
	if dir == "" {
		return
	}
	w.t.Cleanup(func() {
		var b strings.Builder
		for _, gvk := range olmKinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk)
			if err := w.c.List(w.ctx, list); err != nil {
				w.t.Logf("dump %s: %v", gvk.Kind, err)
				continue
			}
			for _, item := range list.Items {
				data, err := yaml.Marshal(item.Object)
				if err != nil {
					continue
				}
				b.WriteString("---\n")
				b.Write(data)
			}
		}
		name := strings.ReplaceAll(w.t.Name(), "/", "_") + ".yaml"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600); err != nil {
			w.t.Logf("dump: %v", err)
		}
	})
}
