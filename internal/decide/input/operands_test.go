package input_test

import (
	"cmp"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

var etcdOwned = v1alpha1.CRDDescription{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}

// etcdWorld is an installed etcd operator with one operand, a Secret beside it, and a CSV that
// owns the kinds given besides EtcdCluster.
func etcdWorld(owned ...v1alpha1.CRDDescription) []client.Object {
	secret := &corev1.Secret{ObjectMeta: meta(ns, "credentials"), Data: map[string][]byte{"password": []byte("hunter2")}}
	return []client.Object{
		subscription("etcd", "etcd.v1", "etcd.v1"),
		csv("etcd.v1", append([]v1alpha1.CRDDescription{etcdOwned}, owned...)...),
		operand(ns, "main"), secret,
	}
}

// listed records the kinds listed through a reader.
func listed(kinds *[]string) interceptor.Funcs {
	return interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if u, ok := list.(*unstructured.UnstructuredList); ok {
			*kinds = append(*kinds, u.GetKind())
		} else if _, ok := list.(*corev1.SecretList); ok {
			*kinds = append(*kinds, "SecretList")
		}
		return c.List(ctx, list, opts...)
	}}
}

func TestKindsOfBuiltInGroupsAreNeverOperands(t *testing.T) {
	var kinds []string
	r := fakeReader(etcdWorld(
		v1alpha1.CRDDescription{Name: "secrets.", Version: "v1", Kind: "Secret"},
		v1alpha1.CRDDescription{Name: "secrets", Version: "v1", Kind: "Secret"},
		v1alpha1.CRDDescription{Name: "deployments.apps", Version: "v1", Kind: "Deployment"},
		v1alpha1.CRDDescription{Name: "roles.rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
		v1alpha1.CRDDescription{Name: "customresourcedefinitions.apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
	), listed(&kinds))
	in, err := (&input.Builder{Reader: r}).Build(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, []string{ns + "/main"}, names(t, in.Doc["operands"]))
	assert.Equal(t, []schema.GroupVersionKind{etcdGVK}, in.OperandGVKs)
	assert.Equal(t, []string{"EtcdClusterList"}, kinds, "nothing else is even listed")
}

func TestBuiltinGroup(t *testing.T) {
	for group, builtin := range map[string]bool{
		"": true, "apps": true, "batch": true, "policy": true, "rbac.authorization.k8s.io": true,
		"storage.k8s.io": true, "apiextensions.k8s.io": true, "apiregistration.k8s.io": true, "metrics.k8s.io": true,
		"etcd.database.coreos.com": false, "gateway.networking.k8s.io": false, "cluster.x-k8s.io": false,
	} {
		assert.Equal(t, builtin, input.BuiltinGroup(group), group)
	}
}

// checkFunc is an input.OperandKinds from a function.
type checkFunc func(context.Context, input.OwnedKind) error

func (f checkFunc) Check(ctx context.Context, k input.OwnedKind) (input.OwnedKind, error) {
	return k, f(ctx, k)
}

// operandCheckCases are what the operand check decides, on every path of operandReaders.
var operandCheckCases = []struct {
	scenario   string
	check      error
	operands   []string
	gvks       []schema.GroupVersionKind
	unreadable []any
	err        error
}{{
	scenario: "a kind the check accepts is read", operands: []string{ns + "/main"}, gvks: []schema.GroupVersionKind{etcdGVK}, unreadable: []any{},
}, {
	scenario: "a kind that is not an operand is dropped", check: input.ErrNotOperand, operands: nil, unreadable: []any{},
}, {
	scenario: "a kind Tollgate may not read is reported, not listed",
	check:    &input.UnreadableError{Message: "grant it"},
	unreadable: []any{map[string]any{"apiVersion": etcdGVK.GroupVersion().String(), "kind": "EtcdCluster", "resource": "etcdclusters",
		"reason": "Forbidden", "message": "grant it"}},
}, {
	scenario: "a failed check fails the build", check: errRefused, err: errRefused,
}}

var errRefused = errors.New("connection refused")

// recordingCheck is a check that answers err (an *input.UnreadableError naming the kind asked)
// and records the kinds asked.
func recordingCheck(err error, asked *[]input.OwnedKind) checkFunc {
	return func(_ context.Context, k input.OwnedKind) error {
		*asked = append(*asked, k)
		var u *input.UnreadableError
		if errors.As(err, &u) {
			u.Kind = k
		}
		return err
	}
}

var etcdKind = input.OwnedKind{CRD: etcdOwned.Name, Resource: "etcdclusters", GroupVersionKind: etcdGVK}

// operandRead is what one path read with the operand check: the operands, the kinds read, the
// document's unreadableOperandKinds.
type operandRead struct {
	operands, unreadable any
	gvks                 []schema.GroupVersionKind
}

// operandReaders are the two paths that read operands: a Subscription's document (Builder, the
// kinds its CSV owns) and an OLM v1 extension's (ReadOperands, the kinds its bundle provides).
var operandReaders = map[string]func(r client.Reader, check input.OperandKinds) (operandRead, error){
	"Subscription": func(r client.Reader, check input.OperandKinds) (operandRead, error) {
		in, err := (&input.Builder{Reader: r, Config: input.Config{OperandKinds: check}}).Build(context.Background(), key)
		if err != nil {
			return operandRead{}, err
		}
		return operandRead{operands: in.Doc["operands"], unreadable: in.Doc["unreadableOperandKinds"], gvks: in.OperandGVKs}, nil
	},
	"extension": func(r client.Reader, check input.OperandKinds) (operandRead, error) {
		got, err := input.ReadOperands(context.Background(), r, []input.OwnedKind{etcdKind}, check)
		if err != nil {
			return operandRead{}, err
		}
		doc := (&input.Extension{Extension: &olmv1.ClusterExtension{}, Operands: got.Items, Unreadable: got.Unreadable}).Document(nil, input.Config{}, time.Now())
		return operandRead{operands: doc["operands"], unreadable: doc["unreadableOperandKinds"], gvks: got.Kinds}, nil
	},
}

// The operand check decides what is read, for a Subscription's operands and an OLM v1
// extension's alike.
func TestTheOperandCheckDecidesWhatIsRead(t *testing.T) {
	for path, read := range operandReaders {
		for _, tt := range operandCheckCases {
			t.Run(path+"/"+tt.scenario, func(t *testing.T) {
				var asked []input.OwnedKind
				var kinds []string
				got, err := read(fakeReader(etcdWorld(), listed(&kinds)), recordingCheck(tt.check, &asked))
				if tt.err != nil {
					require.ErrorIs(t, err, tt.err)
					assert.ErrorContains(t, err, "check operand kind etcdclusters.etcd.database.coreos.com")
					return
				}
				require.NoError(t, err)
				assert.Equal(t, []input.OwnedKind{etcdKind}, asked)
				assert.Equal(t, tt.operands, namesOrNil(t, got.operands))
				assert.Equal(t, tt.gvks, got.gvks)
				assert.Equal(t, tt.unreadable, got.unreadable)
				if tt.operands == nil {
					assert.NotContains(t, kinds, "EtcdClusterList")
				}
			})
		}
	}
}

func namesOrNil(t *testing.T, list any) []string {
	if len(list.([]any)) == 0 {
		return nil
	}
	return names(t, list)
}

// A reader that refuses a kind (the CLI's own credentials, say) makes it unreadable, not an error.
func TestAForbiddenListIsReportedNotFailed(t *testing.T) {
	r := fakeReader(etcdWorld(), interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if u, ok := list.(*unstructured.UnstructuredList); ok && u.GetKind() == "EtcdClusterList" {
			return apierrors.NewForbidden(schema.GroupResource{Group: etcdGVK.Group, Resource: "etcdclusters"}, "", errors.New("no RBAC"))
		}
		return c.List(ctx, list, opts...)
	}})
	in, err := (&input.Builder{Reader: r}).Build(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, []any{}, in.Doc["operands"])
	assert.Empty(t, in.OperandGVKs)
	unreadable := in.Doc["unreadableOperandKinds"].([]any)
	require.Len(t, unreadable, 1)
	assert.Equal(t, "EtcdCluster", unreadable[0].(map[string]any)["kind"])
	assert.Contains(t, unreadable[0].(map[string]any)["message"], "no RBAC")
}

func crd(name, group, plural, kind string, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind}, Versions: versions}}
}

func TestServedByCRD(t *testing.T) {
	served := apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta2", Served: true}
	owned := input.OwnedKind{CRD: etcdOwned.Name, Resource: "etcdclusters", GroupVersionKind: etcdGVK}
	tests := []struct {
		scenario string
		crd      *apiextensionsv1.CustomResourceDefinition
		notOwned string // the error, when the kind is not an operand
		version  string // the version read, when it is; default v1beta2
	}{
		{scenario: "the CRD the CSV names serves the kind", crd: crd(etcdOwned.Name, etcdGVK.Group, "etcdclusters", "EtcdCluster", served)},
		{scenario: "the CRD no longer serves the owned version: its storage version is read", version: "v1beta3",
			crd: crd(etcdOwned.Name, etcdGVK.Group, "etcdclusters", "EtcdCluster", apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta2"},
				apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", Served: true},
				apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta3", Served: true, Storage: true})},
		{scenario: "without a served storage version, the first served one", version: "v1",
			crd: crd(etcdOwned.Name, etcdGVK.Group, "etcdclusters", "EtcdCluster", apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta2", Storage: true},
				apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", Served: true})},
		{scenario: "no such CRD", notOwned: "no CustomResourceDefinition etcdclusters.etcd.database.coreos.com"},
		{scenario: "the CRD serves another kind", crd: crd(etcdOwned.Name, etcdGVK.Group, "etcdclusters", "Secret", served),
			notOwned: "serves kind Secret, not EtcdCluster"},
		{scenario: "the CRD serves no version", crd: crd(etcdOwned.Name, etcdGVK.Group, "etcdclusters", "EtcdCluster",
			apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta2"}), notOwned: "serves no version"},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			s := testScheme()
			require.NoError(t, apiextensionsv1.AddToScheme(s))
			b := fake.NewClientBuilder().WithScheme(s)
			if tt.crd != nil {
				b = b.WithObjects(tt.crd)
			}
			as, err := input.ServedByCRD{Reader: b.Build()}.Check(context.Background(), owned)
			if tt.notOwned == "" {
				require.NoError(t, err)
				want := owned
				want.Version = cmp.Or(tt.version, owned.Version)
				assert.Equal(t, want, as)
				return
			}
			assert.ErrorIs(t, err, input.ErrNotOperand)
			assert.ErrorContains(t, err, tt.notOwned)
		})
	}
}
