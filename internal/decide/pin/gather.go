package pin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// Content reads a catalog's content: catalogd's (*catalogd.Client), or a snapshot's.
type Content interface {
	Catalog(ctx context.Context, src catalogd.Source) (*fbc.Catalog, error)
}

// Gatherer reads the facts of one ClusterExtension: the manager's reads the cluster and
// catalogd, the CLI's a snapshot, so both decide on the same facts.
type Gatherer struct {
	// Reader reads ClusterCatalogs; Operands reads the operands (the manager: its cache, of
	// the kinds Config.OperandKinds lets it read).
	Reader, Operands client.Reader
	Content          Content
	// Mapper maps an operand kind to its resource; nil names the resource after the kind (a
	// snapshot, which lists by kind).
	Mapper meta.RESTMapper
	Config input.Config
	Now    time.Time
}

// Gathered are the facts of one ClusterExtension, the content identities they were read at,
// "<catalog>@<digest ref>", and the operand kinds read.
type Gathered struct {
	Facts
	Digests []string
	// OperandKinds are the kinds the operands were read as: the manager watches them, so that
	// an operand's change decides the pin again.
	OperandKinds []schema.GroupVersionKind
}

// Gather reads what the pin is decided on: the catalogs the extension selects and their
// content (a catalog not Serving, or whose content cannot be read, is a catalog error the
// policies see; a selector that does not parse selects none, and Facts.SelectorError says
// why), and the operands of the installed bundle. The error is a failed read of the cluster.
func (g *Gatherer) Gather(ctx context.Context, gate *tollgatev1alpha1.ExtensionGate, ext *olmv1.ClusterExtension) (Gathered, error) {
	out := Gathered{Facts: Facts{
		Extension: input.Extension{Extension: ext, Gate: gate, CatalogErrors: map[string]string{}},
		Content:   map[string]*fbc.Catalog{}, Config: g.Config, Now: g.Now,
	}}
	catalogs, err := g.selectedCatalogs(ctx, ext)
	var invalid *invalidSelectorError
	if errors.As(err, &invalid) {
		out.SelectorError = invalid.Error()
	} else if err != nil {
		return out, err
	}
	out.Catalogs = catalogs
	for _, c := range catalogs {
		src, why := servedAt(&c)
		if why == "" {
			content, err := g.Content.Catalog(ctx, src)
			if err == nil {
				out.Content[c.Name] = content
				out.Digests = append(out.Digests, c.Name+"@"+src.Ref)
				continue
			}
			why = err.Error()
		}
		out.CatalogErrors[c.Name] = why
	}
	operands, err := input.ReadOperands(ctx, g.Operands, g.operandKinds(out.Facts), g.Config.OperandKinds)
	if err != nil {
		return out, err
	}
	out.Operands, out.Unreadable, out.OperandKinds = operands.Items, operands.Unreadable, operands.Kinds
	return out, nil
}

// selectedCatalogs are the ClusterCatalogs the extension's selector selects (all without one)
// and OLM v1 resolves from, sorted by name: an Unavailable catalog is ignored by OLM v1, so it
// neither serves a bundle nor holds one.
func (g *Gatherer) selectedCatalogs(ctx context.Context, ext *olmv1.ClusterExtension) ([]olmv1.ClusterCatalog, error) {
	selector := labels.Everything()
	if src := ext.Spec.Source.Catalog; src != nil && src.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(src.Selector)
		if err != nil {
			return nil, &invalidSelectorError{err: err}
		}
		selector = s
	}
	list := &olmv1.ClusterCatalogList{}
	if err := g.Reader.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list ClusterCatalogs: %w", err)
	}
	out := slices.DeleteFunc(list.Items, func(c olmv1.ClusterCatalog) bool {
		return !selector.Matches(labels.Set(c.Labels)) || c.Spec.AvailabilityMode == olmv1.AvailabilityModeUnavailable
	})
	slices.SortFunc(out, func(a, b olmv1.ClusterCatalog) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// invalidSelectorError says the extension's catalog selector does not parse: OLM v1 resolves
// nothing for it ("desired catalog selector is invalid"), and the gate follows nothing.
type invalidSelectorError struct{ err error }

func (e *invalidSelectorError) Error() string {
	return fmt.Sprintf("the ClusterExtension's spec.source.catalog.selector is invalid, so OLM v1 resolves nothing for it: %v", e.err)
}

// Served is where c's content is served, when catalogd serves it.
func Served(c *olmv1.ClusterCatalog) (catalogd.Source, bool) {
	src, why := servedAt(c)
	return src, why == ""
}

// servedAt is where c's content is served, or why it cannot be read.
func servedAt(c *olmv1.ClusterCatalog) (catalogd.Source, string) {
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

// operandKinds are the kinds the installed bundle provides (olm.gvk), as a catalog read lists
// it. A catalog that no longer lists it says nothing of it: another bundle's kinds are not
// the installed one's.
func (g *Gatherer) operandKinds(f Facts) []input.OwnedKind {
	ext := f.Extension.Extension
	if ext.Spec.Source.Catalog == nil || ext.Status.Install == nil {
		return nil
	}
	var provided []fbc.GVK
	for _, name := range slices.Sorted(maps.Keys(f.Content)) {
		pkg := f.Content[name].Packages[ext.Spec.Source.Catalog.PackageName]
		if pkg == nil {
			continue
		}
		if b := pkg.Bundle(ext.Status.Install.Bundle.Name); b != nil {
			provided = append(provided, b.Provided()...)
		}
	}
	return g.kinds(provided)
}

// kinds are the operand kinds of gvks, each once (input.ReadOperands leaves out those of a
// built-in group). With a Mapper, a kind the API server does not serve has no instances and is
// left out.
func (g *Gatherer) kinds(gvks []fbc.GVK) []input.OwnedKind {
	var out []input.OwnedKind
	seen := map[fbc.GVK]bool{}
	for _, k := range gvks {
		if seen[k] {
			continue
		}
		seen[k] = true
		gvk := schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
		resource := strings.ToLower(k.Kind) + "s"
		if g.Mapper != nil {
			m, err := g.Mapper.RESTMapping(gvk.GroupKind(), k.Version)
			if err != nil {
				continue
			}
			gvk, resource = m.GroupVersionKind, m.Resource.Resource
		}
		out = append(out, input.OwnedKind{CRD: resource + "." + k.Group, Resource: resource, GroupVersionKind: gvk})
	}
	return out
}
