package input

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/policies"
)

// Extension is what an extension document (policies/README.md, "Extension document, version
// 1") is built from, apart from the candidate: the facts of one OLM v1 ClusterExtension.
type Extension struct {
	Extension *olmv1.ClusterExtension
	// Catalogs are the ClusterCatalogs its selector selects, sorted by name.
	Catalogs []olmv1.ClusterCatalog
	// CatalogErrors say, by catalog name, why a selected catalog's content was not read.
	CatalogErrors map[string]string
	Gate          *tollgatev1alpha1.ExtensionGate
	// Operands are instances of the kinds the installed bundle provides (ReadOperands).
	Operands   []any
	Unreadable []*UnreadableError
}

// ExtensionCandidate is one bundle the extension could be moved to, as the document says it.
type ExtensionCandidate struct {
	Catalog      string
	Package      string
	Bundle       fbc.Bundle
	Version      string
	Channels     []string
	Deprecations []fbc.Deprecation
}

// Document is the extension document for candidate (nil: no successor is being decided).
func (x *Extension) Document(candidate *ExtensionCandidate, cfg Config, now time.Time) map[string]any {
	cfg = cfg.WithDefaults()
	doc := map[string]any{
		"apiVersion":             policies.ExtensionAPIVersion,
		"extension":              object(x.Extension.DeepCopy()),
		"catalogs":               objects(copies(x.Catalogs)),
		"catalogErrors":          x.catalogErrors(),
		"installed":              installedData(x.Extension),
		"candidate":              candidate.data(),
		"operands":               nonNil(x.Operands),
		"unreadableOperandKinds": unreadableData(x.Unreadable),
		"gate":                   object(nilIfAbsent(x.Gate.DeepCopy())),
		"now":                    now.UTC().Format(time.RFC3339),
		"config":                 map[string]any{"defaultMode": string(cfg.DefaultMode)},
	}
	doc["move"] = policies.ExtensionMove(doc).Data()
	return doc
}

// copies are deep copies of catalogs: object trims what it renders, and the caller's objects
// may be a cache's.
func copies(catalogs []olmv1.ClusterCatalog) []olmv1.ClusterCatalog {
	out := make([]olmv1.ClusterCatalog, len(catalogs))
	for i := range catalogs {
		catalogs[i].DeepCopyInto(&out[i])
	}
	return out
}

func (x *Extension) catalogErrors() []any {
	out := []any{}
	for _, c := range x.Catalogs {
		if msg, ok := x.CatalogErrors[c.Name]; ok {
			out = append(out, map[string]any{"catalog": c.Name, "message": msg})
		}
	}
	return out
}

// installedData is the document's installed: the bundle status.install names, or null.
func installedData(ext *olmv1.ClusterExtension) any {
	in := ext.Status.Install
	if in == nil || in.Bundle.Name == "" {
		return nil
	}
	return map[string]any{"name": in.Bundle.Name, "version": in.Bundle.Version}
}

func (c *ExtensionCandidate) data() any {
	if c == nil {
		return nil
	}
	deps := make([]any, 0, len(c.Deprecations))
	for _, d := range c.Deprecations {
		deps = append(deps, map[string]any{"schema": d.Schema, "name": d.Name, "message": d.Message})
	}
	channels := make([]any, 0, len(c.Channels))
	for _, ch := range c.Channels {
		channels = append(channels, ch)
	}
	return map[string]any{
		"name": c.Bundle.Name, "package": c.Package, "version": c.Version, "catalog": c.Catalog,
		"channels": channels, "image": c.Bundle.Image, "deprecations": deps,
	}
}

func nonNil(items []any) []any {
	if items == nil {
		return []any{}
	}
	return items
}

// Operands are what ReadOperands read.
type Operands struct {
	// Items are the instances found.
	Items []any
	// Kinds are the kinds read, each as it was read (the manager watches them).
	Kinds []schema.GroupVersionKind
	// Unreadable are the kinds Tollgate may not read.
	Unreadable []*UnreadableError
}

// ReadOperands lists the instances of kinds in every namespace, as the Subscription document's
// operands are read: check (nil: every kind) decides which kinds are operands and which
// Tollgate may read, kinds it may not read (or r refuses) are returned apart, and a kind of a
// built-in group is never read. The error is a failed read.
func ReadOperands(ctx context.Context, r client.Reader, kinds []OwnedKind, check OperandKinds) (Operands, error) {
	g := &gatherer{r: r}
	var operandKinds []OwnedKind
	for _, k := range kinds {
		if !BuiltinGroup(k.Group) {
			operandKinds = append(operandKinds, k)
		}
	}
	readable, unreadable := g.checkKinds(ctx, operandKinds, check)
	found, read, refused := g.operands(ctx, readable, nil)
	if g.err != nil {
		return Operands{}, fmt.Errorf("read operands: %w", g.err)
	}
	return Operands{Items: found, Kinds: gvks(read), Unreadable: append(unreadable, refused...)}, nil
}
