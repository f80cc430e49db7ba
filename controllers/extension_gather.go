package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// gathered are the facts of one ClusterExtension, and the content identities they were read at.
type gathered struct {
	pin.Facts
	digests []string
}

// gather reads what the pin is decided on: the catalogs the extension selects and their
// content (a catalog not Serving, or whose content cannot be read, is a catalog error the
// policies see), and the operands of the installed bundle.
func (r *ExtensionReconciler) gather(ctx context.Context, gate *tollgatev1alpha1.ExtensionGate, ext *olmv1.ClusterExtension) (gathered, error) {
	g := gathered{Facts: pin.Facts{
		Extension: input.Extension{Extension: ext, Gate: gate, CatalogErrors: map[string]string{}},
		Content:   map[string]*fbc.Catalog{}, Config: r.Input, Now: r.now(),
	}}
	catalogs, err := r.selectedCatalogs(ctx, ext)
	if err != nil {
		return g, err
	}
	g.Catalogs = catalogs
	for _, c := range catalogs {
		src, why := catalogSource(&c)
		if why == "" {
			content, err := r.Catalogs.Catalog(ctx, src)
			if err == nil {
				g.Content[c.Name] = content
				g.digests = append(g.digests, c.Name+"@"+src.Ref)
				continue
			}
			why = err.Error()
		}
		g.CatalogErrors[c.Name] = why
	}
	operands, unreadable, err := input.ReadOperands(ctx, r.APIReader, r.operandKinds(g.Facts))
	if err != nil {
		return g, err
	}
	g.Operands, g.Unreadable = operands, unreadable
	return g, nil
}

// selectedCatalogs are the ClusterCatalogs the extension's selector selects (all without one),
// sorted by name.
func (r *ExtensionReconciler) selectedCatalogs(ctx context.Context, ext *olmv1.ClusterExtension) ([]olmv1.ClusterCatalog, error) {
	selector := labels.Everything()
	if src := ext.Spec.Source.Catalog; src != nil && src.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(src.Selector)
		if err != nil {
			return nil, fmt.Errorf("ClusterExtension %s: spec.source.catalog.selector: %w", ext.Name, err)
		}
		selector = s
	}
	list := &olmv1.ClusterCatalogList{}
	if err := r.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list ClusterCatalogs: %w", err)
	}
	// An Unavailable catalog stays selected: catalogd does not serve it, so it holds.
	out := slices.DeleteFunc(list.Items, func(c olmv1.ClusterCatalog) bool { return !selector.Matches(labels.Set(c.Labels)) })
	slices.SortFunc(out, func(a, b olmv1.ClusterCatalog) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// catalogSource is where c's content is served, or why it cannot be read.
func catalogSource(c *olmv1.ClusterCatalog) (catalogd.Source, string) {
	serving := meta.FindStatusCondition(c.Status.Conditions, "Serving")
	switch {
	case serving == nil || serving.Status != metav1.ConditionTrue:
		state := "no Serving condition"
		if serving != nil {
			state = fmt.Sprintf("Serving=%s (%s: %s)", serving.Status, serving.Reason, text.Escape(serving.Message))
		}
		return catalogd.Source{}, "catalogd does not serve it: " + state
	case c.Status.URLs == nil || c.Status.URLs.Base == "":
		return catalogd.Source{}, "it has no status.urls.base"
	case c.Status.ResolvedSource == nil || c.Status.ResolvedSource.Image == nil:
		return catalogd.Source{}, "it has no status.resolvedSource.image.ref"
	}
	return catalogd.Source{Catalog: c.Name, Base: c.Status.URLs.Base, Ref: c.Status.ResolvedSource.Image.Ref}, ""
}

// operandKinds are the kinds the installed bundle provides (olm.gvk), as the API server serves
// them. When no catalog read lists the installed bundle, every bundle of its package speaks
// for it: more operands read, never fewer.
func (r *ExtensionReconciler) operandKinds(f pin.Facts) []input.OwnedKind {
	ext := f.Extension.Extension
	if ext.Spec.Source.Catalog == nil || ext.Status.Install == nil {
		return nil
	}
	var provided []fbc.GVK
	var all []fbc.GVK
	for _, content := range f.Content {
		pkg := content.Packages[ext.Spec.Source.Catalog.PackageName]
		if pkg == nil {
			continue
		}
		if b := pkg.Bundle(ext.Status.Install.Bundle.Name); b != nil {
			provided = append(provided, b.Provided()...)
		}
		for _, b := range pkg.Bundles {
			all = append(all, b.Provided()...)
		}
	}
	if len(provided) == 0 {
		provided = all
	}
	return r.servedKinds(provided)
}

// servedKinds maps kinds to their resources; a kind the API server does not serve has no
// instances to read.
func (r *ExtensionReconciler) servedKinds(gvks []fbc.GVK) []input.OwnedKind {
	var out []input.OwnedKind
	seen := map[fbc.GVK]bool{}
	for _, k := range gvks {
		if seen[k] || input.BuiltinGroup(k.Group) {
			continue
		}
		seen[k] = true
		m, err := r.RESTMapper().RESTMapping(schema.GroupKind{Group: k.Group, Kind: k.Kind}, k.Version)
		if err != nil {
			continue
		}
		out = append(out, input.OwnedKind{
			CRD: m.Resource.Resource + "." + k.Group, Resource: m.Resource.Resource,
			GroupVersionKind: m.GroupVersionKind,
		})
	}
	return out
}
