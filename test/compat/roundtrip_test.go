package compat

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
)

// A fixed second-precision time, as the API server stores times.
var stamp = metav1.NewTime(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))

func condition(typ, status string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: "Because", Message: "a message", ObservedGeneration: 1, LastTransitionTime: stamp}
}

func override(typ, status string) operatorsv1.ConditionOverride {
	c := condition(typ, status)
	return operatorsv1.ConditionOverride{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration, LastTransitionTime: c.LastTransitionTime}
}

// fullObjects sets every field of every OLM type Tollgate declares (the structured
// CatalogSource sources excepted: upstream does not serve them).
func fullObjects(ns string) []client.Object {
	return []client.Object{
		fullSubscription(ns),
		fullClusterServiceVersion(ns),
		fullInstallPlan(ns),
		fullCatalogSource(ns),
		fullOperatorConditionV2(ns),
		fullOperatorConditionV1(ns),
		fullOperatorGroup(ns),
	}
}

// fullSubscription is the etcd Subscription, every field set.
func fullSubscription(ns string) *v1alpha1.Subscription {
	return &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd"},
		Spec: &v1alpha1.SubscriptionSpec{
			CatalogSource: "operatorhubio", CatalogSourceNamespace: "olm", Package: "etcd", Channel: "alpha",
			StartingCSV: "etcd.v0.9.2", InstallPlanApproval: v1alpha1.ApprovalManual,
		},
		Status: v1alpha1.SubscriptionStatus{
			CurrentCSV: "etcd.v0.9.4", InstalledCSV: "etcd.v0.9.2", InstallPlanGeneration: 2,
			InstallPlanRef: &corev1.ObjectReference{Kind: "InstallPlan", Namespace: ns, Name: "install-abc", APIVersion: "operators.coreos.com/v1alpha1", UID: "1234", ResourceVersion: "5"},
			State:          v1alpha1.SubscriptionStateUpgradePending, Reason: "InstallComponentFailed",
			CatalogHealth: []v1alpha1.SubscriptionCatalogHealth{{
				CatalogSourceRef: &corev1.ObjectReference{Kind: "CatalogSource", Namespace: "olm", Name: "operatorhubio"},
				LastUpdated:      &stamp, Healthy: true,
			}},
			Conditions: []v1alpha1.SubscriptionCondition{{
				Type: "ResolutionFailed", Status: corev1.ConditionFalse, Reason: "AllGood", Message: "resolved",
				LastHeartbeatTime: &stamp, LastTransitionTime: &stamp,
			}},
			LastUpdated: stamp,
		},
	}
}

// fullClusterServiceVersion is the CSV etcd.v0.9.4, every field set.
func fullClusterServiceVersion(ns string) *v1alpha1.ClusterServiceVersion {
	return &v1alpha1.ClusterServiceVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd.v0.9.4"},
		Spec: v1alpha1.ClusterServiceVersionSpec{
			DisplayName: "etcd", Description: "A key-value store", Version: "0.9.4", Replaces: "etcd.v0.9.2",
			Skips:           []string{"etcd.v0.9.3"},
			InstallStrategy: v1alpha1.NamedInstallStrategy{StrategyName: "deployment", StrategySpec: &apiextensionsv1.JSON{Raw: []byte(`{"deployments":[{"name":"etcd-operator","spec":{"selector":{"matchLabels":{"name":"etcd"}},"template":{"spec":{"containers":[{"name":"etcd","image":"quay.io/coreos/etcd-operator"}]}}}}]}`)}},
			InstallModes:    []v1alpha1.InstallMode{{Type: "OwnNamespace", Supported: true}, {Type: "AllNamespaces", Supported: false}},
			CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{
				Owned:    []v1alpha1.CRDDescription{{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster", DisplayName: "etcd Cluster", Description: "a cluster"}},
				Required: []v1alpha1.CRDDescription{{Name: "backups.example.com", Version: "v1", Kind: "Backup"}},
			},
		},
		Status: v1alpha1.ClusterServiceVersionStatus{
			Phase: v1alpha1.CSVPhaseSucceeded, Message: "install strategy completed", Reason: "InstallSucceeded",
			LastUpdateTime: &stamp, LastTransitionTime: &stamp,
			Conditions: []v1alpha1.ClusterServiceVersionCondition{{Phase: v1alpha1.CSVPhasePending, Message: "waiting", Reason: "RequirementsUnknown", LastUpdateTime: &stamp, LastTransitionTime: &stamp}},
		},
	}
}

// fullInstallPlan is the InstallPlan of etcd.v0.9.4, every field set.
func fullInstallPlan(ns string) *v1alpha1.InstallPlan {
	return &v1alpha1.InstallPlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "install-abc"},
		Spec: v1alpha1.InstallPlanSpec{
			CatalogSource: "operatorhubio", CatalogSourceNamespace: "olm",
			ClusterServiceVersionNames: []string{"etcd.v0.9.4"}, Approval: v1alpha1.ApprovalManual, Approved: false, Generation: 2,
		},
		Status: &v1alpha1.InstallPlanStatus{
			Phase:          v1alpha1.InstallPlanPhaseRequiresApproval,
			Conditions:     []v1alpha1.InstallPlanCondition{{Type: "Installed", Status: corev1.ConditionFalse, Reason: "RequiresApproval", Message: "waiting", LastUpdateTime: &stamp, LastTransitionTime: &stamp}},
			CatalogSources: []string{"operatorhubio"}, Message: "waiting for approval", StartTime: &stamp,
		},
	}
}

// fullCatalogSource is a grpc CatalogSource, every field set but the structured sources.
func fullCatalogSource(ns string) *v1alpha1.CatalogSource {
	return &v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "operatorhubio"},
		Spec: v1alpha1.CatalogSourceSpec{
			SourceType: v1alpha1.SourceTypeGrpc, Image: "quay.io/operatorhubio/catalog:latest", Address: "", ConfigMap: "",
			GrpcPodConfig: &v1alpha1.GrpcPodConfig{
				NodeSelector: map[string]string{"role": "infra"}, PriorityClassName: ptr.To("system-cluster-critical"),
				Tolerations: []corev1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			},
			Priority:       -100,
			UpdateStrategy: &v1alpha1.UpdateStrategy{RegistryPoll: &v1alpha1.RegistryPoll{Interval: &metav1.Duration{Duration: 10 * time.Minute}}},
			Secrets:        []string{"pull-secret"}, DisplayName: "Community Operators", Description: "community", Publisher: "OperatorHub.io",
		},
		Status: v1alpha1.CatalogSourceStatus{
			Message: "ok", Reason: "Ready",
			RegistryServiceStatus:   &v1alpha1.RegistryServiceStatus{Protocol: "grpc", ServiceName: "operatorhubio", ServiceNamespace: ns, Port: "50051", CreatedAt: stamp},
			GRPCConnectionState:     &v1alpha1.GRPCConnectionState{Address: "operatorhubio.olm.svc:50051", LastObservedState: "READY", LastConnectTime: stamp},
			LatestImageRegistryPoll: &stamp,
			Conditions:              []metav1.Condition{condition("Ready", "True")},
		},
	}
}

// fullOperatorConditionV2 is an operators.coreos.com/v2 OperatorCondition, every field set.
func fullOperatorConditionV2(ns string) *operatorsv2.OperatorCondition {
	return &operatorsv2.OperatorCondition{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd.v0.9.2"},
		Spec: operatorsv2.OperatorConditionSpec{
			ServiceAccounts: []string{"etcd-operator"}, Deployments: []string{"etcd-operator"},
			Overrides:  []operatorsv1.ConditionOverride{override("Upgradeable", "True")},
			Conditions: []metav1.Condition{condition("Upgradeable", "False")},
		},
		Status: operatorsv2.OperatorConditionStatus{Conditions: []metav1.Condition{condition("Upgradeable", "False")}},
	}
}

// fullOperatorConditionV1 is an operators.coreos.com/v1 OperatorCondition, every field set.
func fullOperatorConditionV1(ns string) *operatorsv1.OperatorCondition {
	return &operatorsv1.OperatorCondition{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd.v0.9.0"},
		Spec: operatorsv1.OperatorConditionSpec{
			ServiceAccounts: []string{"etcd-operator"}, Deployments: []string{"etcd-operator"},
			Overrides: []operatorsv1.ConditionOverride{override("Upgradeable", "True")},
		},
		Status: operatorsv1.OperatorConditionStatus{Conditions: []metav1.Condition{condition("Upgradeable", "True")}},
	}
}

// fullOperatorGroup is an OperatorGroup, every field set.
func fullOperatorGroup(ns string) *operatorsv1.OperatorGroup {
	return &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"},
		Spec: operatorsv1.OperatorGroupSpec{
			Selector:         &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
			TargetNamespaces: []string{ns}, ServiceAccountName: "og-sa", StaticProvidedAPIs: true, UpgradeStrategy: "Default",
		},
		Status: operatorsv1.OperatorGroupStatus{
			Namespaces: []string{ns}, ServiceAccountRef: &corev1.ObjectReference{Kind: "ServiceAccount", Namespace: ns, Name: "og-sa"},
			LastUpdated: &stamp, Conditions: []metav1.Condition{condition("Ready", "True")},
		},
	}
}

// spec and status of an object, whatever its type, for comparison.
func specAndStatus(t *testing.T, obj client.Object) map[string]any {
	t.Helper()
	u, err := toUnstructured(obj)
	require.NoError(t, err)
	return map[string]any{"spec": u["spec"], "status": u["status"]}
}

func TestObjectsWrittenThroughOurTypesRoundTripThroughTheUpstreamCRDs(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, upstream)
	for _, want := range fullObjects(ns) {
		kind := want.GetObjectKind().GroupVersionKind().Kind
		name := want.GetName()
		t.Run(typeName(want)+"/"+name, func(t *testing.T) {
			written := want.DeepCopyObject().(client.Object)
			require.NoError(t, upstream.Client.Create(ctx, written), "create %s", kind)
			// Status is a subresource: write it the way OLM does.
			status := want.DeepCopyObject().(client.Object)
			status.SetResourceVersion(written.GetResourceVersion())
			require.NoError(t, upstream.Client.Status().Update(ctx, status), "update status")

			got := want.DeepCopyObject().(client.Object)
			require.NoError(t, upstream.Client.Get(ctx, client.ObjectKeyFromObject(want), got))
			if diff := cmp.Diff(specAndStatus(t, want), specAndStatus(t, got)); diff != "" {
				t.Fatalf("read back differs from what was written (-written +read):\n%s", diff)
			}
		})
	}
}
