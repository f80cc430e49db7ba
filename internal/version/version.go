// Package version is Tollgate's one version: the binary, the image, the OLM bundle and the
// krew manifest all name the same one, taken from the VERSION file at the repository root.
// `make build`, `make image` and `make release` stamp it into Version with
// -ldflags "-X github.com/tollgate-dev/tollgate/version.Version=...".
package version

import (
	"runtime/debug"
	"strings"
)

// Version is set at link time; "dev" means it was not, so Get reads the build info instead.
var Version = "dev"

// Info says which build of Tollgate this is.
type Info struct {
	// Version is the release ("v0.1.0"), the module version for `go install`, or "dev".
	Version string
	// Revision is the VCS commit the binary was built from, when the toolchain recorded it.
	Revision string
	// Modified is true when the work tree had uncommitted changes at build time.
	Modified bool
}

// Get returns the linked-in version, falling back to what the Go toolchain recorded.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return get(Version, bi)
}

func get(linked string, bi *debug.BuildInfo) Info {
	info := Info{Version: linked}
	if bi == nil {
		return info
	}
	if info.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the version, then the short revision and "dirty" when known: "v0.1.0 (1a2b3c4d5e6f)".
func (i Info) String() string {
	var extra []string
	if i.Revision != "" {
		extra = append(extra, i.Revision[:min(len(i.Revision), 12)])
	}
	if i.Modified {
		extra = append(extra, "dirty")
	}
	if len(extra) == 0 {
		return i.Version
	}
	return i.Version + " (" + strings.Join(extra, ", ") + ")"
}

// String is Get().String().
func String() string { return Get().String() }
