package snapshot

import (
	"cmp"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

	// completePackages hold types that are whole copies of what the API server serves, so
	// a field they do not have is a typo, not a field Tollgate does not model: Kubernetes'
	// object metadata and conditions, and Tollgate's own kinds. The OLM types are partial
	// copies (apis/operators), so below their top level unknown fields are allowed.
	completePackages = []string{
		reflect.TypeFor[metav1.ObjectMeta]().PkgPath(),
		reflect.TypeFor[tollgatev1alpha1.UpgradeGate]().PkgPath(),
	}
)

// checkType says where v, a JSON-shaped value, does not fit the Go type t as encoding/json
// would decode it: a string where a number is wanted, a fraction in an integer, a number too
// large for its field, a time that does not parse, an unknown field in a complete type (or
// at the top level of an object, which the API server prunes). null fits anything, as it
// decodes to the zero value.
func checkType(v any, t reflect.Type, at path, strict bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		b, err := json.Marshal(v)
		if err == nil {
			err = reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(b)
		}
		if err != nil {
			return fieldErrorf(at, "%s does not fit a %s: %v", describe(v), t.Name(), err)
		}
		return nil
	}
	if s, ok := v.(string); ok && reflect.PointerTo(t).Implements(textUnmarshaler) {
		if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return fieldErrorf(at, "%s does not fit a %s: %v", describe(v), t.Name(), err)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return checkStruct(v, t, at, strict || slices.Contains(completePackages, t.PkgPath()))
	case reflect.Map:
		return checkMap(v, t, at)
	case reflect.Slice, reflect.Array:
		return checkList(v, t, at)
	case reflect.Interface:
		return nil
	default:
		return checkScalar(v, t, at)
	}
}

func checkStruct(v any, t reflect.Type, at path, strict bool) error {
	m, ok := v.(map[string]any)
	if !ok {
		return mismatch(v, "an object", at)
	}
	fields := jsonFields(t)
	for _, k := range sortedKeys(m) {
		f, known := fields[k]
		if !known {
			if strict {
				return unknownField(k, t, fields, at)
			}
			continue
		}
		// Below the top level, a partial type stays lenient; a complete one is strict itself.
		if err := checkType(m[k], f, at.key(k), false); err != nil {
			return err
		}
	}
	return nil
}

func unknownField(k string, t reflect.Type, fields map[string]reflect.Type, at path) error {
	for name := range fields {
		if strings.EqualFold(name, k) {
			return fieldErrorf(at.key(k), "unknown field: the field is spelled %q (field names are case-sensitive)", name)
		}
	}
	names := sortedKeys(fields)
	return fieldErrorf(at.key(k), "unknown field: not a field of %s (its fields are %s), so what it holds would be ignored", t.Name(), strings.Join(names, ", "))
}

func checkMap(v any, t reflect.Type, at path) error {
	m, ok := v.(map[string]any)
	if !ok {
		return mismatch(v, "an object", at)
	}
	for _, k := range sortedKeys(m) {
		if err := checkType(m[k], t.Elem(), at.key(k), false); err != nil {
			return err
		}
	}
	return nil
}

func checkList(v any, t reflect.Type, at path) error {
	if t.Elem().Kind() == reflect.Uint8 { // []byte is base64 text in JSON
		s, ok := v.(string)
		if !ok {
			return mismatch(v, "a base64 string", at)
		}
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return fieldErrorf(at, "%s is not base64: %v", describe(v), err)
		}
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		return mismatch(v, "a list", at)
	}
	for i, it := range items {
		if err := checkType(it, t.Elem(), at.index(i), false); err != nil {
			return err
		}
	}
	return nil
}

func checkScalar(v any, t reflect.Type, at path) error {
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			return mismatch(v, "a string", at)
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return mismatch(v, "a boolean (true or false)", at)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := v.(int64)
		if !ok {
			return mismatch(v, "an integer", at)
		}
		if reflect.New(t).Elem().OverflowInt(i) {
			return fieldErrorf(at, "%d does not fit in a %d-bit integer", i, t.Bits())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, ok := v.(int64)
		if !ok || i < 0 {
			return mismatch(v, "a non-negative integer", at)
		}
		if reflect.New(t).Elem().OverflowUint(uint64(i)) {
			return fieldErrorf(at, "%d does not fit in a %d-bit integer", i, t.Bits())
		}
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int64, float64:
		default:
			return mismatch(v, "a number", at)
		}
	default:
		return fieldErrorf(at, "a %s cannot be read from a snapshot", t)
	}
	return nil
}

func mismatch(v any, want string, at path) error {
	return fieldErrorf(at, "must be %s, not %s", want, describe(v))
}

// describe names a JSON-shaped value for a person, with the value itself when it is short.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 40 {
			return fmt.Sprintf("a string (%q...)", v[:40])
		}
		return fmt.Sprintf("a string (%q)", v)
	case bool:
		return fmt.Sprintf("a boolean (%t)", v)
	case int64:
		return fmt.Sprintf("an integer (%d)", v)
	case float64:
		return fmt.Sprintf("a floating-point number (%v)", v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps the JSON names of t's fields to their types, embedded structs inlined, as
// encoding/json and the unstructured converter read them (names are case-sensitive here, as
// the API server reads them).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if name == "" && ft.Kind() == reflect.Struct && (f.Anonymous || strings.Contains(opts, "inline")) {
			for n, typ := range jsonFields(ft) {
				if _, shadowed := fields[n]; !shadowed {
					fields[n] = typ
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		fields[cmp.Or(name, f.Name)] = f.Type
	}
	fieldCache.Store(t, fields)
	return fields
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
