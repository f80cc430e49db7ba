package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

const (
	// wait bounds every poll; Tollgate reacts in well under a second.
	wait = 20 * time.Second
	tick = 50 * time.Millisecond
)

// cluster is one test's namespace, where the test plays OLM's part.
type cluster struct {
	t   *testing.T
	ctx context.Context
	c   client.Client
	ns  string
}

// newCluster creates a namespace with an OperatorGroup and a READY catalog.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	k := &cluster{t: t, ctx: ctx, c: env.Client, ns: "e2e-" + rand.String(6)}
	k.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.ns}})
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: "og"}, Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{k.ns}}}
	k.create(og)
	og.Status = operatorsv1.OperatorGroupStatus{Namespaces: []string{k.ns}, LastUpdated: ptrTime(time.Now())}
	require.NoError(t, k.c.Status().Update(ctx, og))
	k.catalog(k.ns, "catalog", "READY")
	return k
}

func ptrTime(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

func (k *cluster) create(obj client.Object) {
	k.t.Helper()
	require.NoError(k.t, k.c.Create(k.ctx, obj), "create %T %s", obj, obj.GetName())
}

// catalog creates (or updates) a grpc CatalogSource with the given connection state.
func (k *cluster) catalog(ns, name, state string) *v1alpha1.CatalogSource {
	k.t.Helper()
	cs := &v1alpha1.CatalogSource{}
	err := k.c.Get(k.ctx, client.ObjectKey{Namespace: ns, Name: name}, cs)
	if err != nil {
		cs = &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: "quay.io/example/catalog:latest", DisplayName: name}}
		k.create(cs)
	}
	cs.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{Address: name + "." + ns + ".svc:50051", LastObservedState: state, LastConnectTime: metav1.Now()}
	require.NoError(k.t, k.c.Status().Update(k.ctx, cs))
	return cs
}

// operator is one installed operator: its Subscription, CSV, OperatorCondition.
type operator struct {
	k    *cluster
	name string
	sub  *v1alpha1.Subscription
}

func csvName(pkg, version string) string { return pkg + ".v" + version }

// install plays OLM installing pkg at version: a Manual Subscription whose installed CSV
// is Succeeded, and the CSV's OperatorCondition (no conditions yet).
func (k *cluster) install(pkg, version string, approval v1alpha1.Approval) *operator {
	k.t.Helper()
	csv := k.csv(pkg, version, v1alpha1.CSVPhaseSucceeded)
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: pkg},
		Spec: &v1alpha1.SubscriptionSpec{CatalogSource: "catalog", CatalogSourceNamespace: k.ns, Package: pkg, Channel: "stable", InstallPlanApproval: approval}}
	k.create(sub)
	sub.Status = v1alpha1.SubscriptionStatus{InstalledCSV: csv.Name, CurrentCSV: csv.Name, State: v1alpha1.SubscriptionStateAtLatest, LastUpdated: metav1.Now()}
	require.NoError(k.t, k.c.Status().Update(k.ctx, sub))
	k.create(&operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: csv.Name}})
	return &operator{k: k, name: pkg, sub: sub}
}

// csv creates a CSV in the given phase. It owns one CRD kind, <Pkg>Cluster in <pkg>.example.com.
func (k *cluster) csv(pkg, version string, phase v1alpha1.ClusterServiceVersionPhase) *v1alpha1.ClusterServiceVersion {
	k.t.Helper()
	csv := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: csvName(pkg, version)},
		Spec: v1alpha1.ClusterServiceVersionSpec{DisplayName: pkg, Version: version,
			InstallStrategy: v1alpha1.NamedInstallStrategy{StrategyName: "deployment", StrategySpec: &apiextensionsv1.JSON{Raw: []byte(`{"deployments":[]}`)}},
			CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{Owned: []v1alpha1.CRDDescription{
				{Name: pkg + "clusters." + pkg + ".example.com", Version: "v1", Kind: operandKind(pkg)}}}}}
	k.create(csv)
	csv.Status = v1alpha1.ClusterServiceVersionStatus{Phase: phase, Reason: "InstallSucceeded", Message: "install strategy completed"}
	require.NoError(k.t, k.c.Status().Update(k.ctx, csv))
	return csv
}

func operandKind(pkg string) string { return strings.ToUpper(pkg[:1]) + pkg[1:] + "Cluster" }

// offerUpgrade plays OLM resolving a new version: the Subscription's currentCSV moves and a
// Manual InstallPlan waits in RequiresApproval (the new CSV does not exist yet).
func (o *operator) offerUpgrade(version string) *v1alpha1.InstallPlan {
	o.k.t.Helper()
	return o.k.plan("install-"+o.name+"-"+strings.ReplaceAll(version, ".", "-"), []*operator{o}, version)
}

// plan creates one InstallPlan for several operators at once, as OLM bundles a namespace's
// pending installs.
func (k *cluster) plan(name string, ops []*operator, version string) *v1alpha1.InstallPlan {
	k.t.Helper()
	var csvs []string
	for _, o := range ops {
		csvs = append(csvs, csvName(o.name, version))
	}
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: name},
		Spec: v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: csvs, Approval: v1alpha1.ApprovalManual, Generation: 1}}
	k.create(plan)
	plan.Status = &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval, CatalogSources: []string{"catalog"}}
	require.NoError(k.t, k.c.Status().Update(k.ctx, plan))
	for _, o := range ops {
		o.setStatus(func(s *v1alpha1.SubscriptionStatus) {
			s.CurrentCSV = csvName(o.name, version)
			s.State = v1alpha1.SubscriptionStateUpgradePending
			s.InstallPlanRef = &corev1.ObjectReference{Kind: "InstallPlan", Namespace: k.ns, Name: plan.Name, APIVersion: "operators.coreos.com/v1alpha1"}
		})
	}
	return plan
}

func (o *operator) setStatus(change func(*v1alpha1.SubscriptionStatus)) {
	o.k.t.Helper()
	require.NoError(o.k.t, o.k.c.Get(o.k.ctx, client.ObjectKeyFromObject(o.sub), o.sub))
	change(&o.sub.Status)
	o.sub.Status.LastUpdated = metav1.Now()
	require.NoError(o.k.t, o.k.c.Status().Update(o.k.ctx, o.sub))
}

// report plays the operator writing a condition into its OperatorCondition (OLM copies
// spec.conditions to status; the test writes both).
func (o *operator) report(typ string, status metav1.ConditionStatus, message string) {
	o.k.t.Helper()
	oc := &operatorsv2.OperatorCondition{}
	require.NoError(o.k.t, o.k.c.Get(o.k.ctx, client.ObjectKey{Namespace: o.k.ns, Name: o.sub.Status.InstalledCSV}, oc))
	cond := metav1.Condition{Type: typ, Status: status, Reason: "Reported", Message: message, ObservedGeneration: oc.Generation}
	meta.SetStatusCondition(&oc.Spec.Conditions, cond)
	require.NoError(o.k.t, o.k.c.Update(o.k.ctx, oc))
	cond.ObservedGeneration = oc.Generation
	meta.SetStatusCondition(&oc.Status.Conditions, cond)
	require.NoError(o.k.t, o.k.c.Status().Update(o.k.ctx, oc))
}

// override sets an OperatorCondition spec override, as an admin does with OLM alone.
func (o *operator) override(typ string, status metav1.ConditionStatus) {
	o.k.t.Helper()
	oc := &operatorsv2.OperatorCondition{}
	require.NoError(o.k.t, o.k.c.Get(o.k.ctx, client.ObjectKey{Namespace: o.k.ns, Name: o.sub.Status.InstalledCSV}, oc))
	oc.Spec.Overrides = append(oc.Spec.Overrides, operatorsv1.ConditionOverride{Type: typ, Status: status, Reason: "AdminOverride", Message: "admin says so"})
	require.NoError(o.k.t, o.k.c.Update(o.k.ctx, oc))
}

// gate waits for the operator's UpgradeGate to satisfy ok and returns it.
func (o *operator) gate(what string, ok func(*tollgatev1alpha1.UpgradeGate) bool) *tollgatev1alpha1.UpgradeGate {
	o.k.t.Helper()
	gate := &tollgatev1alpha1.UpgradeGate{}
	require.Eventually(o.k.t, func() bool {
		return o.k.c.Get(o.k.ctx, client.ObjectKeyFromObject(o.sub), gate) == nil && gate.Status.Decision.EvaluatedAt != nil && ok(gate)
	}, wait, tick, "gate %s/%s: %s; last status: %+v", o.k.ns, o.name, what, gate.Status.Decision)
	return gate
}

// blockedBy waits until the gate denies with code.
func (o *operator) blockedBy(code string) *tollgatev1alpha1.UpgradeGate {
	o.k.t.Helper()
	return o.gate("blocked by "+code, func(g *tollgatev1alpha1.UpgradeGate) bool {
		return !g.Status.Decision.Allowed && hasDenial(g, code, false)
	})
}

func hasDenial(g *tollgatev1alpha1.UpgradeGate, code string, overridden bool) bool {
	for _, d := range g.Status.Decision.Denials {
		if d.Code == code && d.Overridden == overridden {
			return true
		}
	}
	return false
}

// approved waits for the plan's approval and returns how long it took from now.
func (k *cluster) approved(plan *v1alpha1.InstallPlan) time.Duration {
	k.t.Helper()
	start := time.Now()
	require.Eventually(k.t, func() bool {
		return k.c.Get(k.ctx, client.ObjectKeyFromObject(plan), plan) == nil && plan.Spec.Approved
	}, wait, 5*time.Millisecond, "install plan %s was not approved", plan.Name)
	return time.Since(start)
}

// stillUnapproved checks that the plan stays unapproved over a settle period in which the
// controller has had every chance to act (its gate has already been evaluated).
func (k *cluster) stillUnapproved(plan *v1alpha1.InstallPlan) {
	k.t.Helper()
	require.Never(k.t, func() bool {
		got := &v1alpha1.InstallPlan{}
		return k.c.Get(k.ctx, client.ObjectKeyFromObject(plan), got) == nil && got.Spec.Approved
	}, time.Second, tick, "install plan %s must not be approved", plan.Name)
}

// operand creates an instance of the operator's CRD with the given conditions.
func (o *operator) operand(name string, conds ...metav1.Condition) *unstructured.Unstructured {
	o.k.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(o.name + ".example.com/v1")
	u.SetKind(operandKind(o.name))
	u.SetNamespace(o.k.ns)
	u.SetName(name)
	o.k.create(u)
	o.setOperandConditions(u, conds...)
	return u
}

func (o *operator) setOperandConditions(u *unstructured.Unstructured, conds ...metav1.Condition) {
	o.k.t.Helper()
	var list []any
	for _, c := range conds {
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = metav1.Now()
		}
		m, err := runtimeToMap(c)
		require.NoError(o.k.t, err)
		list = append(list, m)
	}
	require.NoError(o.k.t, o.k.c.Get(o.k.ctx, client.ObjectKeyFromObject(u), u))
	require.NoError(o.k.t, unstructured.SetNestedSlice(u.Object, list, "status", "conditions"))
	require.NoError(o.k.t, o.k.c.Status().Update(o.k.ctx, u))
}

func cond(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: typ + " is " + string(status)}
}

func runtimeToMap(c metav1.Condition) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
}

// installCRD serves the operator's operand kind, as OLM does when it installs a CSV.
func (k *cluster) installCRD(pkg string) {
	k.t.Helper()
	group := pkg + ".example.com"
	plural := pkg + "clusters"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: operandKind(pkg), ListKind: operandKind(pkg) + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
	if err := k.c.Create(k.ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(k.t, err)
	}
	require.Eventually(k.t, func() bool {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if k.c.Get(k.ctx, client.ObjectKeyFromObject(crd), got) != nil {
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
