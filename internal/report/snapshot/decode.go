package snapshot

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// path locates a value in a document: object keys (string) and list indices (int).
type path []any

func (p path) key(k string) path { return append(slices.Clip(p), k) }
func (p path) index(i int) path  { return append(slices.Clip(p), i) }

// child is p and step without a copy: siblings share p's array, so the converter descends a
// document nested n deep in O(n), not O(n²). What keeps a path (a fieldError) clones it.
func (p path) child(step any) path { return append(p, step) }

// plainKey is a key that reads unquoted in a path; any other is quoted, so a hostile key
// cannot put control characters on the terminal.
var plainKey = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// String is the path as kubectl explain and JSONPath write it: spec.conditions[0].status,
// metadata.labels["app.kubernetes.io/name"].
func (p path) String() string {
	var b strings.Builder
	for _, step := range p {
		switch s := step.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		case string:
			if !plainKey.MatchString(s) {
				fmt.Fprintf(&b, "[%q]", s)
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// fieldError is a problem with the value at a path of a document.
type fieldError struct {
	at   path
	line int // where in the file, when known when the error is made; else looked up by path
	err  error
}

func (e *fieldError) Error() string { return fmt.Sprintf("%s: %v", e.at, e.err) }
func (e *fieldError) Unwrap() error { return e.err }

func fieldErrorf(at path, format string, args ...any) *fieldError {
	return &fieldError{at: slices.Clone(at), err: fmt.Errorf(format, args...)}
}

// maxAliasNodes bounds the nodes one file may expand through YAML aliases, so a few lines of
// nested aliases ("billion laughs") cannot fill the memory.
const maxAliasNodes = 1 << 20

// converter turns YAML documents into the JSON-shaped values Kubernetes objects are made
// of — map[string]any, []any, string, int64, float64, bool and nil — refusing what JSON
// cannot carry or YAML reads ambiguously: duplicate keys, keys that are not scalars, NaN and
// infinities, integers beyond 64 bits.
type converter struct {
	aliased int // nodes expanded through aliases so far
	// expanding are the anchored nodes being expanded through an alias: an alias to one of
	// them refers to a value that contains it (a: &a [*a]), which never ends.
	expanding map[*yaml.Node]bool
}

func (c *converter) value(n *yaml.Node, at path, viaAlias bool) (any, error) {
	if viaAlias {
		if c.aliased++; c.aliased > maxAliasNodes {
			return nil, &fieldError{at: slices.Clone(at), line: n.Line, err: fmt.Errorf("YAML aliases expand to more than %d values", maxAliasNodes)}
		}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], at, viaAlias)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, &fieldError{at: slices.Clone(at), line: n.Line, err: fmt.Errorf("YAML alias *%s refers to no anchor", n.Value)}
		}
		if c.expanding[n.Alias] {
			return nil, &fieldError{at: slices.Clone(at), line: n.Line, err: fmt.Errorf("YAML alias *%s refers to a value that contains it", n.Value)}
		}
		if c.expanding == nil {
			c.expanding = map[*yaml.Node]bool{}
		}
		c.expanding[n.Alias] = true
		defer delete(c.expanding, n.Alias)
		return c.value(n.Alias, at, true)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			v, err := c.value(item, at.child(i), viaAlias)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return c.mapping(n, at, viaAlias)
	default:
		return scalar(n, at)
	}
}

func (c *converter) mapping(n *yaml.Node, at path, viaAlias bool) (map[string]any, error) {
	out := make(map[string]any, len(n.Content)/2)
	first := map[string]int{} // key → line, to name both places of a duplicate
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, &fieldError{at: slices.Clone(at), line: k.Line, err: fmt.Errorf("a key must be a string, not a YAML %s", kindName(k))}
		}
		if k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if line, dup := first[k.Value]; dup {
			return nil, &fieldError{at: at.key(k.Value), line: k.Line, err: fmt.Errorf("duplicate key: already set at line %d (a key appears once in a mapping)", line)}
		}
		first[k.Value] = k.Line
		val, err := c.value(v, at.child(k.Value), viaAlias)
		if err != nil {
			return nil, err
		}
		out[k.Value] = val
	}
	// A merge key (<<: *defaults) fills in what the mapping does not set itself; of several
	// merged mappings, the first that sets a key wins, as YAML defines it.
	for _, m := range merges {
		sources := []*yaml.Node{m}
		if deref(m).Kind == yaml.SequenceNode {
			sources = deref(m).Content
		}
		for _, src := range sources {
			v, err := c.value(src, at, viaAlias)
			if err != nil {
				return nil, err
			}
			merged, ok := v.(map[string]any)
			if !ok {
				return nil, &fieldError{at: slices.Clone(at), line: src.Line, err: fmt.Errorf("a merge key (<<) merges mappings, not %s", describe(v))}
			}
			for key, val := range merged {
				if _, set := out[key]; !set {
					out[key] = val
				}
			}
		}
	}
	return out, nil
}

// scalar reads a scalar as YAML 1.2 resolves it; timestamps and strings keep their text.
func scalar(n *yaml.Node, at path) (any, error) {
	fail := func(format string, args ...any) error {
		return &fieldError{at: slices.Clone(at), line: n.Line, err: fmt.Errorf(format, args...)}
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fail("%q is not a boolean", n.Value)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return nil, fail("%q is not an integer of at most 64 bits", n.Value)
		}
		return i, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fail("%q is not a number", n.Value)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fail("%q is not a number JSON can carry (NaN and infinities are refused)", n.Value)
		}
		return f, nil
	case "!!binary": // base64 text, as JSON carries bytes; line breaks in it do not count
		return strings.Join(strings.Fields(n.Value), ""), nil
	default: // !!str, !!timestamp and local tags: the text as written
		return n.Value, nil
	}
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return deref(n.Content[0])
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	default:
		return "node"
	}
}

// lineOf is the line of the value at p in the document root: the line of its key, or of the
// deepest part of p the document has (a missing field is reported where its parent is).
func lineOf(root *yaml.Node, p path) int {
	n, line := deref(root), deref(root).Line
	for _, step := range p {
		key, next := child(n, step, nil)
		if next == nil {
			break
		}
		n, line = deref(next), key.Line
	}
	return line
}

// child finds step (a key or an index) in n: the node that names it and its value. seen are
// the mappings whose merged mappings are being searched, so that a mapping that merges
// itself (a: &a {<<: *a}) is searched once.
func child(n *yaml.Node, step any, seen map[*yaml.Node]bool) (at, value *yaml.Node) {
	switch s := step.(type) {
	case int:
		if n.Kind == yaml.SequenceNode && s >= 0 && s < len(n.Content) {
			return n.Content[s], n.Content[s]
		}
	case string:
		if n.Kind != yaml.MappingNode {
			return nil, nil
		}
		var merged []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i])
			switch {
			case k.ShortTag() == "!!merge":
				merged = append(merged, n.Content[i+1])
			case k.Value == s:
				return k, n.Content[i+1]
			}
		}
		if seen[n] {
			return nil, nil
		}
		if seen == nil {
			seen = map[*yaml.Node]bool{}
		}
		seen[n] = true
		for _, m := range merged {
			sources := []*yaml.Node{deref(m)}
			if deref(m).Kind == yaml.SequenceNode {
				sources = deref(m).Content
			}
			for _, src := range sources {
				if at, v := child(deref(src), s, seen); v != nil {
					return at, v
				}
			}
		}
	}
	return nil, nil
}
