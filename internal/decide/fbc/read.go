package fbc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// The schemas of file-based catalog objects that resolution reads; others are skipped.
const (
	SchemaPackage      = "olm.package"
	SchemaChannel      = "olm.channel"
	SchemaBundle       = "olm.bundle"
	SchemaDeprecations = "olm.deprecations"

	// PropertyPackage is the bundle property holding its package and version.
	PropertyPackage = "olm.package"
	// propertyBundleObject holds a manifest of the bundle, base64: not needed to decide, and
	// most of a catalog's size.
	propertyBundleObject = "olm.bundle.object"
)

// Catalog is a catalog's content by package.
type Catalog struct {
	Packages map[string]*Package
}

// Package is one package's channels, bundles and deprecations.
type Package struct {
	Name           string        `json:"name"`
	DefaultChannel string        `json:"defaultChannel,omitempty"`
	Channels       []Channel     `json:"channels,omitempty"`
	Bundles        []Bundle      `json:"bundles,omitempty"`
	Deprecations   []Deprecation `json:"deprecations,omitempty"`
	// Malformed say which of the package's objects OLM v1 cannot load, and why: OLM v1
	// resolves nothing for the package while one of its selected catalogs has any.
	Malformed []string `json:"malformed,omitempty"`
	// deprecationObjects are the entries of each olm.deprecations object kept: OLM v1 ranks by
	// one of them, the first it happens to load.
	deprecationObjects [][]Deprecation
}

// Channel is an olm.channel: its entries are the upgrade edges.
type Channel struct {
	Name    string  `json:"name"`
	Package string  `json:"package"`
	Entries []Entry `json:"entries"`
}

// Entry is a bundle's place in a channel: what it replaces and skips.
type Entry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

// Bundle is an olm.bundle, less its olm.bundle.object properties.
type Bundle struct {
	Name       string     `json:"name"`
	Package    string     `json:"package"`
	Image      string     `json:"image"`
	Properties []Property `json:"properties,omitempty"`
}

// Property is a bundle property, its value as written.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// Deprecation is one entry of an olm.deprecations object: the package, a channel or a bundle
// (Schema) named Name is deprecated, with Message.
type Deprecation struct {
	Schema  string `json:"schema"`
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
}

// Limits bound what Read accepts: the whole content and one object (a line). A zero field
// takes DefaultLimits' value.
type Limits struct {
	MaxBytes       int64
	MaxObjectBytes int
}

// WithDefaults is l, each zero (or negative) bound DefaultLimits'.
func (l Limits) WithDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxObjectBytes <= 0 {
		l.MaxObjectBytes = DefaultLimits.MaxObjectBytes
	}
	return l
}

// DefaultLimits take a large public catalog (tens of MiB) with room to spare.
var DefaultLimits = Limits{MaxBytes: 256 << 20, MaxObjectBytes: 16 << 20}

// ErrTooLarge says the content or one of its objects is larger than the limits.
var ErrTooLarge = errors.New("catalog content exceeds its limit")

// Read reads catalog content as catalogd serves it, one JSON object per line, as
// operator-controller's cache reads it (catalogmetadata/cache and operator-registry's declcfg):
// content that is not a stream of JSON objects, or whose schema, package or name is not a
// string, fails the whole catalog, and the error names the line; an object that OLM v1 cannot
// load fails only its own package (Package.Malformed); an object without a package is ignored;
// of several objects of one package with the same schema and name, the last one is kept.
func Read(r io.Reader, limits Limits) (*Catalog, error) {
	limits = limits.WithDefaults()
	counted := &io.LimitedReader{R: r, N: limits.MaxBytes + 1}
	sc := bufio.NewScanner(counted)
	sc.Buffer(make([]byte, 0, min(64<<10, limits.MaxObjectBytes)), limits.MaxObjectBytes)
	b := builder{}
	line := 0
	for sc.Scan() {
		line++
		if counted.N <= 0 {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limits.MaxBytes)
		}
		if raw := bytes.TrimSpace(sc.Bytes()); len(raw) > 0 {
			if err := b.add(raw); err != nil {
				return nil, fmt.Errorf("catalog content, line %d: %w", line, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: line %d is longer than %d bytes", ErrTooLarge, line+1, limits.MaxObjectBytes)
		}
		return nil, fmt.Errorf("catalog content, after line %d: %w", line, err)
	}
	if counted.N <= 0 {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limits.MaxBytes)
	}
	return b.catalog(), nil
}

// object is any catalog object, read first for its schema and identity.
type object struct {
	Schema  string
	Name    string
	Package string
}

// readObject reads an object's identity as declcfg.Meta does: keys schema, package and name
// in any case, each a string when present, and no two keys of the object equal but for case.
func readObject(b []byte) (object, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return object{}, fmt.Errorf("not a catalog object: %w", err)
	}
	folded := map[string]string{}
	for k := range fields {
		f := strings.ToLower(k)
		if other, ok := folded[f]; ok {
			return object{}, fmt.Errorf("duplicate keys %q and %q", other, k)
		}
		folded[f] = k
	}
	var o object
	for key, into := range map[string]*string{"schema": &o.Schema, "package": &o.Package, "name": &o.Name} {
		k, ok := folded[key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(fields[k], into); err != nil || bytes.Equal(fields[k], []byte("null")) {
			return object{}, fmt.Errorf("the value of %q is not a string", k)
		}
	}
	return o, nil
}

// pkg is the package the object belongs to: its name for an olm.package, else its package.
func (o object) pkg() string {
	if o.Schema == SchemaPackage {
		return o.Name
	}
	return o.Package
}

// key identifies the object within its package as OLM v1's cache files it
// (<package>/<schema>/<name or schema>.json): a later object with the same key replaces it.
func (o object) key() string {
	name := o.Name
	if name == "" {
		name = o.Schema
	}
	return o.Schema + "/" + name
}

// String names the object as an error shows it: its schema, name and package.
func (o object) String() string {
	switch {
	case o.Schema == SchemaPackage:
		return fmt.Sprintf("%s %q", o.Schema, o.Name)
	case o.Name == "":
		return fmt.Sprintf("%s of package %q", o.Schema, o.Package)
	}
	return fmt.Sprintf("%s %q of package %q", o.Schema, o.Name, o.Package)
}

// builder collects each package's objects, the last of each key kept, in first-seen order.
type builder struct {
	pkgs  map[string]*pkgObjects
	order []string
}

type pkgObjects struct {
	byKey map[string]int
	objs  []parsed
}

// parsed is one object as its package's loading reads it, or why it cannot be read.
type parsed struct {
	obj  object
	val  any
	fail string
}

// add reads one object into b; the error fails the whole catalog.
func (b *builder) add(raw []byte) error {
	o, err := readObject(raw)
	if err != nil {
		return err
	}
	name := o.pkg()
	if name == "" {
		return nil // filed outside every package: no resolution reads it
	}
	if b.pkgs == nil {
		b.pkgs = map[string]*pkgObjects{}
	}
	p, ok := b.pkgs[name]
	if !ok {
		p = &pkgObjects{byKey: map[string]int{}}
		b.pkgs[name] = p
		b.order = append(b.order, name)
	}
	val, fail := parse(o, raw)
	if i, ok := p.byKey[o.key()]; ok {
		p.objs[i] = parsed{obj: o, val: val, fail: fail}
		return nil
	}
	p.byKey[o.key()] = len(p.objs)
	p.objs = append(p.objs, parsed{obj: o, val: val, fail: fail})
	return nil
}

// catalog is the content read.
func (b *builder) catalog() *Catalog {
	c := &Catalog{Packages: map[string]*Package{}}
	for _, name := range b.order {
		p := &Package{Name: name}
		for _, o := range b.pkgs[name].objs {
			p.place(o)
		}
		c.Packages[name] = p
	}
	return c
}

// place puts one parsed object into p.
func (p *Package) place(o parsed) {
	if o.fail != "" {
		p.Malformed = append(p.Malformed, o.obj.String()+": "+o.fail)
		return
	}
	switch v := o.val.(type) {
	case *packageObject:
		p.DefaultChannel = v.DefaultChannel
	case *Channel:
		p.Channels = append(p.Channels, *v)
	case *Bundle:
		p.Bundles = append(p.Bundles, *v)
	case []Deprecation:
		p.Deprecations = append(p.Deprecations, v...)
		p.deprecationObjects = append(p.deprecationObjects, v)
	}
}

// packageObject is the part of an olm.package that resolution reads, with the fields whose
// shape OLM v1 checks.
type packageObject struct {
	DefaultChannel string `json:"defaultChannel"`
	Icon           *struct {
		Data      []byte `json:"base64data"`
		MediaType string `json:"mediatype"`
	} `json:"icon,omitempty"`
	Description string     `json:"description,omitempty"`
	Properties  []Property `json:"properties,omitempty"`
}

// parse reads an object of a known schema as OLM v1 loads it (declcfg's types): a value of
// the wrong shape is why its package cannot be loaded. Other schemas are kept by OLM v1 and
// read by nothing; an object without a schema fails its package.
func parse(o object, raw []byte) (any, string) {
	var v any
	switch o.Schema {
	case "":
		return nil, "an object without a schema"
	case SchemaPackage:
		v = &packageObject{}
	case SchemaChannel:
		v = &channelObject{}
	case SchemaBundle:
		v = &bundleObject{}
	case SchemaDeprecations:
		v = &deprecationsObject{}
	default:
		return nil, ""
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err.Error()
	}
	switch v := v.(type) {
	case *bundleObject:
		return v.bundle()
	case *deprecationsObject:
		return v.entries(), ""
	case *channelObject:
		return &v.Channel, ""
	}
	return v, ""
}

// channelObject is an olm.channel as written, with the fields whose shape OLM v1 checks.
type channelObject struct {
	Channel
	Properties []Property `json:"properties,omitempty"`
}

// bundleObject is an olm.bundle as written, with the fields whose shape OLM v1 checks.
type bundleObject struct {
	Bundle
	RelatedImages []struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	} `json:"relatedImages,omitempty"`
}

// bundle is the bundle less its olm.bundle.object properties, which must each hold base64
// YAML or JSON (OLM v1 reads them when it loads the package).
func (b *bundleObject) bundle() (any, string) {
	for i, p := range b.Properties {
		if p.Type != propertyBundleObject {
			continue
		}
		var obj struct {
			Data []byte `json:"data"`
		}
		if err := json.Unmarshal(p.Value, &obj); err != nil {
			return nil, fmt.Sprintf("property %d is not a bundle object: %v", i, err)
		}
		if _, err := yaml.ToJSON(obj.Data); err != nil {
			return nil, fmt.Sprintf("bundle object %d: %v", i, err)
		}
	}
	bu := b.Bundle
	bu.Properties = withoutObjects(bu.Properties)
	return &bu, ""
}

// deprecation is an olm.deprecations entry as written.
type deprecation struct {
	Reference struct {
		Schema string `json:"schema"`
		Name   string `json:"name"`
	} `json:"reference"`
	Message string `json:"message"`
}

// deprecationsObject is an olm.deprecations as written.
type deprecationsObject struct {
	Entries []deprecation `json:"entries"`
}

func (d *deprecationsObject) entries() []Deprecation {
	out := []Deprecation{}
	for _, e := range d.Entries {
		out = append(out, Deprecation{Schema: e.Reference.Schema, Name: e.Reference.Name, Message: e.Message})
	}
	return out
}

// withoutObjects drops the olm.bundle.object properties.
func withoutObjects(props []Property) []Property {
	out := props[:0]
	for _, p := range props {
		if p.Type != propertyBundleObject {
			out = append(out, p)
		}
	}
	return out
}
