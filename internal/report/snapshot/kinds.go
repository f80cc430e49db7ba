package snapshot

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The API groups whose every kind and version Tollgate knows (they are in kinds): there, a
// kind or version that is not in kinds is a mistake, not an operand of some CRD.
var wholeGroups = []string{"operators.coreos.com", "packages.operators.coreos.com", "tollgate.dev"}

// kindInfo is what Tollgate knows of a kind.
type kindInfo struct {
	// versions the API server serves it in; the first is the one Tollgate reads. OLM's CRDs
	// have no conversion webhook (strategy None: test/testdata/olm-upstream), so the API
	// server serves an object written in one version in every other with only apiVersion
	// changed, and so does a Snapshot.
	versions []string
	// reads: Tollgate reads it, so it is validated against its Go type and must have a
	// namespace, unless cluster.
	reads bool
	// cluster: the kind is cluster-scoped, so it has no namespace.
	cluster bool
}

var kinds = map[schema.GroupKind]kindInfo{
	{Group: "operators.coreos.com", Kind: "CatalogSource"}:            {versions: []string{"v1alpha1"}, reads: true},
	{Group: "operators.coreos.com", Kind: "ClusterServiceVersion"}:    {versions: []string{"v1alpha1"}, reads: true},
	{Group: "operators.coreos.com", Kind: "InstallPlan"}:              {versions: []string{"v1alpha1"}, reads: true},
	{Group: "operators.coreos.com", Kind: "Subscription"}:             {versions: []string{"v1alpha1"}, reads: true},
	{Group: "operators.coreos.com", Kind: "OperatorCondition"}:        {versions: []string{"v2", "v1"}, reads: true},
	{Group: "operators.coreos.com", Kind: "OperatorGroup"}:            {versions: []string{"v1", "v1alpha2"}, reads: true},
	{Group: "operators.coreos.com", Kind: "Operator"}:                 {versions: []string{"v1"}},
	{Group: "operators.coreos.com", Kind: "OLMConfig"}:                {versions: []string{"v1"}},
	{Group: "packages.operators.coreos.com", Kind: "PackageManifest"}: {versions: []string{"v1"}, reads: true},
	{Group: "tollgate.dev", Kind: "UpgradeGate"}:                      {versions: []string{"v1alpha1"}, reads: true},
	{Group: "", Kind: "ConfigMap"}:                                    {versions: []string{"v1"}, reads: true},
	{Group: "olm.operatorframework.io", Kind: "ClusterExtension"}:     {versions: []string{"v1"}, reads: true, cluster: true},
	{Group: "olm.operatorframework.io", Kind: "ClusterCatalog"}:       {versions: []string{"v1"}, reads: true, cluster: true},
	{Group: "tollgate.dev", Kind: "ExtensionGate"}:                    {versions: []string{"v1alpha1"}, reads: true, cluster: true},
	// A catalog's content as catalogd served it (content.go): a snapshot's own kind.
	{Group: "tollgate.dev", Kind: CatalogContentKind}: {versions: []string{"v1alpha1"}},
}

// served says whether the API server serves gk in version; for a kind not in kinds (an
// operand), only the version it was written in is known.
func served(gk schema.GroupKind, version, written string) bool {
	if info, ok := kinds[gk]; ok {
		return slices.Contains(info.versions, version)
	}
	return version == written
}

// operand says whether gvk is an operand's kind: neither a kind Tollgate reads nor one the
// scheme knows.
func operand(gvk schema.GroupVersionKind) bool {
	_, known := kinds[gvk.GroupKind()]
	return !known && !scheme.Recognizes(gvk)
}

// apiVersions names the versions of a kind in kinds for a person.
func apiVersions(gk schema.GroupKind) string {
	var s []string
	for _, v := range kinds[gk].versions {
		s = append(s, schema.GroupVersion{Group: gk.Group, Version: v}.String())
	}
	return strings.Join(s, " or ")
}

// resolve reads apiVersion and kind and checks them against what the API server serves.
// Unknown kinds in groups with a dot are operands of some CRD and allowed; a kind Tollgate
// reads spelled in another case, a version it is not served in, a kind a whole group does not
// serve, or a kind of a built-in group (no dot) the scheme does not know are errors.
func resolve(obj map[string]any) (schema.GroupVersionKind, error) {
	apiVersion, err := typeString(obj, "apiVersion")
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	kind, err := typeString(obj, "kind")
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || gv.Version == "" {
		return schema.GroupVersionKind{}, fieldErrorf(path{"apiVersion"}, "%q is not GROUP/VERSION (or VERSION for the core group)", apiVersion)
	}
	gvk := gv.WithKind(kind)
	if _, ok := kinds[gvk.GroupKind()]; ok {
		if !served(gvk.GroupKind(), gv.Version, "") {
			return gvk, fieldErrorf(path{"apiVersion"}, "%s is served as %s, not %s", kind, apiVersions(gvk.GroupKind()), apiVersion)
		}
		return gvk, nil
	}
	if i := slices.IndexFunc(wholeGroups, func(g string) bool { return strings.EqualFold(g, gv.Group) }); i >= 0 {
		return gvk, unservedKind(gvk, wholeGroups[i])
	}
	if scheme.Recognizes(gvk) {
		return gvk, nil
	}
	if k := spelledAs(gvk); k != "" {
		return gvk, fieldErrorf(path{"kind"}, "%q is spelled %q (kinds are case-sensitive)", kind, k)
	}
	if !strings.Contains(gv.Group, ".") {
		return gvk, builtinKind(gvk)
	}
	return gvk, nil
}

func typeString(obj map[string]any, field string) (string, error) {
	switch v := obj[field].(type) {
	case string:
		if v != "" {
			return v, nil
		}
	case nil:
	default:
		return "", mismatch(v, "a string", path{field})
	}
	return "", fieldErrorf(path{field}, "missing: every object says its apiVersion and kind")
}

// unservedKind explains a kind that group, one of wholeGroups, does not serve.
func unservedKind(gvk schema.GroupVersionKind, group string) error {
	if group != gvk.Group {
		return fieldErrorf(path{"apiVersion"}, "the API group is spelled %q (groups are lower case)", group)
	}
	if k := spelledAs(gvk); k != "" {
		return fieldErrorf(path{"kind"}, "%q is spelled %q (kinds are case-sensitive)", gvk.Kind, k)
	}
	var names []string
	for gk := range kinds {
		if gk.Group == group {
			names = append(names, gk.Kind)
		}
	}
	slices.Sort(names)
	return fieldErrorf(path{"kind"}, "%s serves no kind %q; its kinds are %s", group, gvk.Kind, strings.Join(names, ", "))
}

// builtinKind explains a kind the scheme does not know in a group without a dot: only the
// API server itself serves such groups, so no CRD can make it real.
func builtinKind(gvk schema.GroupVersionKind) error {
	for gk := range kinds {
		if strings.EqualFold(gk.Kind, gvk.Kind) {
			return fieldErrorf(path{"apiVersion"}, "%q has no API group: %s is served as %s", gvk.GroupVersion().String(), gk.Kind, apiVersions(gk))
		}
	}
	return fieldErrorf(path{"kind"}, "the API server serves no kind %q in %s (a built-in group: custom resources have a group with a dot)", gvk.Kind, gvk.GroupVersion().String())
}

// spelledAs is the kind of kinds or of the scheme that gvk names in another case, or "".
func spelledAs(gvk schema.GroupVersionKind) string {
	for gk := range kinds {
		if gk.Group == gvk.Group && strings.EqualFold(gk.Kind, gvk.Kind) {
			return gk.Kind
		}
	}
	for k := range scheme.KnownTypes(gvk.GroupVersion()) {
		if strings.EqualFold(k, gvk.Kind) {
			return k
		}
	}
	return ""
}

// listItemKind says whether a document of kind gvk is a list to unpack: `v1 List`, whose
// items say their own kind, or `<Kind>List` of a kind served in that version, whose items are
// of that kind. Any other kind ending in List (a CRD's AllowList) is one object.
func listItemKind(gvk schema.GroupVersionKind) (item schema.GroupVersionKind, isList bool) {
	if gvk == (schema.GroupVersionKind{Version: "v1", Kind: "List"}) {
		return schema.GroupVersionKind{}, true
	}
	kind, ok := strings.CutSuffix(gvk.Kind, "List")
	if !ok || kind == "" {
		return schema.GroupVersionKind{}, false
	}
	item = gvk.GroupVersion().WithKind(kind)
	if _, known := kinds[item.GroupKind()]; known {
		return item, served(item.GroupKind(), gvk.Version, "")
	}
	return item, scheme.Recognizes(gvk) && scheme.Recognizes(item)
}

// typedFor is a new Go object of the kind gvk, to validate a document against, when Tollgate
// has a type for it (in the version Tollgate reads, if the scheme lacks the written one).
func typedFor(gvk schema.GroupVersionKind) (runtime.Object, bool) {
	if obj, err := scheme.New(gvk); err == nil {
		return obj, true
	}
	if info, ok := kinds[gvk.GroupKind()]; ok && info.reads {
		obj, err := scheme.New(gvk.GroupKind().WithVersion(info.versions[0]))
		return obj, err == nil
	}
	return nil, false
}

// validate checks obj, of kind gvk, against its Go type when Tollgate has one, and every
// object's metadata against ObjectMeta: a value that does not fit is an error naming its
// field, never a silent zero.
func validate(obj map[string]any, gvk schema.GroupVersionKind) error {
	if typed, ok := typedFor(gvk); ok {
		if err := checkType(obj, reflect.TypeOf(typed), nil, true); err != nil {
			return err
		}
		// What the converter refuses, Get could not return later.
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, typed); err != nil {
			return fmt.Errorf("cannot be read as a %s: %w", gvk.Kind, err)
		}
		if err := checkValues(obj, gvk.GroupKind()); err != nil {
			return err
		}
	} else if err := checkType(obj["metadata"], reflect.TypeFor[metav1.ObjectMeta](), path{"metadata"}, true); err != nil {
		return err
	}
	return checkNames(&unstructured.Unstructured{Object: obj}, kinds[gvk.GroupKind()])
}

// checkNames requires a name, and for a kind Tollgate reads a namespace (none for a
// cluster-scoped one), both as the API server would accept them: a name that is not exactly
// the one another object refers to (a trailing space, a capital) would make the object
// silently not found.
func checkNames(u *unstructured.Unstructured, info kindInfo) error {
	name, ns := u.GetName(), u.GetNamespace()
	switch {
	case name == "":
		return fieldErrorf(path{"metadata", "name"}, "missing: every object has a name")
	case info.cluster && ns != "":
		return fieldErrorf(path{"metadata", "namespace"}, "%q: a %s is cluster-scoped and has no namespace", ns, u.GetKind())
	case info.reads && !info.cluster && ns == "":
		return fieldErrorf(path{"metadata", "namespace"}, "missing: every %s lives in a namespace", u.GetKind())
	}
	if info.reads {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return fieldErrorf(path{"metadata", "name"}, "%q is not a name the API server accepts: %s", name, strings.Join(errs, "; "))
		}
	}
	if ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fieldErrorf(path{"metadata", "namespace"}, "%q is not a namespace the API server accepts: %s", ns, strings.Join(errs, "; "))
		}
	}
	return nil
}
