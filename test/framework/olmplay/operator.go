package olmplay

import (
	"fmt"
	"strings"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// Operator is one operator subscribed to in a Cluster: its Subscription, and once installed its
// CSV and OperatorCondition. Its CSV owns <Pkg>Cluster in <pkg>.example.com, and whatever else
// the test adds.
type Operator struct {
	K    *Cluster
	Name string
	Sub  *v1alpha1.Subscription
}

// OperandKind is the kind of pkg's operand, <Pkg>Cluster.
func OperandKind(pkg string) string { return strings.ToUpper(pkg[:1]) + pkg[1:] + "Cluster" }

// OperandGroup is the API group of pkg's operand kind.
func OperandGroup(pkg string) string { return pkg + ".example.com" }

// OperandPlural is the resource name of pkg's operand kind.
func OperandPlural(pkg string) string { return pkg + "clusters" }

// CSVName is the name of pkg's CSV at version.
func CSVName(pkg, version string) string { return pkg + ".v" + version }

// Subscribe creates a Subscription to pkg from the namespace's catalog, with no status yet.
func (k *Cluster) Subscribe(pkg string, approval v1alpha1.Approval) *Operator {
	k.T.Helper()
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: k.NS, Name: pkg},
		Spec: &v1alpha1.SubscriptionSpec{CatalogSource: "catalog", CatalogSourceNamespace: k.NS, Package: pkg, Channel: "stable", InstallPlanApproval: approval}}
	k.Create(sub)
	return &Operator{K: k, Name: pkg, Sub: sub}
}

// Install plays OLM installing pkg at version: a Subscription whose installed CSV is
// Succeeded, and the CSV's OperatorCondition (no conditions yet). The CSV owns pkg's operand
// kind and also the kinds given.
func (k *Cluster) Install(pkg, version string, approval v1alpha1.Approval, alsoOwned ...v1alpha1.CRDDescription) *Operator {
	k.T.Helper()
	csv := k.CSV(pkg, version, v1alpha1.CSVPhaseSucceeded, alsoOwned...)
	o := k.Subscribe(pkg, approval)
	o.SetStatus(func(s *v1alpha1.SubscriptionStatus) {
		s.InstalledCSV, s.CurrentCSV, s.State = csv.Name, csv.Name, v1alpha1.SubscriptionStateAtLatest
	})
	k.Create(&operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: k.NS, Name: csv.Name}})
	return o
}

// CSV creates a CSV in the given phase. It owns pkg's operand kind and also the kinds given.
func (k *Cluster) CSV(pkg, version string, phase v1alpha1.ClusterServiceVersionPhase, alsoOwned ...v1alpha1.CRDDescription) *v1alpha1.ClusterServiceVersion {
	k.T.Helper()
	owned := append([]v1alpha1.CRDDescription{{Name: OperandPlural(pkg) + "." + OperandGroup(pkg), Version: "v1", Kind: OperandKind(pkg)}}, alsoOwned...)
	csv := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: k.NS, Name: CSVName(pkg, version)},
		Spec: v1alpha1.ClusterServiceVersionSpec{DisplayName: pkg, Version: version,
			InstallStrategy:           v1alpha1.NamedInstallStrategy{StrategyName: "deployment", StrategySpec: &apiextensionsv1.JSON{Raw: []byte(`{"deployments":[]}`)}},
			CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{Owned: owned}}}
	k.Create(csv)
	csv.Status = v1alpha1.ClusterServiceVersionStatus{Phase: phase, Reason: "InstallSucceeded", Message: "install strategy completed"}
	require.NoError(k.T, k.Client.Status().Update(k.Ctx, csv))
	return csv
}

// OfferUpgrade plays OLM resolving a new version: the Subscription's currentCSV moves and a
// Manual InstallPlan waits in RequiresApproval (the new CSV does not exist yet).
func (o *Operator) OfferUpgrade(version string) *v1alpha1.InstallPlan {
	o.K.T.Helper()
	return o.K.Plan("install-"+o.Name+"-"+strings.ReplaceAll(version, ".", "-"), []*Operator{o}, version)
}

// Plan creates one InstallPlan for several operators at once, as OLM bundles a namespace's
// pending installs.
func (k *Cluster) Plan(name string, ops []*Operator, version string) *v1alpha1.InstallPlan {
	k.T.Helper()
	var csvs []string
	for _, o := range ops {
		csvs = append(csvs, CSVName(o.Name, version))
	}
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: k.NS, Name: name},
		Spec: v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: csvs, Approval: v1alpha1.ApprovalManual, Generation: 1}}
	k.Create(plan)
	plan.Status = &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval, CatalogSources: []string{"catalog"}}
	require.NoError(k.T, k.Client.Status().Update(k.Ctx, plan))
	for _, o := range ops {
		o.SetStatus(func(s *v1alpha1.SubscriptionStatus) {
			s.CurrentCSV = CSVName(o.Name, version)
			s.State = v1alpha1.SubscriptionStateUpgradePending
			s.InstallPlanRef = &corev1.ObjectReference{Kind: "InstallPlan", Namespace: k.NS, Name: plan.Name, APIVersion: "operators.coreos.com/v1alpha1"}
		})
	}
	return plan
}

// SetStatus changes the Subscription's status as OLM would, and stamps it.
func (o *Operator) SetStatus(change func(*v1alpha1.SubscriptionStatus)) {
	o.K.T.Helper()
	require.NoError(o.K.T, o.K.Client.Get(o.K.Ctx, client.ObjectKeyFromObject(o.Sub), o.Sub))
	change(&o.Sub.Status)
	o.Sub.Status.LastUpdated = metav1.Now()
	require.NoError(o.K.T, o.K.Client.Status().Update(o.K.Ctx, o.Sub))
}

// Report plays the operator writing a condition into its OperatorCondition (OLM copies
// spec.conditions to status; the test writes both).
func (o *Operator) Report(typ string, status metav1.ConditionStatus, message string) {
	o.K.T.Helper()
	oc := o.operatorCondition()
	cond := metav1.Condition{Type: typ, Status: status, Reason: "Reported", Message: message, ObservedGeneration: oc.Generation}
	meta.SetStatusCondition(&oc.Spec.Conditions, cond)
	require.NoError(o.K.T, o.K.Client.Update(o.K.Ctx, oc))
	cond.ObservedGeneration = oc.Generation
	meta.SetStatusCondition(&oc.Status.Conditions, cond)
	require.NoError(o.K.T, o.K.Client.Status().Update(o.K.Ctx, oc))
}

// Override sets an OperatorCondition spec override, as an admin does with OLM alone.
func (o *Operator) Override(typ string, status metav1.ConditionStatus) {
	o.K.T.Helper()
	oc := o.operatorCondition()
	oc.Spec.Overrides = append(oc.Spec.Overrides, operatorsv1.ConditionOverride{Type: typ, Status: status, Reason: "AdminOverride", Message: "admin says so"})
	require.NoError(o.K.T, o.K.Client.Update(o.K.Ctx, oc))
}

// operatorCondition reads the OperatorCondition of the installed CSV.
func (o *Operator) operatorCondition() *operatorsv2.OperatorCondition {
	o.K.T.Helper()
	oc := &operatorsv2.OperatorCondition{}
	require.NoError(o.K.T, o.K.Client.Get(o.K.Ctx, client.ObjectKey{Namespace: o.K.NS, Name: o.Sub.Status.InstalledCSV}, oc))
	return oc
}

// Gate waits for the operator's UpgradeGate to satisfy ok and returns it.
func (o *Operator) Gate(what string, ok func(*tollgatev1alpha1.UpgradeGate) bool) *tollgatev1alpha1.UpgradeGate {
	o.K.T.Helper()
	gate := &tollgatev1alpha1.UpgradeGate{}
	require.Eventually(o.K.T, func() bool {
		return o.K.Client.Get(o.K.Ctx, client.ObjectKeyFromObject(o.Sub), gate) == nil && gate.Status.Decision.EvaluatedAt != nil && ok(gate)
	}, Wait, Tick, "gate %s/%s: %s; %s", o.K.NS, o.Name, what, lastStatus{gate})
	return gate
}

// lastStatus prints the gate's status when the message is formatted, after the polls (the
// arguments of a failure message are evaluated before them).
type lastStatus struct{ gate *tollgatev1alpha1.UpgradeGate }

func (l lastStatus) String() string {
	return fmt.Sprintf("last status: %+v, health %+v", l.gate.Status.Decision, l.gate.Status.Health)
}

// BlockedBy waits until the gate denies with code.
func (o *Operator) BlockedBy(code string) *tollgatev1alpha1.UpgradeGate {
	o.K.T.Helper()
	return o.Gate("blocked by "+code, func(g *tollgatev1alpha1.UpgradeGate) bool {
		return !g.Status.Decision.Allowed && HasDenial(g, code, false)
	})
}

// HasDenial says whether the gate's decision has a denial with code, overridden or not.
func HasDenial(g *tollgatev1alpha1.UpgradeGate, code string, overridden bool) bool {
	for _, d := range g.Status.Decision.Denials {
		if d.Code == code && d.Overridden == overridden {
			return true
		}
	}
	return false
}
