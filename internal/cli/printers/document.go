package printers

import (
	"encoding/json"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"
)

// WriteJSON writes v as JSON indented by two spaces: the documented form of Tollgate's reports.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteYAML writes v as YAML, with the field names of its JSON form.
func WriteYAML(w io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Document is v as the JSON document its -o json prints, for cli-runtime's jsonpath and
// go-template printers: the same field names, so a jsonpath written against -o json works.
// Whole numbers decode as int64, as in objects read from the API server.
func Document(v any) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// Ref names one object for -o name.
type Ref struct {
	schema.GroupKind
	Name string
}

// Refs lists items as objects of kind gk, each named by name, for Printable.Names.
func Refs[T any](gk schema.GroupKind, items []T, name func(T) string) func() []Ref {
	return func() []Ref {
		refs := make([]Ref, len(items))
		for i, item := range items {
			refs[i] = Ref{GroupKind: gk, Name: name(item)}
		}
		return refs
	}
}

// WriteNames writes one kind.group/name line per ref, as kubectl's -o name
// (subscription.operators.coreos.com/etcd).
func WriteNames(w io.Writer, refs []Ref) error {
	p := &cliprinters.NamePrinter{}
	for _, r := range refs {
		obj := &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: schema.GroupVersion{Group: r.Group, Version: "v1"}.String(), Kind: r.Kind},
			ObjectMeta: metav1.ObjectMeta{Name: r.Name},
		}
		if err := p.PrintObj(obj, w); err != nil {
			return err
		}
	}
	return nil
}

// Template runs a cli-runtime printer (jsonpath, go-template) over the JSON document of v.
func Template(w io.Writer, p cliprinters.ResourcePrinter, v any) error {
	doc, err := Document(v)
	if err != nil {
		return err
	}
	return p.PrintObj(doc, w)
}
