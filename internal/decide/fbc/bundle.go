package fbc

import (
	"encoding/json"
	"slices"
)

// PropertyGVK is the bundle property naming a kind the bundle provides.
const PropertyGVK = "olm.gvk"

// GVK is a kind a bundle provides (an olm.gvk property).
type GVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Provided are the kinds the bundle's olm.gvk properties name; a property that does not read
// as one is left out.
func (b Bundle) Provided() []GVK {
	var out []GVK
	for _, p := range b.Properties {
		var g GVK
		if p.Type == PropertyGVK && json.Unmarshal(p.Value, &g) == nil && g.Kind != "" && g.Version != "" {
			out = append(out, g)
		}
	}
	return out
}

// Bundle is the bundle of p named name, or nil.
func (p *Package) Bundle(name string) *Bundle {
	i := slices.IndexFunc(p.Bundles, func(b Bundle) bool { return b.Name == name })
	if i < 0 {
		return nil
	}
	return &p.Bundles[i]
}

// ChannelsOf are the names of p's channels that list the bundle, among names (all channels
// when names is empty), in p's order.
func (p *Package) ChannelsOf(bundle string, names []string) []string {
	var out []string
	for _, c := range p.channels(names) {
		if inAnyChannel(bundle, []Channel{c}) {
			out = append(out, c.Name)
		}
	}
	return out
}

// DeprecationsOf are p's deprecation entries that concern the bundle: the package's own, those
// of the channels given, and the bundle's.
func (p *Package) DeprecationsOf(bundle string, channels []string) []Deprecation {
	var out []Deprecation
	for _, d := range p.Deprecations {
		switch {
		case d.Schema == SchemaPackage,
			d.Schema == SchemaChannel && slices.Contains(channels, d.Name),
			d.Schema == SchemaBundle && d.Name == bundle:
			out = append(out, d)
		}
	}
	return out
}
