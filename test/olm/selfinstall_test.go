package olm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// Real OLM installs Tollgate from its own catalog (bundles/catalog, with the objects of
// bundles/olm embedded in place of the bundle image) to CSV Succeeded; the manager, run as
// the ServiceAccount OLM created with the permissions OLM granted from the CSV, then gates a
// Subscription: OLM's plan for it is approved, and OLM installs it.
func TestTollgateInstalledByRealOLMGatesASubscription(t *testing.T) {
	w := newOLMWorld(t, false, release{pkg: "alpha", version: "1.0.0"})
	own := &opm{t: t, name: "opm-tollgate", dir: ownCatalog(t), logDir: w.logDir, port: freePort(t)}
	opmValidate(t, own.dir)
	own.start()
	t.Cleanup(own.stop)
	w.catalogSource("tollgate", own)

	w.create(&operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: "tollgate"}})
	w.create(&v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: "tollgate"},
		Spec: &v1alpha1.SubscriptionSpec{CatalogSource: "tollgate", CatalogSourceNamespace: globalNS,
			Package: "tollgate", Channel: "alpha", InstallPlanApproval: v1alpha1.ApprovalAutomatic}})
	csv := w.installed(policyNS, "tollgate", "tollgate.v0.1.0").Status.InstalledCSV
	w.csvPhase(policyNS, csv, v1alpha1.CSVPhaseSucceeded)

	w.startManagerAs("system:serviceaccount:"+policyNS+":"+serviceAccount, defaultOptions())
	ns := w.namespace("gated-")
	w.subscribe(ns, "alpha", "alpha", v1alpha1.ApprovalManual)
	plan := w.pendingPlan(ns, "alpha", csvName("alpha", "1.0.0"))
	w.gate(ns, "alpha", "approved the plan", approved(plan.Name))
	w.planPhase(ns, plan.Name, v1alpha1.InstallPlanPhaseComplete)
	assert.Equal(t, csvName("alpha", "1.0.0"), w.installed(ns, "alpha", csvName("alpha", "1.0.0")).Status.InstalledCSV)
}

// ownCatalog writes bundles/catalog into a folder with each bundle's image replaced by the
// objects of bundles/olm/manifests, as olm.bundle.object properties (what opm renders from the
// bundle image), and returns the folder.
func ownCatalog(t *testing.T) string {
	t.Helper()
	root := repo.Root()
	data, err := os.ReadFile(filepath.Join(root, "bundles", "catalog", "tollgate", "catalog.yaml"))
	require.NoError(t, err)
	objects := bundleObjects(t, filepath.Join(root, "bundles", "olm", "manifests"))
	var out strings.Builder
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var m map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
		if m == nil {
			continue
		}
		if m["schema"] == "olm.bundle" {
			delete(m, "image")
			delete(m, "relatedImages")
			props, _ := m["properties"].([]any)
			for _, obj := range objects {
				props = append(props, map[string]any{"type": "olm.bundle.object", "value": map[string]any{"data": obj}})
			}
			m["properties"] = props
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		out.Write(b)
		out.WriteString("\n")
	}
	dir := filepath.Join(t.TempDir(), "tollgate-catalog")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(out.String()), 0o600))
	return dir
}

// bundleObjects are the manifests of a bundle folder, each as JSON (base64 once marshalled).
func bundleObjects(t *testing.T, dir string) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		j, err := yaml.YAMLToJSON(data)
		require.NoError(t, err, f)
		out = append(out, j)
	}
	return out
}
