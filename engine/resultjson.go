package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
)

// encodedResult is the query's value as boundedJSON hands it to decodeResult: the value itself,
// whose shape decodeResult checks, and its JSON text, which decodeResult unmarshals into the
// typed result. Writing the text straight from the value costs a fraction of building Go maps
// (ast.JSON) and marshalling them again, and it decodes to the same result.
type encodedResult struct {
	value ast.Value
	text  []byte
}

// appendJSON appends v as JSON to buf, as ast.JSONWithOpt(v, SortSets) and encoding/json would
// write it: sets as sorted arrays, object keys that are not strings as their JSON text.
func appendJSON(buf []byte, v ast.Value) ([]byte, error) {
	switch x := v.(type) {
	case ast.Null:
		return append(buf, "null"...), nil
	case ast.Boolean:
		if x {
			return append(buf, "true"...), nil
		}
		return append(buf, "false"...), nil
	case ast.Number:
		return appendNumber(buf, x)
	case ast.String:
		return appendString(buf, string(x)), nil
	case *ast.Array:
		buf = append(buf, '[')
		for i := range x.Len() {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = appendJSON(buf, x.Elem(i).Value); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case ast.Set:
		return appendJSON(buf, x.Sorted())
	case ast.Object:
		return appendObject(buf, x)
	default:
		// References and anything else that needs evaluation: let OPA say what it is.
		_, err := ast.JSONWithOpt(v, ast.JSONOpt{SortSets: true})
		if err == nil {
			err = fmt.Errorf("%T is not JSON data", v)
		}
		return nil, err
	}
}

func appendObject(buf []byte, o ast.Object) ([]byte, error) {
	buf = append(buf, '{')
	first := true
	err := o.Iter(func(k, v *ast.Term) error {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		key, err := keyText(k.Value)
		if err != nil {
			return err
		}
		buf = appendString(buf, key)
		buf = append(buf, ':')
		buf, err = appendJSON(buf, v.Value)
		return err
	})
	if err != nil {
		return nil, err
	}
	return append(buf, '}'), nil
}

// keyText is the JSON object key of an object key: a string as it is, anything else as its
// JSON text (what ast.JSON does).
func keyText(k ast.Value) (string, error) {
	if s, ok := k.(ast.String); ok {
		return string(s), nil
	}
	x, err := ast.JSONWithOpt(k, ast.JSONOpt{SortSets: true})
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(x); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// appendNumber writes a number as encoding/json writes a json.Number, refusing what it refuses.
func appendNumber(buf []byte, n ast.Number) ([]byte, error) {
	b, err := json.Marshal(json.Number(n))
	if err != nil {
		return nil, err
	}
	return append(buf, b...), nil
}

// appendString writes s as a JSON string; invalid UTF-8 becomes U+FFFD, as encoding/json does.
func appendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
