package v1alpha1

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
)

// PropertiesAnnotation is where a CSV carries its bundle's properties (olm.package and others),
// as JSON.
const PropertiesAnnotation = "operatorframework.io/properties"

// PackageProperty is the type of the bundle property that names its package and version.
const PackageProperty = "olm.package"

// BundleFacts is what an InstallPlan says of one CSV it installs, from every place it says
// it: its bundle lookups (before OLM has unpacked the bundle), the manifest of its CSV step
// (what OLM creates), and the Subscription steps that resolve it. OLM acts on each of them, so
// a decision rests on all of them: where two disagree, the caller holds, never picks one.
//
// +kubebuilder:object:generate=false
type BundleFacts struct {
	// Replaces are the CSVs it replaces: its bundle lookups' replaces and the spec.replaces of
	// its CSV step, without duplicates, sorted. OLM's olm operator replaces the CSV of the
	// namespace that spec.replaces names, whatever its package (skips are not followed there).
	Replaces []string
	// Packages are the packages it belongs to: the olm.package properties of its bundle
	// lookups and CSV step, and the packages its Subscription steps follow; sorted.
	Packages []string
	// Versions are its bundle versions with where each was read, in the plan's order.
	Versions []SourcedVersion
	// Dependencies are the Subscriptions the plan creates for it, one per Subscription step.
	Dependencies []Dependency
	// Unreadable says which of its places could not be read (a manifest or properties that
	// do not parse), one sentence each: what they say is unknown.
	Unreadable []string
}

// CSVManifest is what FactsOf reads of a CSV step's manifest, and all that the manager's
// cache keeps of it (input.Trim).
//
// +kubebuilder:object:generate=false
type CSVManifest struct {
	// Kind is ConfigMap in a reference to an unpacked bundle (UnpackedReferenceKind), which OLM
	// writes in place of the CSV once it has unpacked the bundle into that ConfigMap; Replaces
	// and Properties are then the reference's own.
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Replaces   string `json:"replaces,omitempty"`
	Properties string `json:"properties,omitempty"`
	Metadata   struct {
		Name        string            `json:"name,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Replaces string `json:"replaces,omitempty"`
		Version  string `json:"version,omitempty"`
	} `json:"spec"`
}

// SourcedVersion is a bundle version and where it was read.
type SourcedVersion struct {
	Version string `json:"version"`
	From    string `json:"from"`
}

// FactsOf is what the plan says of csv (see BundleFacts).
func (p *InstallPlan) FactsOf(csv string) BundleFacts {
	var f BundleFacts
	if p.Status == nil || csv == "" {
		return f
	}
	for i, b := range p.Status.BundleLookups {
		if b.Identifier == csv {
			f.addLookup(fmt.Sprintf("InstallPlan %s status.bundleLookups[%d]", p.Name, i), &b)
		}
	}
	for i, s := range p.Status.Plan {
		if s != nil && s.Resolving == csv {
			f.addStep(fmt.Sprintf("InstallPlan %s status.plan[%d]", p.Name, i), s, csv)
		}
	}
	f.Replaces = sortedSet(f.Replaces)
	f.Packages = sortedSet(f.Packages)
	return f
}

func (f *BundleFacts) addLookup(where string, b *BundleLookup) {
	if b.Replaces != "" {
		f.Replaces = append(f.Replaces, b.Replaces)
	}
	if b.Properties != "" {
		f.addProperties(where+".properties", b.Properties)
	}
}

func (f *BundleFacts) addStep(where string, s *Step, csv string) {
	switch s.Resource.Kind {
	case ClusterServiceVersionKind:
		if s.Resource.Name == csv {
			f.addCSVManifest(where, s.Resource.Manifest)
		}
	case SubscriptionKind:
		d, err := s.dependency()
		switch {
		case err != nil:
			f.Unreadable = append(f.Unreadable, fmt.Sprintf("%s (a Subscription step): %v", where, readable(err)))
		case d != nil:
			f.Dependencies = append(f.Dependencies, *d)
			f.Packages = append(f.Packages, d.Package)
		}
	}
}

// addCSVManifest reads the CSV step's manifest: spec.replaces, spec.version and the
// olm.package property. An empty manifest (OLM has not unpacked the bundle yet) says nothing.
func (f *BundleFacts) addCSVManifest(where, manifest string) {
	if manifest == "" {
		return
	}
	var m CSVManifest
	if err := json.Unmarshal([]byte(manifest), &m); err != nil {
		f.Unreadable = append(f.Unreadable, fmt.Sprintf("%s.resource.manifest (the CSV step): %v", where, readable(err)))
		return
	}
	if m.Kind == UnpackedReferenceKind {
		f.addReference(where, &m)
		return
	}
	if m.Spec.Replaces != "" {
		f.Replaces = append(f.Replaces, m.Spec.Replaces)
	}
	if m.Spec.Version != "" {
		f.Versions = append(f.Versions, SourcedVersion{Version: m.Spec.Version, From: where + " (the CSV step's spec.version)"})
	}
	if p, ok := m.Metadata.Annotations[PropertiesAnnotation]; ok {
		f.addProperties(fmt.Sprintf("%s (the CSV step's annotation %s)", where, PropertiesAnnotation), p)
	}
}

// UnpackedReferenceKind is the kind of a CSV step's manifest that refers to the ConfigMap an
// unpacked bundle was written to (OLM's UnpackedBundleReference).
const UnpackedReferenceKind = "ConfigMap"

// addReference reads a reference to an unpacked bundle: the replaces and properties OLM copies
// into it. A reference that says neither says nothing Tollgate can check against the bundle
// (the ConfigMap holds it, which Tollgate does not read): unreadable.
func (f *BundleFacts) addReference(where string, m *CSVManifest) {
	if m.Properties == "" {
		f.Unreadable = append(f.Unreadable, fmt.Sprintf("%s.resource.manifest refers to the unpacked bundle in ConfigMap %s/%s and carries no properties: its version and package are not known", where, m.Namespace, m.Name))
		return
	}
	if m.Replaces != "" {
		f.Replaces = append(f.Replaces, m.Replaces)
	}
	f.addProperties(fmt.Sprintf("%s (the unpacked bundle reference's properties)", where), m.Properties)
}

// addProperties reads the olm.package properties of a bundle's properties document.
func (f *BundleFacts) addProperties(where, doc string) {
	var props struct {
		Properties []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(doc), &props); err != nil {
		f.Unreadable = append(f.Unreadable, fmt.Sprintf("%s: %v", where, readable(err)))
		return
	}
	for _, p := range props.Properties {
		if p.Type != PackageProperty {
			continue
		}
		var v struct {
			Package string `json:"packageName"`
			Version string `json:"version"`
		}
		if err := json.Unmarshal(p.Value, &v); err != nil {
			f.Unreadable = append(f.Unreadable, fmt.Sprintf("%s: property %s: %v", where, PackageProperty, readable(err)))
			continue
		}
		if v.Package != "" {
			f.Packages = append(f.Packages, v.Package)
		}
		if v.Version != "" {
			f.Versions = append(f.Versions, SourcedVersion{Version: v.Version, From: where + " (property " + PackageProperty + ")"})
		}
	}
}

func sortedSet(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// ReplacesOf is the CSV that csv replaces according to the plan when the plan names exactly
// one (FactsOf holds them all); "" when it names none or several.
func (p *InstallPlan) ReplacesOf(csv string) string {
	if r := p.FactsOf(csv).Replaces; len(r) == 1 {
		return r[0]
	}
	return ""
}

// Dependency is a Subscription an InstallPlan creates for one of its CSVs: OLM resolves a
// package another bundle requires into the plan, with a step that creates its Subscription.
type Dependency struct {
	// Subscription is the name OLM gives the Subscription it creates.
	Subscription string
	// Package is the package it follows.
	Package string
	// Object is the Subscription as the step's manifest writes it.
	Object *Subscription
}

// dependency is the Subscription the step creates when it is a Subscription step (nil
// otherwise), or why its manifest is refused: it does not parse, names no package, or starts
// at another CSV than the one it resolves.
func (s *Step) dependency() (*Dependency, error) {
	if s.Resource.Kind != SubscriptionKind {
		return nil, nil
	}
	sub := &Subscription{}
	if err := json.Unmarshal([]byte(s.Resource.Manifest), sub); err != nil {
		return nil, fmt.Errorf("manifest does not parse: %v", readable(err))
	}
	switch {
	case sub.Spec == nil || sub.Spec.Package == "":
		return nil, fmt.Errorf("manifest names no package (spec.name)")
	case sub.Spec.StartingCSV != s.Resolving:
		return nil, fmt.Errorf("manifest starts at %q, not at %q, the CSV it resolves", sub.Spec.StartingCSV, s.Resolving)
	}
	sub.Name = cmp.Or(sub.Name, s.Resource.Name)
	return &Dependency{Subscription: sub.Name, Package: sub.Spec.Package, Object: sub}, nil
}

// StepProblems say, one sentence each, which CSV steps of the plan do not create the CSV the
// plan lists them for: OLM creates every step's manifest once the plan is approved, so such a
// step would create a CSV that no decision on the listed CSVs covers. A step for a CSV that
// spec.clusterServiceVersionNames does not list, a step whose resource name is not the CSV it
// resolves, and a manifest that names another CSV are each one.
func (p *InstallPlan) StepProblems() []string {
	if p.Status == nil {
		return nil
	}
	var out []string
	for i, s := range p.Status.Plan {
		if s == nil || s.Resource.Kind != ClusterServiceVersionKind {
			continue
		}
		where := fmt.Sprintf("InstallPlan %s status.plan[%d]", p.Name, i)
		name := manifestName(s.Resource.Manifest)
		switch {
		case !slices.Contains(p.Spec.ClusterServiceVersionNames, s.Resolving):
			out = append(out, fmt.Sprintf("%s creates CSV %s, which spec.clusterServiceVersionNames does not list", where, cmp.Or(s.Resource.Name, s.Resolving)))
		case s.Resource.Name != s.Resolving:
			out = append(out, fmt.Sprintf("%s resolves %s but creates CSV %s", where, s.Resolving, s.Resource.Name))
		case name != "" && name != s.Resolving:
			out = append(out, fmt.Sprintf("%s resolves %s but its manifest creates CSV %s", where, s.Resolving, name))
		}
	}
	return out
}

// manifestName is metadata.name of a CSV step's manifest ("" when it has none or does not
// parse: FactsOf says so).
func manifestName(manifest string) string {
	var m CSVManifest
	if json.Unmarshal([]byte(manifest), &m) != nil {
		return ""
	}
	return m.Metadata.Name
}

// readable is a JSON decoding error said in the document's terms: a value of the wrong type
// names the field and the JSON types, never a Go type.
func readable(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the document"
		}
		return fmt.Sprintf("%s is a JSON %s, where %s is expected", field, te.Value, jsonKind(te.Type.Kind()))
	}
	return err.Error()
}

// jsonKind is the JSON type a Go kind decodes from.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Bool:
		return "a boolean"
	}
	return "a number"
}
