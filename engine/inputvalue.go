package engine

import (
	"github.com/open-policy-agent/opa/v1/ast"
)

// inputValue converts an input document to the value the evaluator reads, as
// ast.InterfaceToValue does, but keeps one value per distinct string: an input document
// repeats few strings many times (keys, types, statuses, namespaces), and each string OPA
// converts is an allocation of its own. Values of other Go types than JSON data's go through
// ast.InterfaceToValue.
func inputValue(x any) (ast.Value, error) {
	c := converter{strings: make(map[string]ast.Value, 256)}
	return c.value(x)
}

type converter struct {
	strings map[string]ast.Value
	pairs   [][2]*ast.Term // an object's key-value pairs, reused from object to object
}

func (c *converter) str(s string) ast.Value {
	if v, ok := c.strings[s]; ok {
		return v
	}
	v := ast.InternedTerm(s).Value
	c.strings[s] = v
	return v
}

func (c *converter) value(x any) (ast.Value, error) {
	switch x := x.(type) {
	case string:
		return c.str(x), nil
	case []any:
		terms := make([]ast.Term, len(x))
		ptrs := make([]*ast.Term, len(x))
		for i, e := range x {
			v, err := c.value(e)
			if err != nil {
				return nil, err
			}
			terms[i].Value = v
			ptrs[i] = &terms[i]
		}
		return ast.NewArray(ptrs...), nil
	case map[string]any:
		terms := make([]ast.Term, 2*len(x))
		i := 0
		for k, e := range x {
			v, err := c.value(e)
			if err != nil {
				return nil, err
			}
			terms[i].Value, terms[i+1].Value = c.str(k), v
			i += 2
		}
		// The pairs go into one buffer for every object, filled once the values are
		// converted (a nested object has used it by then): NewObject keeps the terms, not
		// the slice of pairs.
		c.pairs = c.pairs[:0]
		for i := 0; i < len(terms); i += 2 {
			c.pairs = append(c.pairs, [2]*ast.Term{&terms[i], &terms[i+1]})
		}
		return ast.NewObject(c.pairs...), nil
	default:
		return ast.InterfaceToValue(x)
	}
}
