package rbac

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
)

const (
	wait = 20 * time.Second
	tick = 50 * time.Millisecond
)

// cluster is one test's namespace, where the test plays OLM's part (and the cluster admin's).
type cluster struct {
	t   *testing.T
	ctx context.Context
	ns  string
}

// newCluster creates a namespace with an OperatorGroup targeting it and a READY catalog.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	k := &cluster{t: t, ctx: ctx, ns: "rbac-" + rand.String(6)}
	k.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.ns}})
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: "og"}, Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{k.ns}}}
	k.create(og)
	now := metav1.Now()
	og.Status = operatorsv1.OperatorGroupStatus{Namespaces: []string{k.ns}, LastUpdated: &now}
	require.NoError(t, env.Client.Status().Update(ctx, og))
	cs := &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: "catalog"},
		Spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: "quay.io/example/catalog:latest", DisplayName: "catalog"}}
	k.create(cs)
	cs.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{Address: "catalog." + k.ns + ".svc:50051", LastObservedState: "READY", LastConnectTime: now}
	require.NoError(t, env.Client.Status().Update(ctx, cs))
	return k
}

func (k *cluster) create(obj client.Object) {
	k.t.Helper()
	require.NoError(k.t, env.Client.Create(k.ctx, obj), "create %T %s", obj, obj.GetName())
}

// operator is one installed operator. Its CSV owns <Pkg>Cluster in <pkg>.example.com, and
// whatever else the test adds.
type operator struct {
	k    *cluster
	name string
	sub  *v1alpha1.Subscription
}

func operandKind(pkg string) string      { return strings.ToUpper(pkg[:1]) + pkg[1:] + "Cluster" }
func operandGroup(pkg string) string     { return pkg + ".example.com" }
func operandPlural(pkg string) string    { return pkg + "clusters" }
func csvName(pkg, version string) string { return pkg + ".v" + version }

// serveOperandKind installs the CRD of pkg's operand kind, as OLM does for a CSV.
func (k *cluster) serveOperandKind(pkg string) {
	k.t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: operandPlural(pkg) + "." + operandGroup(pkg)},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: operandGroup(pkg), Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: operandPlural(pkg), Kind: operandKind(pkg), ListKind: operandKind(pkg) + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
	k.create(crd)
	require.Eventually(k.t, func() bool {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if env.Client.Get(k.ctx, client.ObjectKeyFromObject(crd), got) != nil {
			return false
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true
			}
		}
		return false
	}, wait, tick, "CRD %s not established", crd.Name)
}

// grantOperandRead plays the admin (or the operator's bundle) extending Tollgate's operand
// reader with pkg's operand kind, and kube-controller-manager aggregating it.
func (k *cluster) grantOperandRead(pkg string) {
	k.t.Helper()
	k.create(&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tollgate-read-" + operandPlural(pkg), Labels: map[string]string{controllers.OperandReaderLabel: "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{operandGroup(pkg)}, Resources: []string{operandPlural(pkg)}, Verbs: []string{"get", "list", "watch"}}},
	})
	k.aggregate("tollgate-operand-reader")
}

// aggregate plays kube-controller-manager's ClusterRole aggregation for the role name: its
// rules become those of every ClusterRole its selectors match.
func (k *cluster) aggregate(name string) {
	k.t.Helper()
	agg := &rbacv1.ClusterRole{}
	require.NoError(k.t, env.Client.Get(k.ctx, client.ObjectKey{Name: name}, agg))
	require.NotNil(k.t, agg.AggregationRule, "%s is an aggregated ClusterRole", name)
	var roles rbacv1.ClusterRoleList
	require.NoError(k.t, env.Client.List(k.ctx, &roles))
	agg.Rules = nil
	for _, s := range agg.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&s)
		require.NoError(k.t, err)
		for _, r := range roles.Items {
			if r.Name != name && selector.Matches(labels.Set(r.Labels)) {
				agg.Rules = append(agg.Rules, r.Rules...)
			}
		}
	}
	require.NoError(k.t, env.Client.Update(k.ctx, agg))
}

// install plays OLM installing pkg at version with a Manual Subscription; the CSV owns pkg's
// operand kind and also the kinds given.
func (k *cluster) install(pkg, version string, alsoOwned ...v1alpha1.CRDDescription) *operator {
	k.t.Helper()
	owned := append([]v1alpha1.CRDDescription{{Name: operandPlural(pkg) + "." + operandGroup(pkg), Version: "v1", Kind: operandKind(pkg)}}, alsoOwned...)
	csv := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: csvName(pkg, version)},
		Spec: v1alpha1.ClusterServiceVersionSpec{DisplayName: pkg, Version: version,
			InstallStrategy:           v1alpha1.NamedInstallStrategy{StrategyName: "deployment", StrategySpec: &apiextensionsv1.JSON{Raw: []byte(`{"deployments":[]}`)}},
			CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{Owned: owned}}}
	k.create(csv)
	csv.Status = v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseSucceeded, Reason: "InstallSucceeded", Message: "install strategy completed"}
	require.NoError(k.t, env.Client.Status().Update(k.ctx, csv))
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: pkg},
		Spec: &v1alpha1.SubscriptionSpec{CatalogSource: "catalog", CatalogSourceNamespace: k.ns, Package: pkg, Channel: "stable", InstallPlanApproval: v1alpha1.ApprovalManual}}
	k.create(sub)
	k.create(&operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: csv.Name}})
	o := &operator{k: k, name: pkg, sub: sub}
	o.setStatus(func(s *v1alpha1.SubscriptionStatus) {
		s.InstalledCSV, s.CurrentCSV, s.State = csv.Name, csv.Name, v1alpha1.SubscriptionStateAtLatest
	})
	return o
}

func (o *operator) setStatus(change func(*v1alpha1.SubscriptionStatus)) {
	o.k.t.Helper()
	require.NoError(o.k.t, env.Client.Get(o.k.ctx, client.ObjectKeyFromObject(o.sub), o.sub))
	change(&o.sub.Status)
	o.sub.Status.LastUpdated = metav1.Now()
	require.NoError(o.k.t, env.Client.Status().Update(o.k.ctx, o.sub))
}

// offerUpgrade plays OLM resolving version: currentCSV moves, a Manual plan waits for approval.
func (o *operator) offerUpgrade(version string) *v1alpha1.InstallPlan {
	o.k.t.Helper()
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: o.k.ns, Name: "install-" + o.name},
		Spec: v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{csvName(o.name, version)}, Approval: v1alpha1.ApprovalManual, Generation: 1}}
	o.k.create(plan)
	plan.Status = &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval, CatalogSources: []string{"catalog"}}
	require.NoError(o.k.t, env.Client.Status().Update(o.k.ctx, plan))
	o.setStatus(func(s *v1alpha1.SubscriptionStatus) {
		s.CurrentCSV, s.State = csvName(o.name, version), v1alpha1.SubscriptionStateUpgradePending
		s.InstallPlanRef = &corev1.ObjectReference{Kind: "InstallPlan", Namespace: o.k.ns, Name: plan.Name, APIVersion: "operators.coreos.com/v1alpha1"}
	})
	return plan
}

// report plays the operator writing Upgradeable into its OperatorCondition.
func (o *operator) report(status metav1.ConditionStatus, message string) {
	o.k.t.Helper()
	oc := &operatorsv2.OperatorCondition{}
	require.NoError(o.k.t, env.Client.Get(o.k.ctx, client.ObjectKey{Namespace: o.k.ns, Name: o.sub.Status.InstalledCSV}, oc))
	cond := metav1.Condition{Type: "Upgradeable", Status: status, Reason: "Reported", Message: message, ObservedGeneration: oc.Generation}
	meta.SetStatusCondition(&oc.Spec.Conditions, cond)
	require.NoError(o.k.t, env.Client.Update(o.k.ctx, oc))
	cond.ObservedGeneration = oc.Generation
	meta.SetStatusCondition(&oc.Status.Conditions, cond)
	require.NoError(o.k.t, env.Client.Status().Update(o.k.ctx, oc))
}

// operand creates an instance of the operator's operand kind, healthy and idle.
func (o *operator) operand(name string) {
	o.k.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(operandGroup(o.name) + "/v1")
	u.SetKind(operandKind(o.name))
	u.SetNamespace(o.k.ns)
	u.SetName(name)
	o.k.create(u)
	var conds []any
	for typ, status := range map[string]metav1.ConditionStatus{"Available": "True", "Progressing": "False", "Degraded": "False"} {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&metav1.Condition{Type: typ, Status: status, Reason: "InstallSucceeded", LastTransitionTime: metav1.Now()})
		require.NoError(o.k.t, err)
		conds = append(conds, m)
	}
	require.NoError(o.k.t, unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"))
	require.NoError(o.k.t, env.Client.Status().Update(o.k.ctx, u))
}

// gate waits for the operator's UpgradeGate to satisfy ok and returns it.
func (o *operator) gate(what string, ok func(*tollgatev1alpha1.UpgradeGate) bool) *tollgatev1alpha1.UpgradeGate {
	o.k.t.Helper()
	gate := &tollgatev1alpha1.UpgradeGate{}
	require.Eventually(o.k.t, func() bool {
		return env.Client.Get(o.k.ctx, client.ObjectKeyFromObject(o.sub), gate) == nil && gate.Status.Decision.EvaluatedAt != nil && ok(gate)
	}, wait, tick, "gate %s/%s: %s; last status: %+v, health %+v", o.k.ns, o.name, what, gate.Status.Decision, gate.Status.Health)
	return gate
}

// planApproved says whether plan has been approved.
func (k *cluster) planApproved(plan *v1alpha1.InstallPlan) bool {
	got := &v1alpha1.InstallPlan{}
	return env.Client.Get(k.ctx, client.ObjectKeyFromObject(plan), got) == nil && got.Spec.Approved
}
