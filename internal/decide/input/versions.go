package input

import (
	"fmt"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	packagesv1 "github.com/tollgate-dev/tollgate/apis/packages/v1"
)

// versions is the document's versions (policies/README.md): for the Subscription's current,
// installed and replaced CSVs, the bundle version and where it was read, from the first place
// that says it: the CSV itself (spec.version), a pending plan (its bundle lookup's or CSV
// step's olm.package property, its CSV step's spec.version), the PackageManifest (a channel
// entry, a channel head's currentCSVDesc), the referenced plan before the others. OLM never derives a version from a CSV's name, and
// neither does this: a policy that falls back on the name says so.
func (st *state) versions() map[string]any {
	sub := st.sub.(*v1alpha1.Subscription)
	csvs := map[string]*v1alpha1.ClusterServiceVersion{}
	current, _ := st.currentCSV.(*v1alpha1.ClusterServiceVersion)
	for _, csv := range []*v1alpha1.ClusterServiceVersion{current, st.installedCSV, st.replacedCSV} {
		if csv != nil {
			csvs[csv.Name] = csv
		}
	}
	out := map[string]any{}
	for _, name := range []string{sub.Status.CurrentCSV, sub.Status.InstalledCSV, nameOf(st.replacedCSV)} {
		if name == "" {
			continue
		}
		if v, ok := st.versionOf(name, csvs[name]); ok {
			out[name] = map[string]any{"version": v.Version, "from": v.From}
		}
	}
	return out
}

func nameOf(csv *v1alpha1.ClusterServiceVersion) string {
	if csv == nil {
		return ""
	}
	return csv.Name
}

// versionOf is the bundle version of the CSV name (csv when it exists) from the first place
// that says it.
func (st *state) versionOf(name string, csv *v1alpha1.ClusterServiceVersion) (v1alpha1.SourcedVersion, bool) {
	if csv != nil && csv.Spec.Version != "" {
		return v1alpha1.SourcedVersion{Version: csv.Spec.Version, From: fmt.Sprintf("ClusterServiceVersion %s spec.version", name)}, true
	}
	for _, plan := range st.plans() {
		if vs := plan.FactsOf(name).Versions; len(vs) > 0 {
			return vs[0], true
		}
	}
	if pkg, ok := st.pkg.(*packagesv1.PackageManifest); ok {
		return packageVersion(pkg, name)
	}
	return v1alpha1.SourcedVersion{}, false
}

// packageVersion is the version the PackageManifest gives the CSV name: a channel entry's,
// or a channel head's currentCSVDesc.version.
func packageVersion(pkg *packagesv1.PackageManifest, name string) (v1alpha1.SourcedVersion, bool) {
	for _, ch := range pkg.Status.Channels {
		for _, e := range ch.Entries {
			if e.Name == name && e.Version != "" {
				return v1alpha1.SourcedVersion{Version: e.Version, From: fmt.Sprintf("PackageManifest %s channel %s entries", pkg.Name, ch.Name)}, true
			}
		}
		if ch.CurrentCSV == name && ch.CurrentCSVDesc.Version != "" {
			return v1alpha1.SourcedVersion{Version: ch.CurrentCSVDesc.Version, From: fmt.Sprintf("PackageManifest %s channel %s currentCSVDesc.version", pkg.Name, ch.Name)}, true
		}
	}
	return v1alpha1.SourcedVersion{}, false
}

// plans are the pending plans, the one the Subscription references first: its move is that
// plan's, so its versions are read from that plan before any other.
func (st *state) plans() []*v1alpha1.InstallPlan {
	var out []*v1alpha1.InstallPlan
	ref, _ := st.plan.(*v1alpha1.InstallPlan)
	if ref != nil {
		out = append(out, ref)
	}
	for i := range st.pending {
		if ref == nil || st.pending[i].Name != ref.Name {
			out = append(out, &st.pending[i])
		}
	}
	return out
}
