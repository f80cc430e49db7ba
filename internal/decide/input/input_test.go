package input_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tollgate-dev/tollgate/apis"
	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/policies"
)

const ns = "operators"

var (
	key       = types.NamespacedName{Namespace: ns, Name: "etcd"}
	now       = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	etcdGVK   = schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}
	evaluated = metav1.NewTime(now.Add(-time.Minute))
)

func meta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}

func subscription(name, installed, current string) *v1alpha1.Subscription {
	return &v1alpha1.Subscription{
		ObjectMeta: meta(ns, name),
		Spec: &v1alpha1.SubscriptionSpec{
			CatalogSource: "operatorhubio", CatalogSourceNamespace: "olm", Package: name,
			Channel: "stable", InstallPlanApproval: v1alpha1.ApprovalManual,
		},
		Status: v1alpha1.SubscriptionStatus{InstalledCSV: installed, CurrentCSV: current},
	}
}

func csv(name string, owned ...v1alpha1.CRDDescription) *v1alpha1.ClusterServiceVersion {
	c := &v1alpha1.ClusterServiceVersion{ObjectMeta: meta(ns, name)}
	c.Spec.CustomResourceDefinitions.Owned = owned
	c.Status.Phase = v1alpha1.CSVPhaseSucceeded
	return c
}

func plan(name string, phase v1alpha1.InstallPlanPhase, csvs ...string) *v1alpha1.InstallPlan {
	return &v1alpha1.InstallPlan{
		ObjectMeta: meta(ns, name),
		Spec:       v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: csvs, Approval: v1alpha1.ApprovalManual},
		Status:     &v1alpha1.InstallPlanStatus{Phase: phase},
	}
}

func catalog(namespace, name string) *v1alpha1.CatalogSource {
	return &v1alpha1.CatalogSource{ObjectMeta: meta(namespace, name), Spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: "quay.io/x/" + name}}
}

func operand(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(etcdGVK)
	u.SetNamespace(namespace)
	u.SetName(name)
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Available", "status": "True"}}, "status", "conditions")
	return u
}

func gate(name string, decided bool, denials ...tollgatev1alpha1.Denial) *tollgatev1alpha1.UpgradeGate {
	g := &tollgatev1alpha1.UpgradeGate{ObjectMeta: meta(ns, name)}
	g.Status.Decision.Denials = denials
	if decided {
		g.Status.Decision.EvaluatedAt = &evaluated
	}
	return g
}

// world is a Subscription mid-upgrade: etcd.v1 installed, etcd.v2 current, one pending plan
// that also installs a peer operator, and the surrounding objects.
func world() []client.Object {
	sub := subscription("etcd", "etcd.v1", "etcd.v2")
	sub.Status.InstallPlanRef = &corev1.ObjectReference{Namespace: ns, Name: "install-b"}
	opCond := &operatorsv2.OperatorCondition{ObjectMeta: meta(ns, "etcd.v1")}
	opCond.Spec.Conditions = []metav1.Condition{{Type: "Upgradeable", Status: metav1.ConditionFalse, Reason: "Migrating", Message: "migrating", LastTransitionTime: evaluated}}
	group := &operatorsv1.OperatorGroup{ObjectMeta: meta(ns, "b-group")}
	group.Status.Namespaces = []string{ns, "team-a"}
	return []client.Object{
		sub,
		csv("etcd.v1", v1alpha1.CRDDescription{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}),
		csv("etcd.v2"),
		plan("install-a", v1alpha1.InstallPlanPhaseComplete, "etcd.v2"),
		plan("install-b", v1alpha1.InstallPlanPhaseRequiresApproval, "etcd.v2", "peer.v3", "orphan.v1"),
		plan("install-c", v1alpha1.InstallPlanPhaseRequiresApproval, "unrelated.v1"),
		catalog("olm", "operatorhubio"),
		catalog(ns, "private"),
		catalog("elsewhere", "hidden"),
		opCond,
		group,
		operand(ns, "main"),
		operand("team-a", "side"),
		operand("team-b", "invisible"),
		gate("etcd", true),
		subscription("peer", "peer.v2", "peer.v3"),
		gate("peer", true,
			tollgatev1alpha1.Denial{Code: "OperatorNotUpgradeable", Message: "no"},
			tollgatev1alpha1.Denial{Code: "OperatorDegraded", Message: "waived", Overridden: true},
			tollgatev1alpha1.Denial{Code: "InstallPlanIncludesBlockedOperator", Message: "waits for etcd"}),
	}
}

func testScheme() *runtime.Scheme {
	s := apis.NewScheme()
	s.AddKnownTypeWithName(etcdGVK, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(etcdGVK.GroupVersion().WithKind("EtcdClusterList"), &unstructured.UnstructuredList{})
	return s
}

func fakeReader(objs []client.Object, funcs ...interceptor.Funcs) client.Reader {
	b := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objs...)
	if len(funcs) > 0 {
		b = b.WithInterceptorFuncs(funcs[0])
	}
	return b.Build()
}

func names(t *testing.T, list any) []string {
	t.Helper()
	var out []string
	for _, o := range list.([]any) {
		m := o.(map[string]any)["metadata"].(map[string]any)
		out = append(out, m["namespace"].(string)+"/"+m["name"].(string))
	}
	return out
}

func TestBuildGathersTheDocument(t *testing.T) {
	b := &input.Builder{Reader: fakeReader(world()), Now: func() time.Time { return now }}
	in, err := b.Build(context.Background(), key)
	require.NoError(t, err)
	require.NotNil(t, in)
	doc := in.Doc

	for _, k := range policies.InputV1 { // every key of the contract, of its type; no other
		require.Contains(t, doc, k.Name, "every key is present, missing objects as null")
		switch v := doc[k.Name]; k.Type {
		case policies.String:
			assert.IsType(t, "", v, k.Name)
		case policies.List:
			assert.IsType(t, []any{}, v, k.Name)
		case policies.Object:
			if v != nil {
				assert.IsType(t, map[string]any{}, v, k.Name)
			}
		}
	}
	assert.Len(t, doc, len(policies.InputV1))

	sub := doc["subscription"].(map[string]any)
	assert.Equal(t, "operators.coreos.com/v1alpha1", sub["apiVersion"], "TypeMeta filled from the scheme")
	assert.Equal(t, "Subscription", sub["kind"])
	assert.Equal(t, "ClusterServiceVersion", doc["installedCSV"].(map[string]any)["kind"])
	assert.Equal(t, "etcd.v2", doc["currentCSV"].(map[string]any)["metadata"].(map[string]any)["name"])
	assert.Equal(t, "install-b", doc["installPlan"].(map[string]any)["metadata"].(map[string]any)["name"])
	assert.Equal(t, []string{ns + "/install-b"}, names(t, doc["pendingInstallPlans"]), "complete and unrelated plans are left out")
	assert.Equal(t, []string{"olm/operatorhubio", ns + "/private"}, names(t, doc["catalogSources"]), "own and global namespace only, sorted")
	assert.Equal(t, "operatorhubio", doc["sourceCatalog"].(map[string]any)["metadata"].(map[string]any)["name"])
	assert.Equal(t, "operators.coreos.com/v2", doc["operatorCondition"].(map[string]any)["apiVersion"])
	assert.Equal(t, "b-group", doc["operatorGroup"].(map[string]any)["metadata"].(map[string]any)["name"], "the namespace's one group")
	assert.Equal(t, []string{ns + "/b-group"}, names(t, doc["operatorGroups"]))
	assert.Nil(t, doc["replacedCSV"], "the installed CSV is the one replaced")
	assert.Nil(t, doc["packageManifest"])
	assert.Equal(t, []string{ns + "/main", "team-a/side"}, names(t, doc["operands"]), "target namespaces only")
	assert.Equal(t, "UpgradeGate", doc["gate"].(map[string]any)["kind"])
	assert.Equal(t, "2024-05-01T12:00:00Z", doc["now"])
	assert.Equal(t, map[string]any{"globalCatalogNamespace": "olm", "defaultMode": "Enforce"}, doc["config"])

	assert.Equal(t, []any{}, doc["installPlanPeers"], "the peers' decisions are the approval package's to add")
	assert.Equal(t, []any{}, doc["unreadableOperandKinds"])

	assert.Equal(t, "etcd.v1", in.InstalledCSV.Name)
	assert.Equal(t, "etcd", in.Gate.Name)
	assert.Len(t, in.PendingInstallPlans, 1)
	assert.Equal(t, []schema.GroupVersionKind{etcdGVK}, in.OperandGVKs)
}

func TestReadLeavesTheDocumentToComplete(t *testing.T) {
	b := &input.Builder{Reader: fakeReader(world()), Now: func() time.Time { return now }}
	built, err := b.Build(context.Background(), key)
	require.NoError(t, err)
	read, err := b.Read(context.Background(), key)
	require.NoError(t, err)

	assert.Nil(t, read.Doc, "no document until Complete")
	assert.Equal(t, built.PendingInstallPlans, read.PendingInstallPlans, "the typed objects are read")
	assert.Equal(t, built.OperatorCondition, read.OperatorCondition)
	assert.Equal(t, built.Doc, read.Complete().Doc, "completed, the document Build gives")
	doc := read.Doc
	assert.Same(t, read, read.Complete())
	assert.Equal(t, fmt.Sprintf("%p", doc), fmt.Sprintf("%p", read.Doc), "built once")

	missing, err := (&input.Builder{Reader: fakeReader(nil)}).Read(context.Background(), key)
	require.NoError(t, err)
	assert.Nil(t, missing, "no Subscription, no document")
}

func TestBuildTurnsAbsenceIntoNull(t *testing.T) {
	tests := []struct {
		scenario string
		objects  []client.Object
		check    func(t *testing.T, doc map[string]any)
	}{{
		scenario: "a Subscription alone has null objects and empty lists",
		objects:  []client.Object{subscription("etcd", "etcd.v1", "etcd.v2")},
		check: func(t *testing.T, doc map[string]any) {
			for _, k := range []string{"installedCSV", "currentCSV", "installPlan", "sourceCatalog", "operatorCondition", "operatorGroup", "packageManifest", "gate"} {
				assert.Nil(t, doc[k], k)
			}
			for _, k := range []string{"pendingInstallPlans", "installPlanPeers", "catalogSources", "operands"} {
				assert.Equal(t, []any{}, doc[k], k)
			}
		},
	}, {
		scenario: "a CSV owning a kind the cluster does not serve has no operands",
		objects: []client.Object{
			subscription("etcd", "etcd.v1", "etcd.v1"),
			csv("etcd.v1", v1alpha1.CRDDescription{Name: "widgets.example.com", Version: "v1", Kind: "Widget"}),
		},
		check: func(t *testing.T, doc map[string]any) {
			assert.Equal(t, []any{}, doc["operands"])
			assert.NotNil(t, doc["installedCSV"])
		},
	}, {
		scenario: "an OperatorGroup targeting all namespaces sees operands everywhere",
		objects: func() []client.Object {
			group := &operatorsv1.OperatorGroup{ObjectMeta: meta(ns, "global")}
			group.Status.Namespaces = []string{""}
			return []client.Object{
				subscription("etcd", "etcd.v1", "etcd.v1"), group,
				csv("etcd.v1", v1alpha1.CRDDescription{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}),
				operand("team-b", "b"), operand("team-a", "a"),
			}
		}(),
		check: func(t *testing.T, doc map[string]any) {
			assert.Equal(t, []string{"team-a/a", "team-b/b"}, names(t, doc["operands"]))
		},
	}}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			in, err := (&input.Builder{Reader: fakeReader(tt.objects)}).Build(context.Background(), key)
			require.NoError(t, err)
			tt.check(t, in.Doc)
		})
	}
}

func TestBuildWithoutSubscription(t *testing.T) {
	in, err := (&input.Builder{Reader: fakeReader(nil)}).Build(context.Background(), key)
	assert.NoError(t, err)
	assert.Nil(t, in)
}

func TestBuildWrapsReadErrors(t *testing.T) {
	boom := errors.New("connection refused")
	r := fakeReader(world(), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*v1alpha1.ClusterServiceVersion); ok {
			return boom
		}
		return c.Get(ctx, k, obj, opts...)
	}})
	in, err := (&input.Builder{Reader: r}).Build(context.Background(), key)
	assert.Nil(t, in)
	assert.ErrorIs(t, err, boom)
	assert.ErrorContains(t, err, "get ClusterServiceVersion operators/etcd.v1")
}

// The CLI evaluates a snapshot, the controller its cache: both must see the same document.
func TestSnapshotAndClusterBuildTheSameDocument(t *testing.T) {
	objs := world()
	s := snapshot.New()
	for _, o := range objs {
		require.NoError(t, s.Add(o.DeepCopyObject().(client.Object)))
	}
	clock := func() time.Time { return now }
	fromCluster, err := (&input.Builder{Reader: fakeReader(objs), Now: clock}).Build(context.Background(), key)
	require.NoError(t, err)
	fromSnapshot, err := (&input.Builder{Reader: s, Now: clock}).Build(context.Background(), key)
	require.NoError(t, err)

	// The fake API server stamps resourceVersions; a snapshot keeps what it was given.
	ignoreRV := cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == `["resourceVersion"]`
	}, cmp.Ignore())
	assert.Empty(t, cmp.Diff(fromCluster.Doc, fromSnapshot.Doc, ignoreRV))
}

func TestManagedFieldsAreDropped(t *testing.T) {
	sub := subscription("etcd", "etcd.v1", "etcd.v2")
	sub.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "olm"}}
	s := snapshot.New()
	require.NoError(t, s.Add(sub))
	in, err := (&input.Builder{Reader: s}).Build(context.Background(), key)
	require.NoError(t, err)
	md := in.Doc["subscription"].(map[string]any)["metadata"].(map[string]any)
	assert.NotContains(t, md, "managedFields")
	assert.Equal(t, "etcd", md["name"])
}

func TestBuildBesideSeveralOperatorGroupsNamesNoneAndListsAll(t *testing.T) {
	objs := world()
	decoy := &operatorsv1.OperatorGroup{ObjectMeta: meta(ns, "a-decoy")}
	decoy.Status.Namespaces = []string{"elsewhere"}
	b := &input.Builder{Reader: fakeReader(append(objs, decoy)), Now: func() time.Time { return now }}
	in, err := b.Build(context.Background(), key)
	require.NoError(t, err)
	doc := in.Doc
	assert.Nil(t, doc["operatorGroup"], "OLM acts beside exactly one group: neither is the operator's")
	assert.Equal(t, []string{ns + "/a-decoy", ns + "/b-group"}, names(t, doc["operatorGroups"]))
	assert.Equal(t, []string{ns + "/main", "team-a/side"}, names(t, doc["operands"]),
		"the operands of every group's targets: the real target namespace is never left out")
	assert.Equal(t, []string{"elsewhere", ns, "team-a"}, in.OperandNamespaces)
}

func TestBuildReadsTheCSVAPlanReplacesForARecreatedSubscription(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		replaces func(p *v1alpha1.InstallPlan)
	}{{
		scenario: "from the plan's bundle lookup",
		replaces: func(p *v1alpha1.InstallPlan) {
			p.Status.BundleLookups = []v1alpha1.BundleLookup{{Identifier: "etcd.v2", Replaces: "etcd.v1"}}
		},
	}, {
		scenario: "from the CSV manifest of the plan's step",
		replaces: func(p *v1alpha1.InstallPlan) {
			p.Status.Plan = []*v1alpha1.Step{{Resolving: "etcd.v2", Resource: v1alpha1.StepResource{
				Kind: "ClusterServiceVersion", Name: "etcd.v2", Manifest: `{"kind":"ClusterServiceVersion","spec":{"replaces":"etcd.v1","install":{"strategy":"deployment"}}}`}}}
		},
	}} {
		t.Run(tc.scenario, func(t *testing.T) {
			objs := world()
			for _, o := range objs {
				switch o := o.(type) {
				case *v1alpha1.Subscription:
					if o.Name == "etcd" {
						o.Status.InstalledCSV = "" // deleted and created again
					}
				case *v1alpha1.InstallPlan:
					if o.Name == "install-b" {
						tc.replaces(o)
					}
				}
			}
			b := &input.Builder{Reader: fakeReader(objs), Now: func() time.Time { return now }}
			in, err := b.Build(context.Background(), key)
			require.NoError(t, err)
			doc := in.Doc
			assert.Nil(t, doc["installedCSV"])
			assert.Equal(t, "etcd.v1", doc["replacedCSV"].(map[string]any)["metadata"].(map[string]any)["name"])
			assert.Equal(t, "etcd.v1", doc["operatorCondition"].(map[string]any)["metadata"].(map[string]any)["name"],
				"the OperatorCondition of the CSV being replaced, as OLM checks it")
			assert.Equal(t, []string{ns + "/main", "team-a/side"}, names(t, doc["operands"]))
			for _, p := range doc["pendingInstallPlans"].([]any) {
				steps, _, _ := unstructured.NestedSlice(p.(map[string]any), "status", "plan")
				for _, step := range steps {
					assert.NotContains(t, step.(map[string]any)["resource"], "manifest", "the document carries no manifest")
				}
			}
		})
	}
}

func TestBuildWithoutAnInstalledCSVOrAReplacedOneIsAFirstInstall(t *testing.T) {
	objs := world()
	for _, o := range objs {
		if sub, ok := o.(*v1alpha1.Subscription); ok && sub.Name == "etcd" {
			sub.Status.InstalledCSV = ""
		}
	}
	b := &input.Builder{Reader: fakeReader(objs), Now: func() time.Time { return now }}
	in, err := b.Build(context.Background(), key)
	require.NoError(t, err)
	assert.Nil(t, in.Doc["replacedCSV"])
	assert.Nil(t, in.Doc["operatorCondition"])
	assert.Empty(t, in.Doc["operands"])
}

// BenchmarkReadAndBuild compares reading a Subscription's objects (what a gate that waits for
// OLM's next step needs) with building its input document as well.
func BenchmarkReadAndBuild(b *testing.B) {
	builder := &input.Builder{Reader: fakeReader(world()), Now: func() time.Time { return now }}
	for _, bb := range []struct {
		name string
		do   func(context.Context, types.NamespacedName) (*input.Document, error)
	}{{"read", builder.Read}, {"build", builder.Build}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bb.do(context.Background(), key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
