package policies

import (
	"encoding/json"
	"fmt"
	"regexp"

	bsemver "github.com/blang/semver/v4"
)

// End is one end of a move (README.md, "The move"): the CSV or bundle replaced (From) or
// created (To).
type End struct {
	Name    string
	Package string
	// Version is the bundle version as OLM parses it; "" when unknown, and VersionFrom then
	// says why.
	Version     string
	VersionFrom string
	// From only: the CSV's status.phase, its OperatorCondition (nil: none) and its owner
	// (nil: nobody owns it).
	Phase             string
	OperatorCondition any
	Owner             map[string]any
	// To only.
	Channel          string
	CatalogNamespace string
	CatalogName      string
}

// Move is one transition a document judges.
type Move struct {
	Namespace   string
	InstallPlan string // "" outside OLM v0
	From        *End   // nil: a first install
	To          End
}

// Data is the move as the document carries it: null for no move.
func (m *Move) Data() any {
	if m == nil {
		return nil
	}
	var plan, from any
	if m.InstallPlan != "" {
		plan = m.InstallPlan
	}
	if f := m.From; f != nil {
		var owner any
		if f.Owner != nil {
			owner = f.Owner
		}
		from = map[string]any{
			"name": f.Name, "package": f.Package, "version": versionData(f.Version), "versionFrom": f.VersionFrom,
			"phase": f.Phase, "operatorCondition": f.OperatorCondition, "owner": owner,
		}
	}
	t := m.To
	return map[string]any{
		"namespace": m.Namespace, "installPlan": plan, "from": from,
		"to": map[string]any{
			"name": t.Name, "package": t.Package, "version": versionData(t.Version), "versionFrom": t.VersionFrom,
			"channel": t.Channel, "catalog": map[string]any{"namespace": t.CatalogNamespace, "name": t.CatalogName},
		},
	}
}

func versionData(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// BundleVersion is s as OLM parses a bundle version (operator-framework/api's OperatorVersion
// and the olm.package property: tolerantly, so "v2.0" is 2.0.0; build metadata kept).
func BundleVersion(s string) (string, bool) {
	v, err := bsemver.ParseTolerant(s)
	if err != nil {
		return "", false
	}
	return v.String(), true
}

// nameVersion matches the semantic version at the end of a CSV name (etcdoperator.v0.9.4).
var nameVersion = regexp.MustCompile(`[.-]v?([0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$`)

// SetVersion sets e's version from the first of sources (each a version and where it was read)
// that parses, else from e.Name's suffix, which VersionFrom then says; else it says why none.
func (e *End) SetVersion(sources ...[2]string) {
	for _, s := range sources {
		if v, ok := BundleVersion(s[0]); ok {
			e.Version, e.VersionFrom = v, s[1]
			return
		}
	}
	if m := nameVersion.FindStringSubmatch(e.Name); m != nil {
		if v, ok := BundleVersion(m[1]); ok {
			e.Version = v
			e.VersionFrom = fmt.Sprintf("the name %s (no bundle version is known: no spec.version, no olm.package property in the plan, no PackageManifest entry)", e.Name)
			return
		}
	}
	e.Version = ""
	e.VersionFrom = fmt.Sprintf("nowhere: %s has no spec.version, no olm.package property in the plan, no PackageManifest entry and no semantic version at the end of its name", e.Name)
}

// WithMove is doc with its move: doc itself when it has one (null included), else a shallow
// copy with the move derived from the document's own fields, as a document of an older
// manager, which lacks the key, is judged (its pending upgrade; an extension's candidate).
func WithMove(doc map[string]any) map[string]any {
	if _, ok := doc["move"]; ok {
		return doc
	}
	out := make(map[string]any, len(doc)+1)
	for k, v := range doc {
		out[k] = v
	}
	if doc["apiVersion"] == ExtensionAPIVersion {
		out["move"] = ExtensionMove(doc).Data()
	} else {
		out["move"] = SubscriptionMove(doc).Data()
	}
	return out
}

// SubscriptionMove is the move a Subscription document's pending upgrade makes (nil when none
// is pending): to its current CSV, from its installed CSV, or, without one, the CSV its plan
// replaces (replacedCSV), else from nothing.
func SubscriptionMove(doc map[string]any) *Move {
	sub := object(doc["subscription"])
	current, installed := str(sub, "status", "currentCSV"), str(sub, "status", "installedCSV")
	plans, _ := doc["pendingInstallPlans"].([]any)
	if current == "" || (current == installed && len(plans) == 0) {
		return nil
	}
	pkg := str(sub, "spec", "name")
	m := &Move{Namespace: str(sub, "metadata", "namespace"), InstallPlan: str(sub, "status", "installPlanRef", "name")}
	m.To = End{Name: current, Package: pkg, Channel: str(sub, "spec", "channel"),
		CatalogNamespace: str(sub, "spec", "sourceNamespace"), CatalogName: str(sub, "spec", "source")}
	m.To.SetVersion(documentVersions(doc, current, object(doc["currentCSV"]))...)
	switch replaced := object(doc["replacedCSV"]); {
	case installed != "":
		csv := object(doc["installedCSV"])
		m.From = &End{Name: installed, Package: pkg, Phase: str(csv, "status", "phase"), OperatorCondition: doc["operatorCondition"],
			Owner: map[string]any{"kind": "Subscription", "namespace": m.Namespace, "name": str(sub, "metadata", "name")}}
		m.From.SetVersion(documentVersions(doc, installed, csv)...)
	case replaced != nil:
		name := str(replaced, "metadata", "name")
		m.From = &End{Name: name, Package: PropertiesPackage(str(replaced, "metadata", "annotations", "operatorframework.io/properties")), Phase: str(replaced, "status", "phase"), OperatorCondition: doc["operatorCondition"]}
		m.From.SetVersion(documentVersions(doc, name, replaced)...)
	}
	return m
}

// documentVersions are the places a Subscription document gives the CSV name a version, in
// order: its versions entry, the CSV's spec.version, the PackageManifest's channels.
func documentVersions(doc map[string]any, name string, csv map[string]any) [][2]string {
	var out [][2]string
	if v := object(object(doc["versions"])[name]); v != nil {
		out = append(out, [2]string{str(v, "version"), str(v, "from")})
	}
	if v := str(csv, "spec", "version"); v != "" {
		out = append(out, [2]string{v, fmt.Sprintf("ClusterServiceVersion %s spec.version", name)})
	}
	return append(out, PackageManifestVersions(doc, name)...)
}

// PackageManifestVersions are the versions a document's PackageManifest gives the CSV name,
// each with where it was read: channel entries and channel heads' currentCSVDesc.
func PackageManifestVersions(doc map[string]any, name string) [][2]string {
	var out [][2]string
	pkg := object(doc["packageManifest"])
	channels, _ := object(pkg["status"])["channels"].([]any)
	for _, c := range channels {
		ch := object(c)
		entries, _ := ch["entries"].([]any)
		for _, e := range entries {
			if str(object(e), "name") == name {
				out = append(out, [2]string{str(object(e), "version"), fmt.Sprintf("PackageManifest %s channel %s entries", str(pkg, "metadata", "name"), str(ch, "name"))})
			}
		}
		if str(ch, "currentCSV") == name {
			out = append(out, [2]string{str(ch, "currentCSVDesc", "version"), fmt.Sprintf("PackageManifest %s channel %s currentCSVDesc.version", str(pkg, "metadata", "name"), str(ch, "name"))})
		}
	}
	return out
}

// ExtensionMove is the move an extension document's candidate makes (nil without one): from
// the installed bundle, versions as the ClusterExtension and the catalog give them.
func ExtensionMove(doc map[string]any) *Move {
	cand := object(doc["candidate"])
	if cand == nil {
		return nil
	}
	ext := object(doc["extension"])
	name := str(ext, "metadata", "name")
	m := &Move{Namespace: str(ext, "spec", "namespace")}
	m.To = End{Name: str(cand, "name"), Package: str(cand, "package"), CatalogName: str(cand, "catalog")}
	if chs, _ := cand["channels"].([]any); len(chs) > 0 {
		m.To.Channel, _ = chs[0].(string)
	}
	m.To.SetVersion([2]string{str(cand, "version"), fmt.Sprintf("ClusterCatalog %s (the bundle's olm.package property)", str(cand, "catalog"))})
	if in := object(doc["installed"]); in != nil {
		m.From = &End{Name: str(in, "name"), Package: str(ext, "spec", "source", "catalog", "packageName"),
			Owner: map[string]any{"kind": "ClusterExtension", "name": name}}
		m.From.SetVersion([2]string{str(in, "version"), fmt.Sprintf("status.install.bundle of ClusterExtension %s", name)})
	}
	return m
}

// PropertiesPackage is the package the olm.package property of a bundle's properties document
// (a CSV's operatorframework.io/properties annotation) names; "" when none.
func PropertiesPackage(props string) string {
	if props == "" {
		return ""
	}
	var doc struct {
		Properties []struct {
			Type  string `json:"type"`
			Value struct {
				Package string `json:"packageName"`
			} `json:"value"`
		} `json:"properties"`
	}
	if json.Unmarshal([]byte(props), &doc) != nil {
		return ""
	}
	for _, p := range doc.Properties {
		if p.Type == "olm.package" {
			return p.Value.Package
		}
	}
	return ""
}

func object(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// str is the string at path in m ("" when absent or not a string).
func str(m map[string]any, path ...string) string {
	for _, k := range path[:len(path)-1] {
		m = object(m[k])
	}
	s, _ := m[path[len(path)-1]].(string)
	return s
}
