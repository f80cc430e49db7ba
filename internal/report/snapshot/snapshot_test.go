package snapshot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	packagesv1 "github.com/tollgate-dev/tollgate/apis/packages/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

const multiDoc = `# exported with kubectl
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: etcd
  namespace: operators
  managedFields:
  - manager: olm
spec:
  name: etcd
  source: operatorhubio
  sourceNamespace: olm
---
apiVersion: etcd.database.coreos.com/v1beta2
kind: EtcdCluster
metadata:
  name: main
  namespace: operators
`

const list = `apiVersion: v1
kind: List
items:
- apiVersion: operators.coreos.com/v1alpha1
  kind: CatalogSource
  metadata: {name: operatorhubio, namespace: olm, labels: {tier: community}}
- apiVersion: operators.coreos.com/v1alpha1
  kind: CatalogSource
  metadata: {name: private, namespace: operators}
`

const jsonDoc = `{"apiVersion": "tollgate.dev/v1alpha1", "kind": "UpgradeGate", "metadata": {"name": "etcd", "namespace": "operators"}, "spec": {"mode": "Audit"}}`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	return dir
}

func TestLoadSnapshot(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"state.yaml":       multiDoc,
		"nested/list.yml":  list,
		"nested/gate.json": jsonDoc,
		"nested/README.md": "not a manifest",
	})
	s, err := snapshot.Load(dir)
	require.NoError(t, err)

	ctx := context.Background()
	sub := &v1alpha1.Subscription{}
	require.NoError(t, s.Get(ctx, client.ObjectKey{Namespace: "operators", Name: "etcd"}, sub))
	assert.Equal(t, "etcd", sub.Spec.Package)

	var cats v1alpha1.CatalogSourceList
	require.NoError(t, s.List(ctx, &cats))
	require.Len(t, cats.Items, 2, "a kind: List contributes its items")
	assert.Equal(t, "operatorhubio", cats.Items[0].Name, "sorted by namespace then name")

	require.NoError(t, s.List(ctx, &cats, client.InNamespace("operators")))
	assert.Len(t, cats.Items, 1)
	require.NoError(t, s.List(ctx, &cats, client.MatchingLabels{"tier": "community"}))
	assert.Len(t, cats.Items, 1)

	g := &tollgatev1alpha1.UpgradeGate{}
	require.NoError(t, s.Get(ctx, client.ObjectKey{Namespace: "operators", Name: "etcd"}, g), "JSON files load too")
	assert.Equal(t, tollgatev1alpha1.ModeAudit, g.Spec.Mode)

	operands := &unstructured.UnstructuredList{}
	operands.SetGroupVersionKind(schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdClusterList"})
	require.NoError(t, s.List(ctx, operands, client.InNamespace("operators")))
	assert.Len(t, operands.Items, 1, "unknown kinds are kept as unstructured")
	operands.SetGroupVersionKind(schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1", Kind: "EtcdClusterList"})
	require.NoError(t, s.List(ctx, operands))
	require.Len(t, operands.Items, 1, "an operand is one object in every version of its CRD")
	assert.Equal(t, "etcd.database.coreos.com/v1beta2", operands.Items[0].GetAPIVersion(), "read as it was written")
	other := &unstructured.UnstructuredList{}
	other.SetGroupVersionKind(schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdBackupList"})
	require.NoError(t, s.List(ctx, other))
	assert.Empty(t, other.Items, "only its own kind")

	err = s.Get(ctx, client.ObjectKey{Namespace: "operators", Name: "missing"}, &v1alpha1.ClusterServiceVersion{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}

func TestLoadReportsUnreadablePaths(t *testing.T) {
	_, err := snapshot.Load(filepath.Join(t.TempDir(), "nope.yaml"))
	require.Error(t, err)
	assert.NotErrorAs(t, err, new(*snapshot.LoadError), "a path problem, not a document's")
}

// The OperatorCondition that holds an upgrade: the object hostile inputs try to make vanish.
// Its lines: 1 apiVersion, 4 name, 5 namespace, 6 generation, 9 type, 10 status, 13
// observedGeneration, 14 lastTransitionTime.
const opCond = `apiVersion: operators.coreos.com/v2
kind: OperatorCondition
metadata:
  name: etcd.v0.9.2
  namespace: team-a
  generation: 1
status:
  conditions:
  - type: Upgradeable
    status: "False"
    reason: Migrating
    message: migrating storage
    observedGeneration: 1
    lastTransitionTime: "2026-11-20T10:00:00Z"
`

// oc is opCond with old replaced by new (old must be there).
func oc(old, new string) string {
	if !strings.Contains(opCond, old) {
		panic(fmt.Sprintf("opCond has no %q", old))
	}
	return strings.Replace(opCond, old, new, 1)
}

const sub = `apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: etcd
  namespace: team-a
spec:
  name: etcd
`

const theOpCond = "operators.coreos.com/v2 OperatorCondition team-a/etcd.v0.9.2"

type hostileCase struct {
	scenario string
	files    map[string]string // one folder; a single file is state.yaml
	err      string            // a substring of the error, "" when the input loads
	want     []string          // "apiVersion Kind namespace/name" that a Get finds
	notWant  []string          // ... that a Get does not find
}

func one(content string) map[string]string { return map[string]string{"state.yaml": content} }

// hostileCases are inputs that used to drop an object silently or keep the wrong one.
func hostileCases() []hostileCase {
	return slices.Concat(malformedCases(), typeCases(), kindCases(), streamCases(), duplicateCases(), listCases(), valueCases())
}

// malformedCases: a document that is not an object with apiVersion, kind and a name.
func malformedCases() []hostileCase {
	return []hostileCase{
		{"a syntax error stops the file and names the line", one(sub + "---\n" + oc("  namespace: team-a", "  namespace: team-a\n    bad: indent")),
			"state.yaml: document 2 (line 14): mapping values are not allowed in this context", nil, nil},
		{"a document that is a list", one(sub + "---\n- just\n- a list\n"),
			"state.yaml: document 2 (line 9): a document must be one object (a YAML mapping), not a list", nil, nil},
		{"a document that is a string", one("just words\n"),
			"document 1 (line 1): a document must be one object (a YAML mapping), not a string (\"just words\")", nil, nil},
		{"a missing apiVersion", one(strings.Replace(opCond, "apiVersion: operators.coreos.com/v2\n", "", 1)),
			"document 1 (line 1): apiVersion: missing: every object says its apiVersion and kind", nil, nil},
		{"a missing kind", one(oc("kind: OperatorCondition\n", "")),
			"document 1 (line 1): kind: missing", nil, nil},
		{"an apiVersion that is a number", one(oc("apiVersion: operators.coreos.com/v2", "apiVersion: 2")),
			"document 1 (line 1): apiVersion: must be a string, not an integer (2)", nil, nil},
		{"an apiVersion with two slashes", one(oc("operators.coreos.com/v2", "operators.coreos.com/v2/x")),
			"apiVersion: \"operators.coreos.com/v2/x\" is not GROUP/VERSION", nil, nil},
		{"an integer metadata.name", one(oc("name: etcd.v0.9.2", "name: 5")),
			"document 1 (line 4): metadata.name: must be a string, not an integer (5)", nil, nil},
		{"a missing metadata.name", one(oc("  name: etcd.v0.9.2\n", "")),
			"metadata.name: missing: every object has a name", nil, nil},
		{"a name with a trailing space would not match the installed CSV", one(oc("name: etcd.v0.9.2", `name: "etcd.v0.9.2 "`)),
			"document 1 (line 4): metadata.name: \"etcd.v0.9.2 \" is not a name the API server accepts", nil, nil},
		{"an OperatorCondition without a namespace would match no Subscription", one(oc("  namespace: team-a\n", "")),
			"metadata.namespace: missing: every OperatorCondition lives in a namespace", nil, nil},
		{"metadata that is a string", one(sub + "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: widget\n"),
			"document 2 (line 11): metadata: must be an object, not a string (\"widget\")", nil, nil},
	}
}

const plan = `apiVersion: operators.coreos.com/v1alpha1
kind: InstallPlan
metadata:
  name: install-abc
  namespace: team-a
spec:
  approval: Manual
  approved: false
  clusterServiceVersionNames:
  - etcd.v0.9.4
`

// pl is plan with old replaced by new (old must be there).
func pl(old, new string) string {
	if !strings.Contains(plan, old) {
		panic(fmt.Sprintf("plan has no %q", old))
	}
	return strings.Replace(plan, old, new, 1)
}

const thePlan = "operators.coreos.com/v1alpha1 InstallPlan team-a/install-abc"

// valueCases: values of the right type that name nothing, or that OLM or the manager would
// read as something else.
func valueCases() []hostileCase {
	return []hostileCase{
		{"a plan that names its CSVs", one(plan), "", []string{thePlan}, nil},
		{"an empty CSV name in a plan", one(sub + "---\n" + pl("  - etcd.v0.9.4\n", "  - etcd.v0.9.4\n  - \"\"\n")),
			"state.yaml: document 2 (line 19): spec.clusterServiceVersionNames[1]: empty: every item names a ClusterServiceVersion the plan installs", nil, nil},
		{"an empty CSV name first in a flow list", one(pl("  clusterServiceVersionNames:\n  - etcd.v0.9.4\n", "  clusterServiceVersionNames: ['', etcd.v0.9.4]\n")),
			"state.yaml: document 1 (line 9): spec.clusterServiceVersionNames[0]: empty", nil, nil},
		{"an empty CSV name in a List item", one("apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(pl("- etcd.v0.9.4", "- ''")), "\n", "\n  ") + "\n"),
			"document 1 (line 13): items[0].spec.clusterServiceVersionNames[0]: empty", nil, nil},
		{"a gate mode in lower case", one(sub + "---\napiVersion: tollgate.dev/v1alpha1\nkind: UpgradeGate\nmetadata: {name: etcd, namespace: team-a}\nspec:\n  mode: enforce\n"),
			`state.yaml: document 2 (line 13): spec.mode: must be Enforce or Audit, not a string ("enforce"): the value is spelled "Enforce" (values are case-sensitive)`, nil, nil},
		{"an empty gate mode", one(sub + "---\napiVersion: tollgate.dev/v1alpha1\nkind: UpgradeGate\nmetadata: {name: etcd, namespace: team-a}\nspec: {mode: ''}\n"),
			`state.yaml: document 2 (line 12): spec.mode: must be Enforce or Audit, not a string ("")`, nil, nil},
		{"a gate without a mode", one(sub + "---\napiVersion: tollgate.dev/v1alpha1\nkind: UpgradeGate\nmetadata: {name: etcd, namespace: team-a}\nspec: {}\n"),
			"", []string{"tollgate.dev/v1alpha1 UpgradeGate team-a/etcd"}, nil},
		{"a plan approval in lower case", one(pl("approval: Manual", "approval: manual")),
			`state.yaml: document 1 (line 7): spec.approval: must be Automatic or Manual, not a string ("manual"): the value is spelled "Manual" (values are case-sensitive)`, nil, nil},
		{"a plan approval OLM does not know", one(pl("approval: Manual", "approval: Never")),
			`document 1 (line 7): spec.approval: must be Automatic or Manual, not a string ("Never")`, nil, nil},
		{"a Subscription approval in lower case", one(sub + "  installPlanApproval: automatic\n"),
			`state.yaml: document 1 (line 8): spec.installPlanApproval: must be Automatic or Manual, not a string ("automatic"): the value is spelled "Automatic" (values are case-sensitive)`, nil, nil},
		{"a Subscription approval in a typed list", one("apiVersion: operators.coreos.com/v1alpha1\nkind: SubscriptionList\nitems:\n- metadata: {name: etcd, namespace: team-a}\n  spec: {name: etcd, installPlanApproval: Manaul}\n"),
			`document 1 (line 5): items[0].spec.installPlanApproval: must be Automatic or Manual, not a string ("Manaul")`, nil, nil},
		{"a Subscription with either approval", map[string]string{"a.yaml": sub + "  installPlanApproval: Manual\n", "b.yaml": strings.ReplaceAll(sub, "etcd", "other") + "  installPlanApproval: Automatic\n"},
			"", []string{"operators.coreos.com/v1alpha1 Subscription team-a/etcd", "operators.coreos.com/v1alpha1 Subscription team-a/other"}, nil},
	}
}

// TestGateModesAreTheCRDs checks that the loader takes every mode Tollgate's CRD enumerates,
// and no other: the loader's list comes from the constants whose marker makes the CRD's.
func TestGateModesAreTheCRDs(t *testing.T) {
	b, err := os.ReadFile(repo.Path("config", "crd", "bases", "tollgate.dev_upgradegates.yaml"))
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.UnmarshalStrict(b, &crd))
	require.Len(t, crd.Spec.Versions, 1)
	enum := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["mode"].Enum
	require.NotEmpty(t, enum)
	var modes []string
	for _, v := range enum {
		var mode string
		require.NoError(t, json.Unmarshal(v.Raw, &mode))
		modes = append(modes, mode)
		_, err := snapshot.Load(writeFiles(t, one(sub+"---\napiVersion: tollgate.dev/v1alpha1\nkind: UpgradeGate\nmetadata: {name: etcd, namespace: team-a}\nspec: {mode: "+mode+"}\n")))
		assert.NoError(t, err, "mode %s", mode)
	}
	_, err = snapshot.Load(writeFiles(t, one(sub+"---\napiVersion: tollgate.dev/v1alpha1\nkind: UpgradeGate\nmetadata: {name: etcd, namespace: team-a}\nspec: {mode: Off}\n")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.mode: must be "+strings.Join(modes[:len(modes)-1], ", ")+" or "+modes[len(modes)-1]+", not")
}

// typeCases: values that do not fit their field.
func typeCases() []hostileCase {
	return []hostileCase{
		{"generation .nan", one(oc("generation: 1", "generation: .nan")),
			"document 1 (line 6): metadata.generation: \".nan\" is not a number JSON can carry (NaN and infinities are refused)", nil, nil},
		{"generation .inf", one(oc("generation: 1", "generation: .inf")),
			"document 1 (line 6): metadata.generation: \".inf\" is not a number JSON can carry", nil, nil},
		{"observedGeneration -.Inf, deep in a list", one(oc("observedGeneration: 1", "observedGeneration: -.Inf")),
			"document 1 (line 13): status.conditions[0].observedGeneration: \"-.Inf\" is not a number JSON can carry", nil, nil},
		{"NaN in an operand Tollgate does not type", one(sub + "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team-a}\nspec: {size: .NaN}\n"),
			"document 2 (line 12): spec.size: \".NaN\" is not a number JSON can carry", nil, nil},
		{"a generation with a fraction", one(oc("generation: 1", "generation: 1.5")),
			"document 1 (line 6): metadata.generation: must be an integer, not a floating-point number (1.5)", nil, nil},
		{"a generation beyond 64 bits", one(oc("generation: 1", "generation: 99999999999999999999")),
			"metadata.generation: must be an integer, not a floating-point number (1e+20)", nil, nil},
		{"an explicit !!int beyond 64 bits", one(oc("generation: 1", "generation: !!int 99999999999999999999")),
			"metadata.generation: \"99999999999999999999\" is not an integer of at most 64 bits", nil, nil},
		{"a generation that is a string", one(oc("generation: 1", `generation: "1"`)),
			"metadata.generation: must be an integer, not a string (\"1\")", nil, nil},
		{"an unquoted True is a boolean where a condition status is a string", one(oc(`status: "False"`, "status: False")),
			"document 1 (line 10): status.conditions[0].status: must be a string, not a boolean (false)", nil, nil},
		{"a string where a boolean is wanted", one(sub + "---\napiVersion: operators.coreos.com/v1alpha1\nkind: InstallPlan\nmetadata: {name: p, namespace: team-a}\nspec:\n  approval: Manual\n  approved: \"yes\"\n"),
			"document 2 (line 14): spec.approved: must be a boolean (true or false), not a string (\"yes\")", nil, nil},
		{"a time that does not parse", one(oc(`lastTransitionTime: "2026-11-20T10:00:00Z"`, "lastTransitionTime: yesterday")),
			"document 1 (line 14): status.conditions[0].lastTransitionTime: a string (\"yesterday\") does not fit a Time", nil, nil},
		{"status.conditions that is an object", one(oc("  conditions:\n", "  conditions: {}\n  x:\n")),
			"status.conditions: must be a list, not an object", nil, nil},
		{"an integer in a policy ConfigMap's data", one(sub + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: p, namespace: tollgate-system}\ndata:\n  disabled: 3\n"),
			"document 2 (line 13): data.disabled: must be a string, not an integer (3)", nil, nil},
		{"binaryData that is not base64", one("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p, namespace: tollgate-system}\nbinaryData: {x: \"%%%\"}\n"),
			"document 1 (line 4): binaryData.x: a string (\"%%%\") is not base64", nil, nil},
		{"binaryData as a YAML !!binary block", one("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p, namespace: tollgate-system}\nbinaryData:\n  x: !!binary |\n    aGVs\n    bG8=\n"),
			"", []string{"v1 ConfigMap tollgate-system/p"}, nil},
		{"a namespace in capitals would match no Subscription", one(oc("namespace: team-a", "namespace: Team-A")),
			"document 1 (line 5): metadata.namespace: \"Team-A\" is not a namespace the API server accepts", nil, nil},
		{"a misspelled top-level field would drop the status", one(oc("status:\n", "staus:\n")),
			"document 1 (line 7): staus: unknown field: not a field of OperatorCondition (its fields are apiVersion, kind, metadata, spec, status)", nil, nil},
		{"a top-level field in the wrong case", one(oc("status:\n", "Status:\n")),
			"Status: unknown field: the field is spelled \"status\"", nil, nil},
		{"a misspelled metadata field would drop the namespace", one(oc("  namespace: team-a", "  namespace: team-a\n  namspace: team-b")),
			"document 1 (line 6): metadata.namspace: unknown field", nil, nil},
		{"a misspelled condition field would drop the status", one(oc("    observedGeneration: 1", "    observedGeneration: 1\n    stauts: \"False\"")),
			"status.conditions[0].stauts: unknown field", nil, nil},
		{"a misspelled UpgradeGate mode would fall back to Enforce", one(sub + "---\napiVersion: tollgate.dev/v1alpha1\nkind: UpgradeGate\nmetadata: {name: etcd, namespace: team-a}\nspec: {mdoe: Audit}\n"),
			"document 2 (line 12): spec.mdoe: unknown field: not a field of UpgradeGateSpec", nil, nil},
	}
}

// kindCases: kinds Tollgate reads, misspelled or in a version the API server does not serve.
func kindCases() []hostileCase {
	return []hostileCase{
		{"OperatorCondition v1 is read as v2", one(oc("operators.coreos.com/v2", "operators.coreos.com/v1")),
			"", []string{theOpCond, "operators.coreos.com/v1 OperatorCondition team-a/etcd.v0.9.2"}, nil},
		{"OperatorGroup v1alpha2 is read as v1", one("apiVersion: operators.coreos.com/v1alpha2\nkind: OperatorGroup\nmetadata: {name: g, namespace: team-a}\n"),
			"", []string{"operators.coreos.com/v1 OperatorGroup team-a/g"}, nil},
		{"an OperatorCondition version OLM does not serve", one(oc("operators.coreos.com/v2", "operators.coreos.com/v3")),
			"document 1 (line 1): apiVersion: OperatorCondition is served as operators.coreos.com/v2 or operators.coreos.com/v1, not operators.coreos.com/v3", nil, nil},
		{"a Subscription as v1", one(strings.Replace(sub, "v1alpha1", "v1", 1)),
			"apiVersion: Subscription is served as operators.coreos.com/v1alpha1, not operators.coreos.com/v1", nil, nil},
		{"a lowercase kind", one(oc("kind: OperatorCondition", "kind: operatorcondition")),
			"document 1 (line 2): kind: \"operatorcondition\" is spelled \"OperatorCondition\" (kinds are case-sensitive)", nil, nil},
		{"a plural kind in OLM's group", one(oc("kind: OperatorCondition", "kind: OperatorConditions")),
			"kind: operators.coreos.com serves no kind \"OperatorConditions\"; its kinds are CatalogSource, ClusterServiceVersion", nil, nil},
		{"OLM's group in capitals", one(oc("operators.coreos.com/v2", "Operators.CoreOS.com/v2")),
			"apiVersion: the API group is spelled \"operators.coreos.com\" (groups are lower case)", nil, nil},
		{"an OperatorCondition without its group", one(oc("operators.coreos.com/v2", "v2")),
			"apiVersion: \"v2\" has no API group: OperatorCondition is served as operators.coreos.com/v2 or operators.coreos.com/v1", nil, nil},
		{"a core kind in the wrong case", one("apiVersion: v1\nkind: configmap\nmetadata: {name: p, namespace: tollgate-system}\n"),
			"kind: \"configmap\" is spelled \"ConfigMap\"", nil, nil},
		{"a kind the core group does not serve", one("apiVersion: v1\nkind: Widget\nmetadata: {name: w}\n"),
			"kind: the API server serves no kind \"Widget\" in v1", nil, nil},
		{"operands of any CRD are kept, whatever their spec", one(sub + "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team-a}\nspec: {size: three, Size: 3}\n"),
			"", []string{"example.com/v1 Widget team-a/w"}, nil},
		{"another group's Subscription is an operand, not OLM's", one("apiVersion: messaging.knative.dev/v1\nkind: Subscription\nmetadata: {name: etcd, namespace: team-a}\n"),
			"", []string{"messaging.knative.dev/v1 Subscription team-a/etcd"}, []string{"operators.coreos.com/v1alpha1 Subscription team-a/etcd"}},
	}
}

// streamCases: how a file splits into documents.
func streamCases() []hostileCase {
	return []hostileCase{
		{"a --- !!map separator keeps the document", one(sub + "--- !!map\n" + opCond),
			"", []string{theOpCond, "operators.coreos.com/v1alpha1 Subscription team-a/etcd"}, nil},
		{"a document on the separator line", one(sub + `--- {apiVersion: operators.coreos.com/v1, kind: OperatorGroup, metadata: {name: g, namespace: team-a}}` + "\n"),
			"", []string{"operators.coreos.com/v1 OperatorGroup team-a/g"}, nil},
		{"a document end marker", one(sub + "...\n---\n" + opCond),
			"", []string{theOpCond}, nil},
		{"empty documents and comments", one("# nothing\n---\n---\n# still nothing\n"), "", nil, nil},
		{"a duplicate key", one(oc("  namespace: team-a", "  namespace: team-a\n  name: other")),
			"document 1 (line 6): metadata.name: duplicate key: already set at line 4", nil, nil},
		{"a duplicate key in JSON", map[string]string{"state.json": `{"apiVersion": "v1", "kind": "ConfigMap", "kind": "Secret"}`},
			"state.json: document 1 (line 1): kind: duplicate key: already set at line 1", nil, nil},
		{"a key that is not a string", one("? [a, b]\n: c\n"),
			"document 1 (line 1): a key must be a string, not a YAML sequence", nil, nil},
		{"anchors and merge keys", one("apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a, namespace: tollgate-system}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {<<: *m, name: b}\n"),
			"", []string{"v1 ConfigMap tollgate-system/a", "v1 ConfigMap tollgate-system/b"}, nil},
		{"a merge key of a string", one("a: &s text\nb: {<<: *s}\n"),
			"document 1 (line 2): b: a merge key (<<) merges mappings, not a string (\"text\")", nil, nil},
		{"aliases that expand a billion times", one(aliasBomb()),
			"YAML aliases expand to more than 1048576 values", nil, nil},
	}
}

func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	return b.String()
}

// duplicateCases: one object given twice.
func duplicateCases() []hostileCase {
	later := oc(`status: "False"`, `status: "True"`)
	return []hostileCase{
		{"the same OperatorCondition twice in one file, the later allowing", one(opCond + "---\n" + later),
			"state.yaml: document 2 (line 16): OperatorCondition team-a/etcd.v0.9.2 is also in ", nil, nil},
		{"the same OperatorCondition in two files of a folder", map[string]string{"a.yaml": opCond, "b/c.yaml": later},
			"c.yaml: document 1 (line 1): OperatorCondition team-a/etcd.v0.9.2 is also in ", nil, nil},
		{"the same OperatorCondition as v1 and as v2", one(opCond + "---\n" + oc("operators.coreos.com/v2", "operators.coreos.com/v1")),
			"OperatorCondition team-a/etcd.v0.9.2 is also in", nil, nil},
		{"identical copies are one object", map[string]string{"a.yaml": opCond, "b.yaml": sub + "---\n" + opCond},
			"", []string{theOpCond}, nil},
	}
}

// listCases: what is unpacked as a list, and what is one object.
func listCases() []hostileCase {
	return []hostileCase{
		{"an AllowList with items is one object", one("apiVersion: policy.example.com/v1\nkind: AllowList\nmetadata: {name: allow, namespace: team-a}\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(opCond), "\n", "\n  ") + "\n"),
			"", []string{"policy.example.com/v1 AllowList team-a/allow"}, []string{theOpCond}},
		{"a typed list's items take its kind", one("apiVersion: operators.coreos.com/v1alpha1\nkind: SubscriptionList\nitems:\n- metadata: {name: etcd, namespace: team-a}\n"),
			"", []string{"operators.coreos.com/v1alpha1 Subscription team-a/etcd"}, nil},
		{"a typed list with an item of another kind", one("apiVersion: operators.coreos.com/v1alpha1\nkind: SubscriptionList\nitems:\n- {kind: CatalogSource, metadata: {name: c, namespace: team-a}}\n"),
			"document 1 (line 4): items[0].kind: a string (\"CatalogSource\") in a SubscriptionList: its items are operators.coreos.com/v1alpha1 Subscription", nil, nil},
		{"a lowercase list", one("apiVersion: v1\nkind: list\nitems: []\n"),
			"kind: \"list\" is spelled \"List\"", nil, nil},
		{"a List item without a kind", one("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  metadata: {name: x}\n"),
			"document 1 (line 4): items[0].kind: missing", nil, nil},
		{"a List whose items is an object", one("apiVersion: v1\nkind: List\nitems: {a: b}\n"),
			"document 1 (line 3): items: must be a list, not an object", nil, nil},
		{"a List item that is a string", one("apiVersion: v1\nkind: List\nitems: [oops]\n"),
			"items[0]: a list item must be an object, not a string", nil, nil},
		{"a List inside a List", one("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: []}\n"),
			"items[0].kind: a List inside a List is not read", nil, nil},
		{"a type error in a List item names the item's line", one("apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(oc("generation: 1", "generation: .nan")), "\n", "\n  ") + "\n"),
			"document 1 (line 9): items[0].metadata.generation: \".nan\" is not a number JSON can carry", nil, nil},
	}
}

func TestLoadRefusesHostileInput(t *testing.T) {
	cases := hostileCases()
	require.GreaterOrEqual(t, len(cases), 30)
	ctx := context.Background()
	for _, tt := range cases {
		t.Run(tt.scenario, func(t *testing.T) {
			s, err := snapshot.Load(writeFiles(t, tt.files))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.ErrorAs(t, err, new(*snapshot.LoadError))
				assert.Nil(t, s, "no snapshot from input that was not read whole")
				return
			}
			require.NoError(t, err)
			for _, w := range tt.want {
				key, obj := keyOf(t, w)
				assert.NoError(t, s.Get(ctx, key, obj), "%s", w)
			}
			for _, w := range tt.notWant {
				key, obj := keyOf(t, w)
				assert.True(t, apierrors.IsNotFound(s.Get(ctx, key, obj)), "%s is not there", w)
			}
		})
	}
}

// keyOf parses "apiVersion Kind namespace/name" into a key and an empty object of that kind.
func keyOf(t *testing.T, s string) (client.ObjectKey, *unstructured.Unstructured) {
	t.Helper()
	f := strings.Fields(s)
	require.Len(t, f, 3, s)
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(f[0])
	u.SetKind(f[1])
	ns, name, ok := strings.Cut(f[2], "/")
	if !ok {
		ns, name = "", f[2]
	}
	return client.ObjectKey{Namespace: ns, Name: name}, u
}

func TestLoadErrorNamesFileDocumentLineAndField(t *testing.T) {
	dir := writeFiles(t, one(sub+"---\n"+oc("name: etcd.v0.9.2", "name: true")))
	_, err := snapshot.Load(dir)
	var le *snapshot.LoadError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, filepath.Join(dir, "state.yaml"), le.File)
	assert.Equal(t, 2, le.Document)
	assert.Equal(t, 12, le.Line)
	assert.Equal(t, "metadata.name", le.Field)
	assert.EqualError(t, le.Err, "must be a string, not a boolean (true)")
}

func TestLoadReportsEveryBrokenDocumentUpToALimit(t *testing.T) {
	var b strings.Builder
	for i := range 25 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: x, generation: .nan}\n", i)
	}
	_, err := snapshot.Load(writeFiles(t, one(b.String())))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "document 1 (line 4): metadata.generation")
	assert.Contains(t, err.Error(), "document 20 (line 80): metadata.generation")
	assert.NotContains(t, err.Error(), "document 21 ")
	assert.Contains(t, err.Error(), "and 5 more")
}

func TestLoadRefusesDevicesAndFilesTooLarge(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := snapshot.Load("/dev/zero")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/dev/zero is not a regular file")

		dir := t.TempDir()
		require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")))
		_, err = snapshot.Load(dir)
		require.Error(t, err, "a link in a folder to a device is refused too")
		assert.Contains(t, err.Error(), "is not a regular file")
	}
	huge := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(snapshot.MaxFileSize+1)) // sparse: nothing is written
	require.NoError(t, f.Close())
	_, err = snapshot.Load(huge)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is larger than 64 MiB, the most a snapshot file may hold")
}

// loadWithin is Load that fails the test, rather than hanging it, when Load blocks.
func loadWithin(t *testing.T, paths ...string) (*snapshot.Snapshot, error) {
	t.Helper()
	type result struct {
		s   *snapshot.Snapshot
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := snapshot.Load(paths...)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("Load(%v) blocked", paths)
		return nil, nil
	}
}

func TestLoadReadsRegularFilesOnly(t *testing.T) {
	dir := writeFiles(t, one(sub))
	target := filepath.Join(dir, "state.yaml")
	fifoDir := t.TempDir()
	fifo := filepath.Join(fifoDir, "pipe.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sockDir := t.TempDir()
	sock := filepath.Join(sockDir, "s.yaml")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	linked := t.TempDir()
	require.NoError(t, os.Symlink(target, filepath.Join(linked, "link.yaml")))
	linkedFifo := t.TempDir()
	require.NoError(t, os.Symlink(fifo, filepath.Join(linkedFifo, "link.yaml")))

	for _, tt := range []struct {
		scenario string
		path     string
		err      string // "" when the path is read
	}{
		{"a named pipe in a folder", fifoDir, fifo + " is not a regular file but a named pipe"},
		{"a named pipe given as a path", fifo, fifo + " is not a regular file but a named pipe"},
		{"a link in a folder to a named pipe", linkedFifo, filepath.Join(linkedFifo, "link.yaml") + " is not a regular file but a named pipe"},
		{"a socket in a folder", sockDir, sock + " is not a regular file but a socket"},
		{"a socket given as a path", sock, sock + " is not a regular file but a socket"},
		{"a link in a folder to a regular file", linked, ""},
		{"a link given as a path to a regular file", filepath.Join(linked, "link.yaml"), ""},
		{"a folder given as a path", dir, ""},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			s, err := loadWithin(t, tt.path)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.NoError(t, s.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "etcd"}, &v1alpha1.Subscription{}))
		})
	}
}

func TestLoadReadsThePipeOfProcessSubstitution(t *testing.T) {
	if _, err := os.Stat("/dev/fd/0"); err != nil {
		t.Skip("no /dev/fd")
	}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	go func() {
		_, _ = w.WriteString(sub)
		_ = w.Close()
	}()
	s, err := loadWithin(t, fmt.Sprintf("/dev/fd/%d", r.Fd())) // what <(kubectl get ...) names
	require.NoError(t, err)
	assert.NoError(t, s.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "etcd"}, &v1alpha1.Subscription{}))
}

func TestLoadReadsStandardInput(t *testing.T) {
	in := filepath.Join(t.TempDir(), "stdin")
	require.NoError(t, os.WriteFile(in, []byte(sub+"---\n"+oc("generation: 1", "generation: .inf")), 0o600))
	f, err := os.Open(in)
	require.NoError(t, err)
	defer f.Close()
	saved := os.Stdin
	t.Cleanup(func() { os.Stdin = saved })
	os.Stdin = f

	_, err = snapshot.Load(snapshot.Stdin)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "standard input: document 2 (line 14): metadata.generation")

	require.NoError(t, os.WriteFile(in, []byte(sub), 0o600))
	_, err = f.Seek(0, 0)
	require.NoError(t, err)
	s, err := snapshot.Load(snapshot.Stdin)
	require.NoError(t, err)
	assert.NoError(t, s.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "etcd"}, &v1alpha1.Subscription{}))
}

func TestEveryServedVersionIsReadInTheVersionAskedFor(t *testing.T) {
	s, err := snapshot.Load(writeFiles(t, one(oc("operators.coreos.com/v2", "operators.coreos.com/v1"))))
	require.NoError(t, err)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "team-a", Name: "etcd.v0.9.2"}

	v2 := &operatorsv2.OperatorCondition{}
	require.NoError(t, s.Get(ctx, key, v2), "the input builder reads v2")
	assert.Equal(t, "operators.coreos.com/v2", v2.APIVersion)
	require.Len(t, v2.Status.Conditions, 1)
	assert.Equal(t, metav1.ConditionFalse, v2.Status.Conditions[0].Status)

	var list operatorsv2.OperatorConditionList
	require.NoError(t, s.List(ctx, &list, client.InNamespace("team-a")))
	assert.Len(t, list.Items, 1)

	v1 := &operatorsv1.OperatorCondition{}
	require.NoError(t, s.Get(ctx, key, v1))
	assert.Equal(t, "Upgradeable", v1.Status.Conditions[0].Type)
}

func TestSnapshotAddAndUpsert(t *testing.T) {
	s := snapshot.New()
	ctx := context.Background()
	g := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: "etcd"}}
	require.NoError(t, s.Add(g))
	assert.True(t, apierrors.IsAlreadyExists(s.Add(g)))

	decided := g.DeepCopy()
	decided.Status.Decision.EvaluatedAt = &metav1.Time{Time: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)}
	decided.Status.Decision.Denials = []tollgatev1alpha1.Denial{{Code: "OperatorNotUpgradeable", Message: "no"}}
	require.NoError(t, s.Upsert(decided))

	got := &tollgatev1alpha1.UpgradeGate{}
	require.NoError(t, s.Get(ctx, client.ObjectKeyFromObject(g), got))
	assert.Equal(t, "OperatorNotUpgradeable", got.Status.Decision.Denials[0].Code)
}

// A PackageManifest as OLM's package server serves it, `spec: {}` and all, is read strictly:
// a real cluster's first export must decide something.
func TestLoadReadsAPackageManifestAsThePackageServerPrintsIt(t *testing.T) {
	s, err := snapshot.Load(filepath.Join("testdata", "olm", "packagemanifest.yaml"))
	require.NoError(t, err)

	pm := &packagesv1.PackageManifest{}
	require.NoError(t, s.Get(context.Background(), client.ObjectKey{Namespace: "operators", Name: "etcd"}, pm))
	assert.Equal(t, "operatorhubio", pm.Status.CatalogSource)
	assert.Equal(t, "singlenamespace-alpha", pm.Status.DefaultChannel)
	require.Len(t, pm.Status.Channels, 1)
	assert.Equal(t, "etcdoperator.v0.9.4", pm.Status.Channels[0].CurrentCSV)
}
