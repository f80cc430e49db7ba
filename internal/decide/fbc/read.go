package fbc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// Read reads catalog content as catalogd serves it, one JSON object per line, whole or not at all: an error names
// the line and what is wrong with it, and no partial catalog is returned.
func Read(r io.Reader, limits Limits) (*Catalog, error) {
	limits = limits.WithDefaults()
	counted := &io.LimitedReader{R: r, N: limits.MaxBytes + 1}
	sc := bufio.NewScanner(counted)
	sc.Buffer(make([]byte, 0, min(64<<10, limits.MaxObjectBytes)), limits.MaxObjectBytes)
	c := &Catalog{Packages: map[string]*Package{}}
	line := 0
	for sc.Scan() {
		line++
		if counted.N <= 0 {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limits.MaxBytes)
		}
		if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
			if err := c.add(b); err != nil {
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
	return c, nil
}

// object is any catalog object, read first for its schema and identity.
type object struct {
	Schema  string `json:"schema"`
	Name    string `json:"name"`
	Package string `json:"package"`
}

// add reads one object into c.
func (c *Catalog) add(b []byte) error {
	var o object
	if err := json.Unmarshal(b, &o); err != nil {
		return fmt.Errorf("not a catalog object: %w", err)
	}
	if err := o.check(); err != nil {
		return err
	}
	var err error
	switch o.Schema {
	case SchemaPackage:
		var v struct {
			DefaultChannel string `json:"defaultChannel"`
		}
		err = json.Unmarshal(b, &v)
		c.pkg(o.Name).DefaultChannel = v.DefaultChannel
	case SchemaChannel:
		ch := Channel{}
		err = json.Unmarshal(b, &ch)
		p := c.pkg(o.Package)
		p.Channels = append(p.Channels, ch)
	case SchemaBundle:
		bu := Bundle{}
		err = json.Unmarshal(b, &bu)
		bu.Properties = withoutObjects(bu.Properties)
		p := c.pkg(o.Package)
		p.Bundles = append(p.Bundles, bu)
	case SchemaDeprecations:
		err = c.addDeprecations(o.Package, b)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.String(), err)
	}
	return nil
}

// String names the object as an error shows it: its schema, name and package.
func (o *object) String() string {
	switch {
	case o.Schema == SchemaPackage:
		return fmt.Sprintf("%s %q", o.Schema, o.Name)
	case o.Name == "":
		return fmt.Sprintf("%s of package %q", o.Schema, o.Package)
	}
	return fmt.Sprintf("%s %q of package %q", o.Schema, o.Name, o.Package)
}

// check refuses an object resolution cannot place: without a schema, a package without a
// name, or a channel, bundle or deprecations without a package.
func (o *object) check() error {
	switch o.Schema {
	case "":
		return errors.New("an object without a schema")
	case SchemaPackage:
		if o.Name == "" {
			return errors.New("an olm.package without a name")
		}
	case SchemaChannel, SchemaBundle, SchemaDeprecations:
		if o.Package == "" {
			return fmt.Errorf("%s %q names no package", o.Schema, o.Name)
		}
	}
	return nil
}

// deprecation is an olm.deprecations entry as written.
type deprecation struct {
	Reference struct {
		Schema string `json:"schema"`
		Name   string `json:"name"`
	} `json:"reference"`
	Message string `json:"message"`
}

// addDeprecations reads an olm.deprecations object of pkg.
func (c *Catalog) addDeprecations(pkg string, b []byte) error {
	var d struct {
		Entries []deprecation `json:"entries"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	p := c.pkg(pkg)
	for _, e := range d.Entries {
		p.Deprecations = append(p.Deprecations, Deprecation{Schema: e.Reference.Schema, Name: e.Reference.Name, Message: e.Message})
	}
	return nil
}

// pkg is the package named name, added when new.
func (c *Catalog) pkg(name string) *Package {
	p, ok := c.Packages[name]
	if !ok {
		p = &Package{Name: name}
		c.Packages[name] = p
	}
	return p
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
