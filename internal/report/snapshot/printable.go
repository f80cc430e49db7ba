package snapshot

import (
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/internal/cli/printers"
)

// Printable is a captured snapshot in every output format: yaml (multi-document, headed by
// the header comment) and json (a List) as Load reads them; jsonpath and go-template over the
// List; name lists every object.
func Printable(objs []map[string]any, header string) printers.Printable {
	items := make([]any, len(objs))
	for i := range objs {
		items[i] = objs[i]
	}
	return printers.Printable{
		Doc:    map[string]any{"apiVersion": "v1", "kind": "List", "items": items},
		Encode: func(w io.Writer, format string) error { return Write(w, format, objs, header) },
		Names: func() []printers.Ref {
			refs := make([]printers.Ref, len(objs))
			for i, o := range objs {
				u := unstructured.Unstructured{Object: o}
				refs[i] = printers.Ref{GroupKind: u.GroupVersionKind().GroupKind(), Name: u.GetName()}
			}
			return refs
		},
	}
}
