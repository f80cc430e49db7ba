package input

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
	"github.com/tollgate-dev/tollgate/policies"
)

// APIVersion is the version of the input document this package builds.
const APIVersion = "tollgate.dev/input/v1"

// DefaultGlobalCatalogNamespace is OLM's global catalog namespace on a vanilla install.
const DefaultGlobalCatalogNamespace = "olm"

// Config is the part of the manager's configuration the policies see as input.config.
type Config struct {
	// GlobalCatalogNamespace holds the catalogs every namespace can use; default
	// DefaultGlobalCatalogNamespace.
	GlobalCatalogNamespace string
	// DefaultMode is the mode of a gate whose spec.mode is empty; default
	// tollgatev1alpha1.DefaultMode.
	DefaultMode tollgatev1alpha1.Mode
	// OperandKinds decides which kinds the installed CSV owns are operands to read (the manager
	// checks the CRDs and its own access). Nil trusts the CSV, for a snapshot, which holds no
	// CRDs; kinds of a built-in group are refused either way. The policies do not see it.
	OperandKinds OperandKinds
}

// WithDefaults fills the empty fields with their defaults.
func (c Config) WithDefaults() Config {
	if c.GlobalCatalogNamespace == "" {
		c.GlobalCatalogNamespace = DefaultGlobalCatalogNamespace
	}
	if c.DefaultMode == "" {
		c.DefaultMode = tollgatev1alpha1.DefaultMode
	}
	return c
}

// Builder reads the state one Subscription's decision depends on and builds its input
// document. It only reads; Reader is the informer cache in the manager and a snapshot in the
// CLI, so both evaluate exactly the same document.
type Builder struct {
	Reader client.Reader
	Config Config
	// Now is the clock; nil means time.Now. Injected so tests are repeatable.
	Now func() time.Time
}

// Document is one Subscription's input document plus the typed objects the callers act on.
type Document struct {
	// Doc is the input document, exactly as policies/README.md describes it. Its
	// installPlanPeers is empty: the peers are other Subscriptions' decisions, which the
	// approval package evaluates and sets with SetPeers.
	Doc          map[string]any
	Subscription *v1alpha1.Subscription
	InstalledCSV *v1alpha1.ClusterServiceVersion
	// ReplacedCSV is the document's replacedCSV: without an installed CSV, the one the
	// pending upgrade replaces; nil otherwise.
	ReplacedCSV         *v1alpha1.ClusterServiceVersion
	Gate                *tollgatev1alpha1.UpgradeGate
	PendingInstallPlans []v1alpha1.InstallPlan
	// InstallPlan is the plan the Subscription references (status.installPlanRef), nil when
	// there is none; it stays referenced once complete, when it is no longer pending.
	InstallPlan *v1alpha1.InstallPlan
	// OperatorCondition is the installed CSV's OperatorCondition, nil when there is none.
	OperatorCondition *operatorsv2.OperatorCondition
	// OperandGVKs are the operand kinds read (owned by the installed CSV, served by a CRD and
	// readable), so the controller can watch them.
	OperandGVKs []schema.GroupVersionKind
	// OperandNamespaces are where those operands were read: the OperatorGroup's target
	// namespaces; nil means every namespace.
	OperandNamespaces []string
	// UnreadableOperandKinds are the operand kinds Tollgate may not read (the document's
	// unreadableOperandKinds), so the manager can count them in a metric.
	UnreadableOperandKinds []schema.GroupVersionKind

	// build builds Doc from what Read gathered; nil once Doc is built (Complete).
	build func()
}

// Complete builds Doc, the input document, from the objects Read gathered; nothing when
// Doc is built already. Building it converts every object read, the larger part of a
// gather's cost, which a caller that looks at the typed objects only need not pay.
func (d *Document) Complete() *Document {
	if d.build != nil {
		d.build()
		d.build = nil
	}
	return d
}

// SetDependency sets the document's dependency (policies/README.md): its Subscription is
// the one plan would create for a package another bundle of the plan requires.
func (d *Document) SetDependency(plan *v1alpha1.InstallPlan) {
	d.Doc["dependency"] = map[string]any{"installPlan": plan.Name}
}

// SetPeers sets installPlanPeers (policies/README.md) in the document.
func (d *Document) SetPeers(peers []any) { d.Doc["installPlanPeers"] = peers }

var scheme = apis.NewScheme()

// state is what Build read, before it becomes a document.
type state struct {
	sub, currentCSV             client.Object
	installedCSV                *v1alpha1.ClusterServiceVersion
	replacedCSV                 *v1alpha1.ClusterServiceVersion // only when installedCSV is not reported
	plan, source, opCond, group client.Object
	groups                      []operatorsv1.OperatorGroup
	pkg, gate                   client.Object
	pending                     []v1alpha1.InstallPlan
	catalogs                    []v1alpha1.CatalogSource
	operands                    []any
	operandKinds                []OwnedKind
	targets                     []string // the OperatorGroup's target namespaces; nil: all
	unreadable                  []*UnreadableError
}

// Build gathers the input for the Subscription key. It returns (nil, nil) when the
// Subscription does not exist. Any other missing object is null (or an empty list) in the
// document, never an error: the policies turn absence into conditions. Other read errors are
// returned, wrapped with what was being read.
func (b *Builder) Build(ctx context.Context, key types.NamespacedName) (*Document, error) {
	d, err := b.Read(ctx, key)
	if d == nil || err != nil {
		return nil, err
	}
	return d.Complete(), nil
}

// Read is Build without the input document: the Document's typed objects are read, its Doc
// is nil until Complete builds it.
func (b *Builder) Read(ctx context.Context, key types.NamespacedName) (*Document, error) {
	cfg := b.Config.WithDefaults()
	g := &gatherer{r: b.Reader}
	sub := &v1alpha1.Subscription{}
	if found, err := g.get(ctx, key, sub); err != nil || !found {
		return nil, err
	}
	return b.read(ctx, g, sub, cfg)
}

// BuildFor gathers the input for sub, a Subscription that need not exist: the one an
// InstallPlan would create for a dependency, decided before OLM creates it.
func (b *Builder) BuildFor(ctx context.Context, sub *v1alpha1.Subscription) (*Document, error) {
	d, err := b.read(ctx, &gatherer{r: b.Reader}, sub, b.Config.WithDefaults())
	if err != nil {
		return nil, err
	}
	return d.Complete(), nil
}

func (b *Builder) read(ctx context.Context, g *gatherer, sub *v1alpha1.Subscription, cfg Config) (*Document, error) {
	d := &Document{Subscription: sub}
	st := g.read(ctx, sub, cfg)
	if g.err != nil {
		return nil, g.err
	}
	d.InstalledCSV, d.ReplacedCSV, d.PendingInstallPlans = st.installedCSV, st.replacedCSV, st.pending
	d.OperandGVKs, d.OperandNamespaces = gvks(st.operandKinds), st.targets
	for _, u := range st.unreadable {
		d.UnreadableOperandKinds = append(d.UnreadableOperandKinds, u.Kind.GroupVersionKind)
	}
	if gate, ok := st.gate.(*tollgatev1alpha1.UpgradeGate); ok {
		d.Gate = gate
	}
	if oc, ok := st.opCond.(*operatorsv2.OperatorCondition); ok {
		d.OperatorCondition = oc
	}
	if plan, ok := st.plan.(*v1alpha1.InstallPlan); ok {
		d.InstallPlan = plan
	}
	d.build = func() {
		d.Doc = st.document(cfg, b.now())
		d.Doc["move"] = policies.SubscriptionMove(d.Doc).Data()
	}
	return d, nil
}

func (b *Builder) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// read gathers every object the decision of sub depends on; a hard read error is left in g.err.
func (g *gatherer) read(ctx context.Context, sub *v1alpha1.Subscription, cfg Config) *state {
	ns := sub.Namespace
	st := &state{sub: sub}
	// The installed CSV says what runs now: its phase, and the CRDs whose instances
	// (operands) tell us whether the operator is healthy enough to be replaced.
	st.installedCSV = g.csv(ctx, ns, sub.Status.InstalledCSV)
	st.currentCSV = nilIfAbsent(st.installedCSV)
	// The current CSV is what OLM wants to move to; the policies compare the two.
	if sub.Status.CurrentCSV != sub.Status.InstalledCSV {
		st.currentCSV = nilIfAbsent(g.csv(ctx, ns, sub.Status.CurrentCSV))
	}
	// The plan the Subscription references drives InstallPlanMissing/Failed/Awaiting.
	if ref := sub.Status.InstallPlanRef; ref != nil && ref.Name != "" {
		st.plan = g.optional(ctx, cmp.Or(ref.Namespace, ns), ref.Name, &v1alpha1.InstallPlan{})
	}
	// Pending plans are what Tollgate may approve.
	st.pending = g.pendingPlans(ctx, ns, sub.Status.CurrentCSV)
	// Catalogs: the visible ones make CatalogSourcesUnhealthy; only the source one can deny.
	st.catalogs = g.catalogs(ctx, ns, cfg.GlobalCatalogNamespace)
	if sub.Spec != nil && sub.Spec.CatalogSource != "" {
		st.source = g.optional(ctx, cmp.Or(sub.Spec.CatalogSourceNamespace, ns), sub.Spec.CatalogSource, &v1alpha1.CatalogSource{})
	}
	// A recreated Subscription reports no installed CSV while the CSV its plan replaces still
	// runs: that operator is the one being replaced, and OLM checks it (the new CSV's
	// spec.replaces), so its OperatorCondition and operands are read as the installed CSV's.
	checked := st.installedCSV
	if sub.Status.InstalledCSV == "" {
		st.replacedCSV = g.csv(ctx, ns, replacedName(st.pending, st.currentCSV, sub.Status.CurrentCSV))
		checked = st.replacedCSV
	}
	// The OperatorCondition named after that CSV carries Upgradeable/Upgrading: the operator's
	// own word on whether it may be replaced now.
	if name := checkedName(sub, checked); name != "" {
		st.opCond = g.optional(ctx, ns, name, &operatorsv2.OperatorCondition{})
	}
	// The OperatorGroup's target namespaces are where the operands live. OLM acts only in a
	// namespace with exactly one; the policies hold an upgrade beside several.
	st.groups = g.operatorGroups(ctx, ns)
	st.group = nilIfAbsent(onlyGroup(st.groups))
	// The PackageManifest knows the channel head, so a replacement shows even before OLM
	// has moved currentCSV. Only accepted when it comes from the Subscription's own catalog.
	st.pkg = nilIfAbsent(g.packageManifest(ctx, ns, sub))
	// Operands: instances of the CRDs the installed CSV owns, for health aggregation. Only
	// kinds a CRD serves are read; those Tollgate may not read make health Unknown.
	kinds, unreadable := g.operandKinds(ctx, checked, cfg.OperandKinds)
	var refused []*UnreadableError
	st.targets = targetNamespaces(st.groups)
	st.operands, st.operandKinds, refused = g.operands(ctx, kinds, st.targets)
	st.unreadable = append(unreadable, refused...)
	// The gate holds the admin's overrides and mode.
	st.gate = g.optional(ctx, ns, sub.Name, &tollgatev1alpha1.UpgradeGate{})
	return st
}

// document is the input document of st, as policies/README.md describes it.
func (st *state) document(cfg Config, now time.Time) map[string]any {
	return map[string]any{
		"apiVersion":             APIVersion,
		"subscription":           object(st.sub),
		"installedCSV":           object(nilIfAbsent(st.installedCSV)),
		"currentCSV":             object(st.currentCSV),
		"installPlan":            object(st.plan),
		"pendingInstallPlans":    objects(st.pending),
		"installPlanPeers":       []any{},
		"catalogSources":         objects(st.catalogs),
		"sourceCatalog":          object(st.source),
		"operatorCondition":      object(st.opCond),
		"operatorGroup":          object(st.group),
		"operatorGroups":         objects(st.groups),
		"replacedCSV":            object(nilIfAbsent(st.replacedCSV)),
		"packageManifest":        object(st.pkg),
		"operands":               st.operands,
		"unreadableOperandKinds": unreadableData(st.unreadable),
		"gate":                   object(st.gate),
		"dependency":             nil,
		"versions":               st.versions(),
		"now":                    now.UTC().Format(time.RFC3339),
		"config": map[string]any{
			"globalCatalogNamespace": cfg.GlobalCatalogNamespace,
			"defaultMode":            string(cfg.DefaultMode),
		},
	}
}

// CatalogDocument is an input document whose visible catalogs are catalogs and which has no
// Subscription objects: the policies validate every catalog a Subscription can see, so it
// validates these with their rules as they are.
func CatalogDocument(catalogs []v1alpha1.CatalogSource, cfg Config, now time.Time) map[string]any {
	cfg = cfg.WithDefaults()
	sub := &v1alpha1.Subscription{}
	sub.Namespace, sub.Name = "tollgate-eval", "catalog-validation"
	sub.Spec = &v1alpha1.SubscriptionSpec{}
	return (&state{sub: sub, catalogs: catalogs}).document(cfg, now)
}

// nilIfAbsent turns a nil typed pointer into a nil interface, so object() sees null.
func nilIfAbsent[T any, PT interface {
	*T
	client.Object
}](obj PT) client.Object {
	if obj == nil {
		return nil
	}
	return obj
}

// optional reads one object that may be absent: nil when it is (or on a hard error, which
// g records).
func (g *gatherer) optional(ctx context.Context, ns, name string, obj client.Object) client.Object {
	if found, _ := g.get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj); !found {
		return nil
	}
	return obj
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
	if g.optional(ctx, ns, name, csv) == nil {
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

// operatorGroups are the OperatorGroups in ns, by name.
func (g *gatherer) operatorGroups(ctx context.Context, ns string) []operatorsv1.OperatorGroup {
	var list operatorsv1.OperatorGroupList
	if !g.list(ctx, &list, client.InNamespace(ns)) {
		return nil
	}
	slices.SortFunc(list.Items, func(a, b operatorsv1.OperatorGroup) int { return cmp.Compare(a.Name, b.Name) })
	return list.Items
}

// onlyGroup is the namespace's OperatorGroup when it has exactly one, else nil: beside a
// second group OLM refuses to act (TooManyOperatorGroups), and neither is the operator's.
func onlyGroup(groups []operatorsv1.OperatorGroup) *operatorsv1.OperatorGroup {
	if len(groups) != 1 {
		return nil
	}
	return &groups[0]
}

// replacedName is the CSV that current replaces, as OLM will check it after approval: what a
// pending plan says (its bundle lookup or its CSV step), or the spec.replaces of the current
// CSV when it already exists; "" when nothing says.
func replacedName(pending []v1alpha1.InstallPlan, currentCSV client.Object, current string) string {
	for i := range pending {
		if r := pending[i].ReplacesOf(current); r != "" {
			return r
		}
	}
	if csv, ok := currentCSV.(*v1alpha1.ClusterServiceVersion); ok && csv.Name == current {
		return csv.Spec.Replaces
	}
	return ""
}

// checkedName is the name of the CSV whose OperatorCondition the decision reads: the installed
// CSV the Subscription reports, or else the replaced CSV found; "" on a first install.
func checkedName(sub *v1alpha1.Subscription, replaced *v1alpha1.ClusterServiceVersion) string {
	if sub.Status.InstalledCSV != "" || replaced == nil {
		return sub.Status.InstalledCSV
	}
	return replaced.Name
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

// object renders an object as the API server would return it: apiVersion and kind set
// (objects from a cache often have an empty TypeMeta), metadata.managedFields dropped.
// A nil object is null.
func object(obj client.Object) any {
	if obj == nil {
		return nil
	}
	_, _ = Trim(obj) // the gathered objects are the gatherer's own copies
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		// Our own API types always convert; reaching here is a programming error.
		panic(fmt.Sprintf("convert %T to unstructured: %v", obj, err))
	}
	if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
		m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	}
	if _, ok := obj.(*v1alpha1.InstallPlan); ok {
		dropManifests(m)
	}
	return m
}

// dropManifests removes status.plan[].resource.manifest from an InstallPlan's map: the objects a
// plan would create are not what is decided on, and a CRD's manifest alone can weigh more than
// the rest of the document.
func dropManifests(plan map[string]any) {
	status, _ := plan["status"].(map[string]any)
	steps, _ := status["plan"].([]any)
	for _, step := range steps {
		if step, ok := step.(map[string]any); ok {
			if res, ok := step["resource"].(map[string]any); ok {
				delete(res, "manifest")
			}
		}
	}
}

func objects[T any, PT interface {
	*T
	client.Object
}](items []T) []any {
	out := make([]any, 0, len(items))
	for i := range items {
		out = append(out, object(PT(&items[i])))
	}
	return out
}

func kindOf(obj runtime.Object) string {
	if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
