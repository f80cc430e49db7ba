package olmplay

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

const (
	// Wait bounds every poll; Tollgate reacts in well under a second.
	Wait = 20 * time.Second
	// Tick is how often a poll looks.
	Tick = 50 * time.Millisecond
)

// Cluster is one test's namespace, where the test plays OLM's part.
type Cluster struct {
	T      *testing.T
	Ctx    context.Context
	Client client.Client
	NS     string
}

// NewCluster creates a namespace named prefix plus a random suffix, with an OperatorGroup
// targeting it and a READY catalog named "catalog". Everything is written through c.
func NewCluster(t *testing.T, c client.Client, prefix string) *Cluster {
	t.Helper()
	return NewNamedCluster(t, c, prefix+rand.String(6))
}

// NewNamedCluster is NewCluster in the namespace ns, for a test whose policy matches a
// namespace by name.
func NewNamedCluster(t *testing.T, c client.Client, ns string) *Cluster {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	k := &Cluster{T: t, Ctx: ctx, Client: c, NS: ns}
	k.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.NS}})
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: k.NS, Name: "og"}, Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{k.NS}}}
	k.Create(og)
	now := metav1.Now()
	og.Status = operatorsv1.OperatorGroupStatus{Namespaces: []string{k.NS}, LastUpdated: &now}
	require.NoError(t, k.Client.Status().Update(ctx, og))
	k.Catalog(k.NS, "catalog", "READY")
	return k
}

// Create creates obj and fails the test if it cannot.
func (k *Cluster) Create(obj client.Object) {
	k.T.Helper()
	require.NoError(k.T, k.Client.Create(k.Ctx, obj), "create %T %s", obj, obj.GetName())
}

// Catalog creates (or updates) a grpc CatalogSource with the given connection state.
func (k *Cluster) Catalog(ns, name, state string) *v1alpha1.CatalogSource {
	k.T.Helper()
	cs := &v1alpha1.CatalogSource{}
	err := k.Client.Get(k.Ctx, client.ObjectKey{Namespace: ns, Name: name}, cs)
	if err != nil {
		cs = &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: "quay.io/example/catalog:latest", DisplayName: name}}
		k.Create(cs)
	}
	cs.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{Address: name + "." + ns + ".svc:50051", LastObservedState: state, LastConnectTime: metav1.Now()}
	require.NoError(k.T, k.Client.Status().Update(k.Ctx, cs))
	return cs
}

// ServeOperandKind installs the CRD of pkg's operand kind, as OLM does when it installs a
// CSV, and waits until it is established.
func (k *Cluster) ServeOperandKind(pkg string) {
	k.T.Helper()
	ServeOperandKind(k.Ctx, k.T, k.Client, pkg)
}

// ServeOperandKind installs, through c, the CRD of pkg's operand kind (or finds it there), and
// waits until it is established.
func ServeOperandKind(ctx context.Context, tb testing.TB, c client.Client, pkg string) {
	tb.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: OperandPlural(pkg) + "." + OperandGroup(pkg)},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: OperandGroup(pkg), Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: OperandPlural(pkg), Kind: OperandKind(pkg), ListKind: OperandKind(pkg) + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
	if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(tb, err)
	}
	require.Eventually(tb, func() bool {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if c.Get(ctx, client.ObjectKeyFromObject(crd), got) != nil {
			return false
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true
			}
		}
		return false
	}, Wait, Tick, "CRD %s not established", crd.Name)
}

// PlanApproved says whether plan has been approved.
func (k *Cluster) PlanApproved(plan *v1alpha1.InstallPlan) bool {
	got := &v1alpha1.InstallPlan{}
	return k.Client.Get(k.Ctx, client.ObjectKeyFromObject(plan), got) == nil && got.Spec.Approved
}

// Approved waits for the plan's approval and returns how long it took from now.
func (k *Cluster) Approved(plan *v1alpha1.InstallPlan) time.Duration {
	k.T.Helper()
	start := time.Now()
	require.Eventually(k.T, func() bool {
		return k.Client.Get(k.Ctx, client.ObjectKeyFromObject(plan), plan) == nil && plan.Spec.Approved
	}, Wait, 5*time.Millisecond, "install plan %s was not approved", plan.Name)
	return time.Since(start)
}

// StillUnapproved checks that the plan stays unapproved over a settle period in which the
// controller has had every chance to act (its gate has already been evaluated).
func (k *Cluster) StillUnapproved(plan *v1alpha1.InstallPlan) {
	k.T.Helper()
	require.Never(k.T, func() bool { return k.PlanApproved(plan) }, time.Second, Tick, "install plan %s must not be approved", plan.Name)
}
