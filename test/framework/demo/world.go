package demo

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// Names of the demo's world.
const (
	// Namespace holds the operator, its Subscription and its InstallPlan.
	Namespace = "demo"
	// CatalogNamespace holds the CatalogSource: OLM's global catalog namespace.
	CatalogNamespace = input.DefaultGlobalCatalogNamespace
	// Subscription is the name of the Subscription (and so of its UpgradeGate).
	Subscription = "etcd"
	// InstalledCSV is the version installed at the start; UpgradeCSV the one that arrives.
	InstalledCSV = "etcd.v0.9.2"
	UpgradeCSV   = "etcd.v0.9.4"
	// InstallPlan is the plan OLM creates for UpgradeCSV.
	InstallPlan = "install-etcd-v0-9-4"

	catalog = "operatorhubio"
	timeout = 30 * time.Second
)

// SubscriptionKey is the key of the demo's Subscription and UpgradeGate.
var SubscriptionKey = types.NamespacedName{Namespace: Namespace, Name: Subscription}

// World creates the demo's objects through Client, playing OLM's part.
type World struct {
	Client client.Client

	n       *narrator // says what was created; nil says nothing
	manager *manager  // a wait ends when it stops; nil when none runs
}

func (w *World) say(format string, args ...any) {
	if w.n != nil {
		w.n.say(format, args...)
	}
}

// Install creates the world before the upgrade: the namespaces, an OperatorGroup, a READY
// CatalogSource, the operand CRD, the installed CSV and its operand, an OperatorCondition
// saying Upgradeable=False, and a Manual Subscription at the installed version. It returns
// the OperatorCondition, which the story later turns to Upgradeable=True.
func (w *World) Install(ctx context.Context) (*operatorsv2.OperatorCondition, error) {
	c := w.Client
	for _, ns := range []string{Namespace, CatalogNamespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	w.say("namespaces %s and %s", Namespace, CatalogNamespace)
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: Namespace},
		Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{Namespace}}}
	if err := createWithStatus(ctx, c, og, func() {
		og.Status = operatorsv1.OperatorGroupStatus{Namespaces: []string{Namespace}, LastUpdated: ptr.To(metav1.Now())}
	}); err != nil {
		return nil, err
	}
	w.say("OperatorGroup %s/%s targeting %s", Namespace, Namespace, Namespace)
	cat := &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: CatalogNamespace, Name: catalog},
		Spec: v1alpha1.CatalogSourceSpec{DisplayName: "Community Operators", CatalogImageSource: &v1alpha1.CatalogImageSource{CatalogImage: "quay.io/operatorhubio/catalog:latest"}}}
	if err := createWithStatus(ctx, c, cat, func() {
		cat.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{Address: "operatorhubio.olm.svc:50051", LastObservedState: "READY", LastConnectTime: metav1.Now()}
	}); err != nil {
		return nil, err
	}
	w.say("CatalogSource %s/%s, connection READY", CatalogNamespace, catalog)
	if err := w.operandKind(ctx); err != nil {
		return nil, err
	}
	csv := newCSV(InstalledCSV, "0.9.2")
	if err := createWithStatus(ctx, c, csv, func() { csv.Status = succeeded() }); err != nil {
		return nil, err
	}
	w.say("ClusterServiceVersion %s, phase Succeeded, owning the EtcdCluster kind", InstalledCSV)
	if err := c.Create(ctx, newOperand()); err != nil {
		return nil, fmt.Errorf("create the operand: %w", err)
	}
	w.say("its operand EtcdCluster %s/example: Available, not Progressing, not Degraded", Namespace)
	oc := &operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: InstalledCSV}}
	oc.Spec.Conditions = []metav1.Condition{upgradeable(metav1.ConditionFalse, "Migrating", "migrating storage", 1)}
	if err := createWithStatus(ctx, c, oc, func() { oc.Status.Conditions = oc.Spec.Conditions }); err != nil {
		return nil, err
	}
	w.say("the operator reports in OperatorCondition %s: Upgradeable=False, \"migrating storage\"", InstalledCSV)
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: Subscription},
		Spec: &v1alpha1.SubscriptionSpec{Package: "etcd", Channel: "stable", CatalogSource: catalog, CatalogSourceNamespace: CatalogNamespace, InstallPlanApproval: v1alpha1.ApprovalManual}}
	if err := createWithStatus(ctx, c, sub, func() {
		sub.Status = v1alpha1.SubscriptionStatus{InstalledCSV: InstalledCSV, CurrentCSV: InstalledCSV, State: "AtLatestKnown", LastUpdated: metav1.Now()}
	}); err != nil {
		return nil, err
	}
	w.say("Subscription %s/%s: package etcd, channel stable, installPlanApproval Manual, at %s", Namespace, Subscription, InstalledCSV)
	return oc, nil
}

// OfferUpgrade plays OLM resolving a new version: an InstallPlan waiting for approval, and the
// Subscription's status pointing at it.
func (w *World) OfferUpgrade(ctx context.Context) (*v1alpha1.InstallPlan, error) {
	plan := &v1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: InstallPlan},
		Spec: v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{UpgradeCSV}, Approval: v1alpha1.ApprovalManual, CatalogSource: catalog, CatalogSourceNamespace: CatalogNamespace}}
	if err := createWithStatus(ctx, w.Client, plan, func() {
		plan.Status = &v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseRequiresApproval, CatalogSources: []string{catalog}}
	}); err != nil {
		return nil, err
	}
	w.say("(the demo plays OLM) InstallPlan %s/%s for %s: approval Manual, phase RequiresApproval", Namespace, InstallPlan, UpgradeCSV)
	if err := w.updateSubscription(ctx, func(s *v1alpha1.Subscription) {
		s.Status.CurrentCSV, s.Status.State = UpgradeCSV, "UpgradePending"
		s.Status.InstallPlanRef = &corev1.ObjectReference{APIVersion: "operators.coreos.com/v1alpha1", Kind: "InstallPlan", Namespace: Namespace, Name: InstallPlan}
	}); err != nil {
		return nil, err
	}
	w.say("Subscription status: currentCSV %s, state UpgradePending", UpgradeCSV)
	return plan, nil
}

// operandKind installs the CRD of the operator's operands, EtcdCluster, and waits until it is
// served: the operand cannot be created before.
func (w *World) operandKind(ctx context.Context) error {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "etcdclusters.etcd.database.coreos.com"},
		"spec": map[string]any{
			"group": "etcd.database.coreos.com",
			"names": map[string]any{"kind": "EtcdCluster", "listKind": "EtcdClusterList", "plural": "etcdclusters", "singular": "etcdcluster"},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": "v1beta2", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	if err := w.Client.Create(ctx, crd); err != nil {
		return fmt.Errorf("create the EtcdCluster CRD: %w", err)
	}
	if err := w.wait(ctx, "the EtcdCluster CRD to be established", func() (bool, error) {
		if err := w.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		return err
	}
	w.say("CustomResourceDefinition etcdclusters.etcd.database.coreos.com (the operator's operand kind)")
	return nil
}

// updateSubscription changes the Subscription's status as OLM would.
func (w *World) updateSubscription(ctx context.Context, change func(*v1alpha1.Subscription)) error {
	sub := &v1alpha1.Subscription{}
	if err := w.Client.Get(ctx, SubscriptionKey, sub); err != nil {
		return err
	}
	change(sub)
	sub.Status.LastUpdated = metav1.Now()
	if err := w.Client.Status().Update(ctx, sub); err != nil {
		return fmt.Errorf("update the Subscription's status: %w", err)
	}
	return nil
}

// waitGate polls the demo's UpgradeGate until ok holds, and returns it.
func (w *World) waitGate(ctx context.Context, what string, ok func(*tollgatev1alpha1.UpgradeGate) bool) (*tollgatev1alpha1.UpgradeGate, error) {
	gate := &tollgatev1alpha1.UpgradeGate{}
	err := w.wait(ctx, what, func() (bool, error) {
		if err := w.Client.Get(ctx, SubscriptionKey, gate); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(gate), nil
	})
	return gate, err
}

// wait polls cond until it holds, the manager fails, or the timeout passes.
func (w *World) wait(ctx context.Context, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var stopped <-chan struct{} // nil, never ready, without a manager
	if w.manager != nil {
		stopped = w.manager.done
	}
	for {
		done, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up waiting for %s after %s: run `go run ./test/demo --verbose` to see the manager's log", what, timeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted while waiting for %s", what)
		case <-stopped:
			return fmt.Errorf("the manager stopped while waiting for %s: %w", what, w.manager.stopErr())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// createWithStatus creates obj, then writes the status setStatus sets (status is a
// subresource: a create ignores it).
func createWithStatus(ctx context.Context, c client.Client, obj client.Object, setStatus func()) error {
	kind := fmt.Sprintf("%T", obj)
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("create %s %s: %w", kind, obj.GetName(), err)
	}
	setStatus()
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("set the status of %s %s: %w", kind, obj.GetName(), err)
	}
	return nil
}

func newCSV(name, version string) *v1alpha1.ClusterServiceVersion {
	csv := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name}}
	csv.Spec.DisplayName = "etcd"
	csv.Spec.Version = version
	csv.Spec.InstallStrategy.StrategyName = "deployment"
	csv.Spec.CustomResourceDefinitions.Owned = []v1alpha1.CRDDescription{{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}}
	return csv
}

func succeeded() v1alpha1.ClusterServiceVersionStatus {
	return v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseSucceeded, Reason: "InstallSucceeded", Message: "install strategy completed with no errors"}
}

// newOperand is the operator's one custom resource, healthy.
func newOperand() *unstructured.Unstructured {
	cond := func(t, status, msg string) any {
		return map[string]any{"type": t, "status": status, "reason": "InstallSucceeded", "message": msg, "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd.database.coreos.com/v1beta2",
		"kind":       "EtcdCluster",
		"metadata":   map[string]any{"namespace": Namespace, "name": "example"},
		"spec":       map[string]any{"size": int64(3)},
		"status": map[string]any{"conditions": []any{
			cond("Available", "True", "3 members ready"),
			cond("Progressing", "False", "idle"),
			cond("Degraded", "False", "all members healthy"),
		}},
	}}
}

func upgradeable(status metav1.ConditionStatus, reason, message string, generation int64) metav1.Condition {
	return metav1.Condition{Type: "Upgradeable", Status: status, Reason: reason, Message: message, ObservedGeneration: generation, LastTransitionTime: metav1.Now()}
}
