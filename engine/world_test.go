package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	packagesv1 "github.com/tollgate-dev/tollgate/apis/packages/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

// The scenario tests build a cluster state from typed objects, gather it exactly as the
// controller does (through a Snapshot) and evaluate the embedded policies on the document.

const ns = "operators"

var (
	now      = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	earlier  = metav1.NewTime(now.Add(-time.Hour))
	earliest = metav1.NewTime(now.Add(-2 * time.Hour))
)

// world is one Subscription and everything around it. A nil field is an absent object.
type world struct {
	sub       *v1alpha1.Subscription
	installed *v1alpha1.ClusterServiceVersion
	current   *v1alpha1.ClusterServiceVersion
	plan      *v1alpha1.InstallPlan
	catalogs  []*v1alpha1.CatalogSource
	opCond    *operatorsv2.OperatorCondition
	group     *operatorsv1.OperatorGroup
	pkg       *packagesv1.PackageManifest
	operands  []*unstructured.Unstructured
	gate      *tollgatev1alpha1.UpgradeGate
	extra     []client.Object
}

func objMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name, Generation: 1}
}

// upgradeWaiting is the common starting point: etcd.v1 is installed and healthy, OLM has
// resolved etcd.v2 into a Manual InstallPlan that awaits approval, the source catalog is READY,
// the operator says Upgradeable=True and its two EtcdClusters are Available and idle.
func upgradeWaiting() *world {
	sub := &v1alpha1.Subscription{
		ObjectMeta: objMeta(ns, "etcd"),
		Spec: &v1alpha1.SubscriptionSpec{
			CatalogSource: "operatorhubio", CatalogSourceNamespace: "olm", Package: "etcd",
			Channel: "stable", InstallPlanApproval: v1alpha1.ApprovalManual,
		},
		Status: v1alpha1.SubscriptionStatus{
			InstalledCSV:   "etcd.v1",
			CurrentCSV:     "etcd.v2",
			State:          "UpgradePending",
			InstallPlanRef: &corev1.ObjectReference{Namespace: ns, Name: "install-etcd-v2", Kind: "InstallPlan", APIVersion: "operators.coreos.com/v1alpha1"},
		},
	}
	return &world{
		sub:       sub,
		installed: csv("etcd.v1", v1alpha1.CSVPhaseSucceeded),
		current:   csv("etcd.v2", v1alpha1.CSVPhaseNone),
		plan:      installPlan("install-etcd-v2", v1alpha1.InstallPlanPhaseRequiresApproval, "etcd.v2"),
		catalogs:  []*v1alpha1.CatalogSource{imageCatalog("olm", "operatorhubio", "READY")},
		opCond:    operatorCondition("etcd.v1", metav1.Condition{Type: "Upgradeable", Status: metav1.ConditionTrue, Reason: "Ready", Message: "ready", ObservedGeneration: 1, LastTransitionTime: earlier}),
		group:     operatorGroup(ns),
		pkg:       packageManifest("stable", "etcd.v2"),
		operands: []*unstructured.Unstructured{
			etcdCluster("main", cond("Available", "True", "InstallSucceeded", earliest), cond("Progressing", "False", "InstallSucceeded", earliest), cond("Degraded", "False", "InstallSucceeded", earliest)),
			etcdCluster("side", cond("Available", "True", "InstallSucceeded", earliest), cond("Progressing", "False", "InstallSucceeded", earliest), cond("Degraded", "False", "InstallSucceeded", earliest)),
		},
		gate: &tollgatev1alpha1.UpgradeGate{ObjectMeta: objMeta(ns, "etcd")},
	}
}

// atLatest is etcd.v2 installed, Succeeded and the channel head, with no plan pending.
func atLatest() *world {
	w := upgradeWaiting()
	w.sub.Status.InstalledCSV = "etcd.v2"
	w.sub.Status.State = "AtLatestKnown"
	w.sub.Status.InstallPlanRef.Name = "install-etcd-v2"
	w.installed = csv("etcd.v2", v1alpha1.CSVPhaseSucceeded)
	w.current = nil
	w.plan.Status.Phase = v1alpha1.InstallPlanPhaseComplete
	w.plan.Spec.Approved = true
	w.opCond.Name = "etcd.v2"
	return w
}

func csv(name string, phase v1alpha1.ClusterServiceVersionPhase) *v1alpha1.ClusterServiceVersion {
	c := &v1alpha1.ClusterServiceVersion{ObjectMeta: objMeta(ns, name)}
	c.Spec.DisplayName = "etcd"
	c.Spec.Version = name[len("etcd.v"):] + ".0.0"
	c.Spec.CustomResourceDefinitions.Owned = []v1alpha1.CRDDescription{{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}}
	c.Status.Phase = phase
	if phase != v1alpha1.CSVPhaseNone {
		c.Status.Reason = "InstallSucceeded"
	}
	return c
}

func installPlan(name string, phase v1alpha1.InstallPlanPhase, csvs ...string) *v1alpha1.InstallPlan {
	return &v1alpha1.InstallPlan{
		ObjectMeta: objMeta(ns, name),
		Spec:       v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: csvs, Approval: v1alpha1.ApprovalManual},
		Status:     &v1alpha1.InstallPlanStatus{Phase: phase, CatalogSources: []string{"operatorhubio"}},
	}
}

func imageCatalog(namespace, name, state string) *v1alpha1.CatalogSource {
	c := &v1alpha1.CatalogSource{ObjectMeta: objMeta(namespace, name)}
	c.Spec.CatalogImageSource = &v1alpha1.CatalogImageSource{CatalogImage: "quay.io/operatorhubio/catalog:latest"}
	if state != "" {
		c.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{LastObservedState: state, LastConnectTime: earlier}
	}
	return c
}

func operatorCondition(name string, conds ...metav1.Condition) *operatorsv2.OperatorCondition {
	oc := &operatorsv2.OperatorCondition{ObjectMeta: objMeta(ns, name)}
	oc.Spec.Conditions = conds
	oc.Status.Conditions = conds
	return oc
}

func operatorGroup(targets ...string) *operatorsv1.OperatorGroup {
	g := &operatorsv1.OperatorGroup{ObjectMeta: objMeta(ns, "operators")}
	g.Spec.TargetNamespaces = targets
	g.Status.Namespaces = targets
	return g
}

func packageManifest(channel, head string) *packagesv1.PackageManifest {
	return &packagesv1.PackageManifest{
		ObjectMeta: objMeta(ns, "etcd"),
		Status: packagesv1.PackageManifestStatus{
			CatalogSource: "operatorhubio", CatalogSourceNamespace: "olm", PackageName: "etcd",
			Channels: []packagesv1.PackageChannel{{Name: channel, CurrentCSV: head}}, DefaultChannel: channel,
		},
	}
}

type operandCondition struct {
	Type, Status, Reason string
	At                   metav1.Time
}

func cond(t, status, reason string, at metav1.Time) operandCondition {
	return operandCondition{Type: t, Status: status, Reason: reason, At: at}
}

func etcdCluster(name string, conds ...operandCondition) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd.database.coreos.com/v1beta2",
		"kind":       "EtcdCluster",
		"metadata":   map[string]any{"namespace": ns, "name": name, "generation": int64(1)},
		"spec":       map[string]any{"size": int64(3)},
	}}
	if conds != nil {
		list := []any{}
		for _, c := range conds {
			m := map[string]any{"type": c.Type, "status": c.Status, "lastTransitionTime": c.At.UTC().Format(time.RFC3339),
				"message": fmt.Sprintf("%s is %s=%s", name, c.Type, c.Status)}
			if c.Reason != "" {
				m["reason"] = c.Reason
			}
			list = append(list, m)
		}
		u.Object["status"] = map[string]any{"conditions": list}
	}
	return u
}

// health sets every operand's conditions to the same Available/Progressing/Degraded statuses.
func (w *world) health(available, progressing, degraded string) {
	for _, op := range w.operands {
		name := op.GetName()
		*op = *etcdCluster(name, cond("Available", available, "HealInProgress", earlier),
			cond("Progressing", progressing, "HealInProgress", earlier), cond("Degraded", degraded, "HealInProgress", earlier))
	}
}

func (w *world) objects() []client.Object {
	var objs []client.Object
	add := func(o client.Object) {
		if o != nil && !isNil(o) {
			objs = append(objs, o)
		}
	}
	add(w.sub)
	add(w.installed)
	add(w.current)
	add(w.plan)
	for _, c := range w.catalogs {
		add(c)
	}
	add(w.opCond)
	add(w.group)
	add(w.pkg)
	for _, o := range w.operands {
		add(o)
	}
	add(w.gate)
	objs = append(objs, w.extra...)
	return objs
}

func isNil(o client.Object) bool {
	switch v := o.(type) {
	case *v1alpha1.Subscription:
		return v == nil
	case *v1alpha1.ClusterServiceVersion:
		return v == nil
	case *v1alpha1.InstallPlan:
		return v == nil
	case *v1alpha1.CatalogSource:
		return v == nil
	case *operatorsv2.OperatorCondition:
		return v == nil
	case *operatorsv1.OperatorGroup:
		return v == nil
	case *packagesv1.PackageManifest:
		return v == nil
	case *unstructured.Unstructured:
		return v == nil
	case *tollgatev1alpha1.UpgradeGate:
		return v == nil
	}
	return false
}

// input gathers the world's document as the controller would: the peers of a bundled plan
// are decided by the embedded policies.
func (w *world) input(t testing.TB) map[string]any {
	t.Helper()
	snap := snapshot.New()
	for _, o := range w.objects() {
		require.NoError(t, snap.Add(o))
	}
	d := &approval.Decider{Reader: snap, Policies: embedded(t, nil), Now: func() time.Time { return now }}
	dec, err := d.Decide(context.Background(), types.NamespacedName{Namespace: ns, Name: "etcd"})
	require.NoError(t, err)
	require.NotNil(t, dec)
	return dec.Doc
}
