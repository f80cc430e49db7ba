package input

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
)

// OwnedKind is one entry of a CSV's spec.customresourcedefinitions.owned, read as a kind: the
// entry names a CustomResourceDefinition, <plural>.<group>, and the version and kind it serves.
type OwnedKind struct {
	// CRD is the CustomResourceDefinition's name, <Resource>.<Group>.
	CRD string
	// Resource is the plural, the resource RBAC rules name.
	Resource string
	schema.GroupVersionKind
}

// ReadRule is the RBAC rule that lets a subject read the kind's instances, as YAML flow.
func (k OwnedKind) ReadRule() string {
	return fmt.Sprintf("{apiGroups: [%q], resources: [%q], verbs: [get, list, watch]}", k.Group, k.Resource)
}

// ErrNotOperand says an owned entry is not an operand kind: no CustomResourceDefinition of
// that name serves the kind it declares.
var ErrNotOperand = errors.New("not an operand kind")

// UnreadableError says an operand kind may not be read; Message says what to grant.
type UnreadableError struct {
	Kind    OwnedKind
	Message string
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("operands of %s cannot be read: %s", e.Kind.CRD, e.Message)
}

// OperandKinds decides whether the builder reads the instances of a kind an installed CSV owns.
// Check returns the kind to read (the entry's own version, or another version the CRD serves)
// and nil for an operand kind that can be read, an error wrapping ErrNotOperand for
// a kind that is not an operand, an *UnreadableError for one that may not be read (reported in
// the document as unreadableOperandKinds), and any other error for a failed read. Kinds of a
// built-in group (BuiltinGroup) are refused before Check is asked.
type OperandKinds interface {
	Check(ctx context.Context, kind OwnedKind) (OwnedKind, error)
}

// ServedByCRD is the OperandKinds that checks the cluster: the CustomResourceDefinition an
// owned entry names exists and serves the group, kind and version the entry declares. It reads
// that one CRD by name (get, never a list of every CRD) through Reader, which should read live:
// a cache would watch every CRD of the cluster.
type ServedByCRD struct{ Reader client.Reader }

// Check implements OperandKinds.
func (s ServedByCRD) Check(ctx context.Context, k OwnedKind) (OwnedKind, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := s.Reader.Get(ctx, types.NamespacedName{Name: k.CRD}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return k, fmt.Errorf("%w: no CustomResourceDefinition %s", ErrNotOperand, k.CRD)
		}
		return k, fmt.Errorf("get CustomResourceDefinition %s: %w", k.CRD, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		return k, fmt.Errorf("read CustomResourceDefinition %s: %w", k.CRD, err)
	}
	return k.servedBy(crd)
}

// servedBy is the kind to read when crd serves k's group and kind: in the version the owned
// entry declares when crd serves it, else in the CRD's storage version, else its first served
// one (the API server converts every instance to the version read, so none is left out). An
// error says why crd does not serve k.
func (k OwnedKind) servedBy(crd *apiextensionsv1.CustomResourceDefinition) (OwnedKind, error) {
	names := crd.Spec.Names
	switch {
	case crd.Spec.Group != k.Group || names.Plural != k.Resource:
		return k, fmt.Errorf("%w: CustomResourceDefinition %s serves %s.%s", ErrNotOperand, k.CRD, names.Plural, crd.Spec.Group)
	case names.Kind != k.Kind:
		return k, fmt.Errorf("%w: CustomResourceDefinition %s serves kind %s, not %s", ErrNotOperand, k.CRD, names.Kind, k.Kind)
	}
	served := func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Served && v.Name == k.Version }
	if !slices.ContainsFunc(crd.Spec.Versions, served) {
		served = func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Served && v.Storage }
	}
	if !slices.ContainsFunc(crd.Spec.Versions, served) {
		served = func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Served }
	}
	i := slices.IndexFunc(crd.Spec.Versions, served)
	if i < 0 {
		return k, fmt.Errorf("%w: CustomResourceDefinition %s serves no version", ErrNotOperand, k.CRD)
	}
	k.Version = crd.Spec.Versions[i].Name
	return k, nil
}

// builtinGroups are the API groups kube-apiserver serves itself (those of the client-go scheme),
// and those of the API extension and aggregation servers and the metrics APIs.
var builtinGroups = func() map[string]bool {
	groups := map[string]bool{"apiextensions.k8s.io": true, "apiregistration.k8s.io": true,
		"metrics.k8s.io": true, "custom.metrics.k8s.io": true, "external.metrics.k8s.io": true}
	for gvk := range clientgoscheme.Scheme.AllKnownTypes() {
		groups[gvk.Group] = true
	}
	return groups
}()

// BuiltinGroup says whether group is one of Kubernetes' own: the core group, a group without a
// dot (apps, batch, policy; a CRD's group needs one) or a group kube-apiserver or its
// extension, aggregation and metrics servers serve. A kind in such a group is never an operand,
// whatever a CSV claims to own: a CSV owning "secrets." must not pull Secrets in.
func BuiltinGroup(group string) bool {
	return !strings.Contains(group, ".") || builtinGroups[group]
}

// ownedKinds are the entries of the CSV's spec.customresourcedefinitions.owned that may be
// operands: named <plural>.<group>, with a version and a kind, in a group that is not built in.
func ownedKinds(csv *v1alpha1.ClusterServiceVersion) []OwnedKind {
	if csv == nil {
		return nil
	}
	var kinds []OwnedKind
	for _, crd := range csv.Spec.CustomResourceDefinitions.Owned {
		plural, group, _ := strings.Cut(crd.Name, ".")
		if plural == "" || crd.Version == "" || crd.Kind == "" || BuiltinGroup(group) {
			continue
		}
		k := OwnedKind{CRD: crd.Name, Resource: plural, GroupVersionKind: schema.GroupVersionKind{Group: group, Version: crd.Version, Kind: crd.Kind}}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// operandKinds sorts the kinds the CSV owns into those to read and those Tollgate may not read
// (checkKinds).
func (g *gatherer) operandKinds(ctx context.Context, csv *v1alpha1.ClusterServiceVersion, check OperandKinds) (read []OwnedKind, unreadable []*UnreadableError) {
	return g.checkKinds(ctx, ownedKinds(csv), check)
}

// checkKinds sorts kinds into those to read and those Tollgate may not read; the kinds check
// says are not operands are dropped. A nil check trusts the kinds (a snapshot holds no CRDs).
func (g *gatherer) checkKinds(ctx context.Context, kinds []OwnedKind, check OperandKinds) (read []OwnedKind, unreadable []*UnreadableError) {
	for _, k := range kinds {
		if check == nil {
			read = append(read, k)
			continue
		}
		var denied *UnreadableError
		switch as, err := check.Check(ctx, k); {
		case err == nil:
			read = append(read, as)
		case errors.Is(err, ErrNotOperand):
		case errors.As(err, &denied):
			unreadable = append(unreadable, denied)
		default:
			g.fail(fmt.Errorf("check operand kind %s: %w", k.CRD, err))
		}
	}
	return read, unreadable
}

// targetNamespaces are the OperatorGroups' status.namespaces, all of them; nil means all
// namespaces (no group, one listing none, or "" listed). Beside several groups the upgrade is
// held, and the operands of every target are still reported.
func targetNamespaces(groups []operatorsv1.OperatorGroup) []string {
	var targets []string
	for _, group := range groups {
		if len(group.Status.Namespaces) == 0 || slices.Contains(group.Status.Namespaces, "") {
			return nil
		}
		targets = append(targets, group.Status.Namespaces...)
	}
	slices.Sort(targets)
	return slices.Compact(targets)
}

// MaxOperands is the most operands a document lists for evaluation (engine.MaxOperands, which
// must equal it). With more, the document lists the first MaxOperands+1 by kind, namespace and
// name: one more than the engine evaluates, so that the evaluation fails closed with a
// PolicyError that says so, instead of judging the health on a partial view that could leave a
// degraded operand out, and without copying every instance of a runaway kind.
const MaxOperands = 10000

// operands lists the instances of kinds in namespaces (nil: all), at most MaxOperands+1 of
// them. It returns the kinds it read and, apart, those the reader refused (Forbidden), which
// are reported rather than failing.
func (g *gatherer) operands(ctx context.Context, kinds []OwnedKind, namespaces []string) ([]any, []OwnedKind, []*UnreadableError) {
	seen := map[string]bool{}
	var found []*unstructured.Unstructured
	var read []OwnedKind
	var refused []*UnreadableError
	scopes := namespaces
	if scopes == nil {
		scopes = []string{""} // all namespaces
	}
	for _, k := range kinds {
		items, err := g.listOperands(ctx, k, scopes)
		if err != nil {
			refused = append(refused, err)
			continue
		}
		read = append(read, k)
		for _, item := range items {
			// A cluster-scoped kind ignores the namespace: it is listed once per scope.
			if id := item.GetKind() + "/" + item.GetNamespace() + "/" + item.GetName(); !seen[id] {
				seen[id] = true
				found = append(found, item)
			}
		}
	}
	slices.SortFunc(found, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetKind(), b.GetKind()), cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	if len(found) > MaxOperands {
		found = found[:MaxOperands+1] // the engine refuses more than MaxOperands: no need to copy them all
	}
	out := make([]any, 0, len(found))
	for _, u := range found {
		m := u.DeepCopy().Object
		unstructured.RemoveNestedField(m, "metadata", "managedFields")
		out = append(out, m)
	}
	return out, read, refused
}

// listOperands lists k in each scope. A kind that is not served (CRD not yet installed, or
// removed) has no operands; a Forbidden is returned as an *UnreadableError; any other error
// is recorded in g.
func (g *gatherer) listOperands(ctx context.Context, k OwnedKind, scopes []string) ([]*unstructured.Unstructured, *UnreadableError) {
	var items []*unstructured.Unstructured
	for _, ns := range scopes {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GroupVersion().WithKind(k.Kind + "List"))
		err := g.r.List(ctx, list, client.InNamespace(ns))
		switch {
		case apierrors.IsForbidden(err):
			return nil, &UnreadableError{Kind: k, Message: err.Error()}
		case absent(err):
			return nil, nil
		case err != nil:
			g.fail(fmt.Errorf("list %s: %w", k.Kind, err))
			return nil, nil
		}
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
	}
	return items, nil
}

// unreadableData is unreadableOperandKinds as policies/README.md documents it.
func unreadableData(errs []*UnreadableError) []any {
	out := make([]any, 0, len(errs))
	for _, e := range errs {
		out = append(out, map[string]any{
			"apiVersion": e.Kind.GroupVersion().String(), "kind": e.Kind.Kind, "resource": e.Kind.Resource,
			"reason": "Forbidden", "message": e.Message,
		})
	}
	return out
}

func gvks(kinds []OwnedKind) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, k := range kinds {
		out = append(out, k.GroupVersionKind)
	}
	return out
}
