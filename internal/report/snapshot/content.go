package snapshot

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
)

// CatalogContentKind is the kind (tollgate.dev/v1alpha1) of a catalog's content in a snapshot:
// metadata.name is the ClusterCatalog's, ref the digest reference of the content
// (status.resolvedSource.image.ref when it was read), content what catalogd served at
// /api/v1/all, one JSON object a line. It lets a snapshot carry the content its decisions
// were made on.
const CatalogContentKind = "CatalogContent"

var catalogContentGK = schema.GroupKind{Group: "tollgate.dev", Kind: CatalogContentKind}

// NewCatalogContent is the snapshot object of a catalog's content.
func NewCatalogContent(catalog, ref, content string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"ref": ref, "content": content}}
	u.SetGroupVersionKind(catalogContentGK.WithVersion("v1alpha1"))
	u.SetName(catalog)
	return u
}

// Catalog reads the content of src.Catalog the snapshot carries, which must be the content
// src.Ref identifies: the snapshot serves as catalogd does (pin.Content).
func (s *Snapshot) Catalog(_ context.Context, src catalogd.Source) (*fbc.Catalog, error) {
	s.mu.RLock()
	e, ok := s.objects[catalogContentGK][client.ObjectKey{Name: src.Catalog}]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("the snapshot carries no content of catalog %s (a %s named %s, from `tollgate snapshot`)", src.Catalog, CatalogContentKind, src.Catalog)
	}
	ref, _, _ := unstructured.NestedString(e.obj.Object, "ref")
	content, found, err := unstructured.NestedString(e.obj.Object, "content")
	switch {
	case err != nil || !found:
		return nil, fmt.Errorf("%s %s%s: content is missing or not a string", CatalogContentKind, src.Catalog, where(e.from))
	case ref != src.Ref:
		return nil, fmt.Errorf("%s %s%s is the content of %q, but the ClusterCatalog serves %q", CatalogContentKind, src.Catalog, where(e.from), ref, src.Ref)
	}
	c, err := fbc.Read(strings.NewReader(content), fbc.DefaultLimits)
	if err != nil {
		return nil, fmt.Errorf("%s %s%s: %w", CatalogContentKind, src.Catalog, where(e.from), err)
	}
	return c, nil
}

func where(from string) string {
	if from == "" {
		return ""
	}
	return " (" + from + ")"
}
