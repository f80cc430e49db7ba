package snapshot

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

// snapshotKind is one kind to capture and where.
type snapshotKind struct {
	name  string // plural, for progress
	list  func() client.ObjectList
	scope func(Scope) [][]client.ListOption // one List call each
	keep  func(client.Object) bool
}

var snapshotKinds = []snapshotKind{
	{name: "CatalogSources", list: func() client.ObjectList { return &v1alpha1.CatalogSourceList{} }, scope: catalogScope},
	{name: "OperatorGroups", list: func() client.ObjectList { return &operatorsv1.OperatorGroupList{} }, scope: nsScope},
	{name: "Subscriptions", list: func() client.ObjectList { return &v1alpha1.SubscriptionList{} }, scope: nsScope},
	{name: "ClusterServiceVersions", list: func() client.ObjectList { return &v1alpha1.ClusterServiceVersionList{} }, scope: nsScope, keep: notCopied},
	{name: "InstallPlans", list: func() client.ObjectList { return &v1alpha1.InstallPlanList{} }, scope: nsScope},
	{name: "OperatorConditions", list: func() client.ObjectList { return &operatorsv2.OperatorConditionList{} }, scope: nsScope},
	{name: "UpgradeGates", list: func() client.ObjectList { return &tollgatev1alpha1.UpgradeGateList{} }, scope: nsScope},
	{name: "policy ConfigMaps", list: func() client.ObjectList { return &corev1.ConfigMapList{} }, scope: policyScope},
	{name: "ClusterCatalogs", list: func() client.ObjectList { return &olmv1.ClusterCatalogList{} }, scope: clusterScope},
	{name: "ClusterExtensions", list: func() client.ObjectList { return &olmv1.ClusterExtensionList{} }, scope: clusterScope},
	{name: "ExtensionGates", list: func() client.ObjectList { return &tollgatev1alpha1.ExtensionGateList{} }, scope: clusterScope},
}

// clusterScope lists a cluster-scoped kind whatever the namespace: OLM v1's kinds are all
// there is of it.
func clusterScope(Scope) [][]client.ListOption { return [][]client.ListOption{nil} }

func nsScope(s Scope) [][]client.ListOption {
	if s.All {
		return [][]client.ListOption{nil}
	}
	return [][]client.ListOption{{client.InNamespace(s.Namespace)}}
}

// catalogScope is the namespace and the global catalog namespace: the catalogs visible there.
func catalogScope(s Scope) [][]client.ListOption {
	if s.All || s.GlobalCatalogNamespace == s.Namespace {
		return nsScope(s)
	}
	return [][]client.ListOption{{client.InNamespace(s.Namespace)}, {client.InNamespace(s.GlobalCatalogNamespace)}}
}

// policyScope is the labelled ConfigMaps of the policy namespace, and no other ConfigMap.
func policyScope(s Scope) [][]client.ListOption {
	return [][]client.ListOption{{client.InNamespace(s.PolicyNamespace), client.HasLabels{s.PolicyLabel}}}
}

// notCopied drops the copies of a CSV OLM writes into every target namespace: they carry
// nothing the decision needs and multiply a snapshot's size.
func notCopied(obj client.Object) bool {
	_, copied := obj.GetLabels()[v1alpha1.CopiedFromLabel]
	return !copied
}

// Scope says what Capture reads.
type Scope struct {
	// Namespace is the namespace to capture, unless All.
	Namespace string
	All       bool
	// GlobalCatalogNamespace holds the catalogs visible from every namespace.
	GlobalCatalogNamespace string
	// PolicyNamespace and PolicyLabel select the policy ConfigMaps, the only ConfigMaps read.
	PolicyNamespace string
	PolicyLabel     string
	// Catalogs reads the content of OLM v1 catalogs (CatalogContent); nil leaves it out.
	Catalogs RawCatalogs
}

// RawCatalogs reads a catalog's content as catalogd serves it.
type RawCatalogs interface {
	Raw(ctx context.Context, src catalogd.Source) ([]byte, error)
}

// Capture reads everything Tollgate's decisions in scope rest on: it lists every kind, then
// gathers each Subscription's input to add the operands and PackageManifests exactly as the
// manager sees them. Progress goes to progress. Objects have apiVersion and kind;
// managedFields and the last-applied annotation are dropped.
func Capture(ctx context.Context, c client.Reader, scope Scope, progress io.Writer) ([]map[string]any, error) {
	var out []map[string]any
	seen := map[string]bool{}
	add := func(m map[string]any) {
		u := unstructured.Unstructured{Object: m}
		id := u.GetAPIVersion() + "/" + u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
		if !seen[id] {
			seen[id] = true
			out = append(out, clean(m))
		}
	}
	for _, k := range snapshotKinds {
		n := 0
		for _, opts := range k.scope(scope) {
			list := k.list()
			if err := c.List(ctx, list, opts...); err != nil {
				if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
					fmt.Fprintf(progress, "  %-24s skipped: %v\n", k.name, shortErr(err))
					break
				}
				return nil, fmt.Errorf("list %s: %w", k.name, err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				return nil, err
			}
			for _, it := range items {
				obj := it.(client.Object)
				if k.keep != nil && !k.keep(obj) {
					continue
				}
				m, err := typedToMap(obj, scheme)
				if err != nil {
					return nil, err
				}
				add(m)
				n++
			}
		}
		fmt.Fprintf(progress, "  %-24s %d\n", k.name, n)
	}

	// Operands and PackageManifests: what the input builder reads for each Subscription.
	var subs v1alpha1.SubscriptionList
	if err := c.List(ctx, &subs, nsScope(scope)[0]...); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("list Subscriptions: %w", err)
	}
	operands, pkgs := 0, 0
	b := &input.Builder{Reader: c, Config: input.Config{GlobalCatalogNamespace: scope.GlobalCatalogNamespace, OperandKinds: servedOrOwned{input.ServedByCRD{Reader: c}}}}
	for i := range subs.Items {
		in, err := b.Build(ctx, client.ObjectKeyFromObject(&subs.Items[i]))
		if err != nil {
			fmt.Fprintf(progress, "  operands of %s/%s skipped: %v\n", subs.Items[i].Namespace, subs.Items[i].Name, shortErr(err))
			continue
		}
		if in == nil {
			continue
		}
		for _, o := range in.Doc["operands"].([]any) {
			add(o.(map[string]any))
			operands++
		}
		if pm, ok := in.Doc["packageManifest"].(map[string]any); ok {
			add(pm)
			pkgs++
		}
	}
	fmt.Fprintf(progress, "  %-24s %d\n", "operands", operands)
	fmt.Fprintf(progress, "  %-24s %d\n", "PackageManifests", pkgs)
	extra, err := captureExtensions(ctx, c, scope, progress)
	for _, m := range extra {
		add(m)
	}
	return out, err
}

func shortErr(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

// typedToMap renders a typed object as the API server returns it, apiVersion and kind set.
func typedToMap(obj client.Object, scheme *runtime.Scheme) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return m, nil
}

// clean drops what is noise in a snapshot: managedFields and the last-applied annotation.
func clean(m map[string]any) map[string]any {
	unstructured.RemoveNestedField(m, "metadata", "managedFields")
	unstructured.RemoveNestedField(m, "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")
	if a, found, _ := unstructured.NestedMap(m, "metadata", "annotations"); found && len(a) == 0 {
		unstructured.RemoveNestedField(m, "metadata", "annotations")
	}
	return m
}

// Write writes objects as multi-document YAML headed by a comment, or as a JSON List.
func Write(w io.Writer, format string, objs []map[string]any, header string) error {
	slices.SortStableFunc(objs, func(a, b map[string]any) int {
		ua, ub := unstructured.Unstructured{Object: a}, unstructured.Unstructured{Object: b}
		return cmp.Or(cmp.Compare(kindRank(ua.GetKind()), kindRank(ub.GetKind())), cmp.Compare(ua.GetKind(), ub.GetKind()),
			cmp.Compare(ua.GetNamespace(), ub.GetNamespace()), cmp.Compare(ua.GetName(), ub.GetName()))
	})
	if format == "json" {
		items := make([]any, len(objs))
		for i := range objs {
			items[i] = objs[i]
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	}
	if _, err := fmt.Fprintf(w, "# %s\n", header); err != nil {
		return err
	}
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// kindRank orders a snapshot as a person reads it: catalogs and groups, then the operators.
func kindRank(kind string) int {
	order := []string{"ConfigMap", "CatalogSource", "OperatorGroup", "Subscription", "UpgradeGate", "ClusterServiceVersion", "InstallPlan", "OperatorCondition", "PackageManifest",
		"ClusterCatalog", CatalogContentKind, "ClusterExtension", "ExtensionGate"}
	if i := slices.Index(order, kind); i >= 0 {
		return i
	}
	return len(order) // operands last
}

// servedOrOwned reads an owned kind in a version its CRD serves, as the manager does (an
// operand the CSV declares in v1beta2 is listed in v1beta3 when only that is served). Where
// the CRD may not be read, it trusts the version the CSV declares.
type servedOrOwned struct{ crds input.ServedByCRD }

// Check implements input.OperandKinds.
func (s servedOrOwned) Check(ctx context.Context, k input.OwnedKind) (input.OwnedKind, error) {
	as, err := s.crds.Check(ctx, k)
	if apierrors.IsForbidden(err) {
		return k, nil
	}
	return as, err
}
