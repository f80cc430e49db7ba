package gather

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/tollgate-dev/tollgate/apis"
	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	packagesv1 "github.com/tollgate-dev/tollgate/apis/packages/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// InputAPIVersion is the version of the input document this package builds.
const InputAPIVersion = "tollgate.dev/input/v1"

// Config is the part of the manager's configuration the policies see as input.config.
type Config struct {
	// GlobalCatalogNamespace holds the catalogs every namespace can use; default "olm".
	GlobalCatalogNamespace string
	// DefaultMode is the mode of a gate whose spec.mode is empty; default "Enforce".
	DefaultMode string
}

func (c Config) withDefaults() Config {
	if c.GlobalCatalogNamespace == "" {
		c.GlobalCatalogNamespace = "olm"
	}
	if c.DefaultMode == "" {
		c.DefaultMode = string(tollgatev1alpha1.ModeEnforce)
	}
	return c
}

// Builder reads the state one Subscription's decision depends on and builds its input
// document. It only reads; Reader is the informer cache in the manager and a Snapshot in the
// CLI, so both evaluate exactly the same document.
type Builder struct {
	Reader client.Reader
	Config Config
	// Now is the clock; nil means time.Now. Injected so tests are repeatable.
	Now func() time.Time
}

// Input is one Subscription's input document plus the typed objects the controller acts on.
type Input struct {
	// Doc is the input document, exactly as policies/README.md describes it.
	Doc                 map[string]any
	Subscription        *v1alpha1.Subscription
	InstalledCSV        *v1alpha1.ClusterServiceVersion
	Gate                *tollgatev1alpha1.UpgradeGate
	PendingInstallPlans []v1alpha1.InstallPlan
	// OperandGVKs are the kinds the installed CSV owns, so the controller can watch them.
	OperandGVKs []schema.GroupVersionKind
}

var scheme = apis.NewScheme()

// Build gathers the input for the Subscription key. It returns (nil, nil) when the
// Subscription does not exist. Any other missing object is null (or an empty list) in the
// document, never an error: the policies turn absence into conditions. Other read errors are
// returned, wrapped with what was being read.
func (b *Builder) Build(ctx context.Context, key types.NamespacedName) (*Input, error) {
	cfg := b.Config.withDefaults()
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	g := &gatherer{r: b.Reader}

	sub := &v1alpha1.Subscription{}
	if found, err := g.get(ctx, key, sub); err != nil || !found {
		return nil, err
	}
	ns := sub.Namespace
	in := &Input{Subscription: sub}

	// The installed CSV says what runs now: its phase, and the CRDs whose instances
	// (operands) tell us whether the operator is healthy enough to be replaced.
	in.InstalledCSV = g.csv(ctx, ns, sub.Status.InstalledCSV)
	// The current CSV is what OLM wants to move to; the policies compare the two.
	currentCSV := in.InstalledCSV
	if sub.Status.CurrentCSV != sub.Status.InstalledCSV {
		currentCSV = g.csv(ctx, ns, sub.Status.CurrentCSV)
	}

	// The plan the Subscription references drives InstallPlanMissing/Failed/Awaiting.
	var plan *v1alpha1.InstallPlan
	if ref := sub.Status.InstallPlanRef; ref != nil && ref.Name != "" {
		plan = &v1alpha1.InstallPlan{}
		if found, _ := g.get(ctx, types.NamespacedName{Namespace: cmp.Or(ref.Namespace, ns), Name: ref.Name}, plan); !found {
			plan = nil
		}
	}

	// Pending plans are what Tollgate may approve; their other CSVs are the peers whose
	// decisions must also allow the plan (OLM bundles a namespace's installs into one plan).
	in.PendingInstallPlans = g.pendingPlans(ctx, ns, sub.Status.CurrentCSV)
	peers := g.peers(ctx, ns, sub.Status.CurrentCSV, in.PendingInstallPlans)

	// Catalogs: the visible ones make CatalogSourcesUnhealthy; only the source one can deny.
	catalogs := g.catalogs(ctx, ns, cfg.GlobalCatalogNamespace)
	var source *v1alpha1.CatalogSource
	if sub.Spec != nil && sub.Spec.CatalogSource != "" {
		source = &v1alpha1.CatalogSource{}
		if found, _ := g.get(ctx, types.NamespacedName{Namespace: cmp.Or(sub.Spec.CatalogSourceNamespace, ns), Name: sub.Spec.CatalogSource}, source); !found {
			source = nil
		}
	}

	// The OperatorCondition named after the installed CSV carries Upgradeable/Upgrading:
	// the operator's own word on whether it may be replaced now.
	var opCond *operatorsv2.OperatorCondition
	if sub.Status.InstalledCSV != "" {
		opCond = &operatorsv2.OperatorCondition{}
		if found, _ := g.get(ctx, types.NamespacedName{Namespace: ns, Name: sub.Status.InstalledCSV}, opCond); !found {
			opCond = nil
		}
	}

	// The OperatorGroup's target namespaces are where the operands live.
	group := g.operatorGroup(ctx, ns)

	// The PackageManifest knows the channel head, so a replacement shows even before OLM
	// has moved currentCSV. Only accepted when it comes from the Subscription's own catalog.
	pkg := g.packageManifest(ctx, ns, sub)

	// Operands: instances of the CRDs the installed CSV owns, for health aggregation.
	in.OperandGVKs = ownedGVKs(in.InstalledCSV)
	operands := g.operands(ctx, in.OperandGVKs, targetNamespaces(group))

	// The gate holds the admin's overrides and our previous decision.
	in.Gate = &tollgatev1alpha1.UpgradeGate{}
	if found, _ := g.get(ctx, key, in.Gate); !found {
		in.Gate = nil
	}

	if g.err != nil {
		return nil, g.err
	}

	in.Doc = map[string]any{
		"apiVersion":          InputAPIVersion,
		"subscription":        object(sub),
		"installedCSV":        object(in.InstalledCSV),
		"currentCSV":          object(currentCSV),
		"installPlan":         object(plan),
		"pendingInstallPlans": objects(in.PendingInstallPlans),
		"installPlanPeers":    peers,
		"catalogSources":      objects(catalogs),
		"sourceCatalog":       object(source),
		"operatorCondition":   object(opCond),
		"operatorGroup":       object(group),
		"packageManifest":     object(pkg),
		"operands":            operands,
		"gate":                object(in.Gate),
		"now":                 now().UTC().Format(time.RFC3339),
		"config": map[string]any{
			"globalCatalogNamespace": cfg.GlobalCatalogNamespace,
			"defaultMode":            cfg.DefaultMode,
		},
	}
	return in, nil
}

// gatherer keeps the first hard read error so the gathering code reads straight through.
type gatherer struct {
	r   client.Reader
	err error
}

func (g *gatherer) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// absent says whether err means "this object or kind is not there": not found, or a kind the
// cluster does not serve (no OperatorCondition v2, no package server).
func absent(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err) || runtime.IsNotRegisteredError(err)
}

// get reads one object; found is false when it is absent. A hard error is also recorded.
func (g *gatherer) get(ctx context.Context, key types.NamespacedName, obj client.Object) (bool, error) {
	err := g.r.Get(ctx, key, obj)
	switch {
	case err == nil:
		return true, nil
	case absent(err):
		return false, nil
	default:
		err = fmt.Errorf("get %s %s: %w", kindOf(obj), key, err)
		g.fail(err)
		return false, err
	}
}

func (g *gatherer) list(ctx context.Context, list client.ObjectList, opts ...client.ListOption) bool {
	err := g.r.List(ctx, list, opts...)
	switch {
	case err == nil:
		return true
	case absent(err):
		return false
	default:
		g.fail(fmt.Errorf("list %s: %w", kindOf(list), err))
		return false
	}
}

func (g *gatherer) csv(ctx context.Context, ns, name string) *v1alpha1.ClusterServiceVersion {
	if name == "" {
		return nil
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if found, _ := g.get(ctx, types.NamespacedName{Namespace: ns, Name: name}, csv); !found {
		return nil
	}
	return csv
}

func (g *gatherer) pendingPlans(ctx context.Context, ns, currentCSV string) []v1alpha1.InstallPlan {
	if currentCSV == "" {
		return nil
	}
	var plans v1alpha1.InstallPlanList
	if !g.list(ctx, &plans, client.InNamespace(ns)) {
		return nil
	}
	var pending []v1alpha1.InstallPlan
	for _, p := range plans.Items {
		phase := v1alpha1.InstallPlanPhase("")
		if p.Status != nil {
			phase = p.Status.Phase
		}
		if phase != v1alpha1.InstallPlanPhaseComplete && phase != v1alpha1.InstallPlanPhaseFailed &&
			slices.Contains(p.Spec.ClusterServiceVersionNames, currentCSV) {
			pending = append(pending, p)
		}
	}
	slices.SortFunc(pending, func(a, b v1alpha1.InstallPlan) int { return cmp.Compare(a.Name, b.Name) })
	return pending
}

// peers reports, for every other CSV a pending plan would install, whether its own
// Subscription's gate has decided and which of its denials stand.
func (g *gatherer) peers(ctx context.Context, ns, currentCSV string, plans []v1alpha1.InstallPlan) []any {
	peers := []any{}
	var subs *v1alpha1.SubscriptionList
	for _, p := range plans {
		csvs := slices.Clone(p.Spec.ClusterServiceVersionNames)
		slices.Sort(csvs)
		for _, csv := range slices.Compact(csvs) {
			if csv == currentCSV {
				continue
			}
			if subs == nil {
				subs = &v1alpha1.SubscriptionList{}
				g.list(ctx, subs, client.InNamespace(ns))
			}
			peer := map[string]any{"installPlan": p.Name, "csv": csv, "subscription": nil, "evaluated": false, "blockingCodes": []any{}}
			idx := slices.IndexFunc(subs.Items, func(s v1alpha1.Subscription) bool {
				return s.Status.CurrentCSV == csv || s.Status.InstalledCSV == csv
			})
			if idx >= 0 {
				s := subs.Items[idx]
				peer["subscription"] = map[string]any{"namespace": s.Namespace, "name": s.Name}
				gate := &tollgatev1alpha1.UpgradeGate{}
				if found, _ := g.get(ctx, client.ObjectKeyFromObject(&s), gate); found {
					peer["evaluated"] = gate.Status.Decision.EvaluatedAt != nil
					codes := []any{}
					for _, d := range gate.Status.Decision.Denials {
						if !d.Overridden && d.Code != tollgatev1alpha1.CodeInstallPlanIncludesBlockedOperator {
							codes = append(codes, d.Code)
						}
					}
					peer["blockingCodes"] = codes
				}
			}
			peers = append(peers, peer)
		}
	}
	return peers
}

func (g *gatherer) catalogs(ctx context.Context, ns, global string) []v1alpha1.CatalogSource {
	var all []v1alpha1.CatalogSource
	for _, n := range slices.Compact([]string{ns, global}) {
		var list v1alpha1.CatalogSourceList
		if g.list(ctx, &list, client.InNamespace(n)) {
			all = append(all, list.Items...)
		}
	}
	slices.SortFunc(all, func(a, b v1alpha1.CatalogSource) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return all
}

func (g *gatherer) operatorGroup(ctx context.Context, ns string) *operatorsv1.OperatorGroup {
	var list operatorsv1.OperatorGroupList
	if !g.list(ctx, &list, client.InNamespace(ns)) || len(list.Items) == 0 {
		return nil
	}
	first := slices.MinFunc(list.Items, func(a, b operatorsv1.OperatorGroup) int { return cmp.Compare(a.Name, b.Name) })
	return &first
}

func (g *gatherer) packageManifest(ctx context.Context, ns string, sub *v1alpha1.Subscription) *packagesv1.PackageManifest {
	if sub.Spec == nil || sub.Spec.Package == "" {
		return nil
	}
	pkg := &packagesv1.PackageManifest{}
	if found, _ := g.get(ctx, types.NamespacedName{Namespace: ns, Name: sub.Spec.Package}, pkg); !found {
		return nil
	}
	// The package server may serve the same package from another catalog under this name.
	if pkg.Status.CatalogSource != sub.Spec.CatalogSource ||
		pkg.Status.CatalogSourceNamespace != cmp.Or(sub.Spec.CatalogSourceNamespace, ns) {
		return nil
	}
	return pkg
}

// ownedGVKs maps spec.customresourcedefinitions.owned to kinds: a CRD is named
// <plural>.<group>, so the group is what follows the first dot.
func ownedGVKs(csv *v1alpha1.ClusterServiceVersion) []schema.GroupVersionKind {
	if csv == nil {
		return nil
	}
	var gvks []schema.GroupVersionKind
	for _, crd := range csv.Spec.CustomResourceDefinitions.Owned {
		_, group, ok := strings.Cut(crd.Name, ".")
		if !ok || crd.Version == "" || crd.Kind == "" {
			continue
		}
		gvk := schema.GroupVersionKind{Group: group, Version: crd.Version, Kind: crd.Kind}
		if !slices.Contains(gvks, gvk) {
			gvks = append(gvks, gvk)
		}
	}
	return gvks
}

// targetNamespaces are the OperatorGroup's status.namespaces; nil means all namespaces
// (no group, none listed, or "" listed).
func targetNamespaces(group *operatorsv1.OperatorGroup) []string {
	if group == nil || len(group.Status.Namespaces) == 0 || slices.Contains(group.Status.Namespaces, "") {
		return nil
	}
	return group.Status.Namespaces
}

func (g *gatherer) operands(ctx context.Context, gvks []schema.GroupVersionKind, namespaces []string) []any {
	seen := map[string]bool{}
	var found []*unstructured.Unstructured
	scopes := namespaces
	if scopes == nil {
		scopes = []string{""} // all namespaces
	}
	for _, gvk := range gvks {
		for _, ns := range scopes {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			// A kind that is not served (CRD not yet installed, or removed) has no operands.
			if !g.list(ctx, list, client.InNamespace(ns)) {
				break
			}
			for i := range list.Items {
				item := &list.Items[i]
				// A cluster-scoped kind ignores the namespace: list it once.
				if id := item.GetKind() + "/" + item.GetNamespace() + "/" + item.GetName(); !seen[id] {
					seen[id] = true
					found = append(found, item)
				}
			}
		}
	}
	slices.SortFunc(found, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetKind(), b.GetKind()), cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	out := make([]any, 0, len(found))
	for _, u := range found {
		m := u.DeepCopy().Object
		unstructured.RemoveNestedField(m, "metadata", "managedFields")
		out = append(out, m)
	}
	return out
}

// object renders a typed object as the API server would return it: apiVersion and kind set
// (objects from a cache often have an empty TypeMeta), metadata.managedFields dropped.
// A nil object is null.
func object[T any, PT interface {
	*T
	client.Object
}](obj PT) any {
	if obj == nil {
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		// Our own API types always convert; reaching here is a programming error.
		panic(fmt.Sprintf("convert %T to unstructured: %v", obj, err))
	}
	if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
		m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	}
	unstructured.RemoveNestedField(m, "metadata", "managedFields")
	return m
}

func objects[T any, PT interface {
	*T
	client.Object
}](items []T) []any {
	out := make([]any, 0, len(items))
	for i := range items {
		out = append(out, object[T, PT](&items[i]))
	}
	return out
}

func kindOf(obj runtime.Object) string {
	if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
