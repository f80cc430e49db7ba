// Command release packages the cross-compiled kubectl-tollgate binaries as krew archives:
// one tar.gz per platform, sha256sums.txt, and the krew plugin manifest tollgate.yaml whose
// URIs point at the GitHub release of the version. `make release` builds the binaries into
// <dir>/<os>_<arch>/kubectl-tollgate and then runs it.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

const binName = "kubectl-tollgate"

// extraFiles go beside the binary in every archive: the licence the binary is distributed
// under, which must travel with it, and the README.
var extraFiles = []string{"LICENSE", "README.md"}

// platform is one os/arch that a release ships.
type platform struct{ OS, Arch string }

// platforms are the krew platforms of a release, in the manifest's order.
var platforms = []platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// options say what to package and where it will be downloaded from.
type options struct {
	Dir      string    // holds <os>_<arch>/kubectl-tollgate; archives and manifest go here
	Version  string    // the release tag, "v0.1.0"
	Repo     string    // the GitHub repository URL, for homepage and release downloads
	Extra    []string  // files added beside the binary in every archive: extraFiles
	Modified time.Time // the mtime of every archive entry
}

func main() {
	var o options
	var extra string
	flag.StringVar(&o.Dir, "dir", "bin/release", "directory with <os>_<arch>/"+binName+"; output goes here too")
	flag.StringVar(&o.Version, "version", "", "release tag, e.g. v0.1.0")
	flag.StringVar(&o.Repo, "repo", "https://github.com/tollgate-dev/tollgate", "GitHub repository URL")
	flag.StringVar(&extra, "extra", strings.Join(extraFiles, ","), "comma-separated files to add to each archive; each must exist")
	flag.Parse()
	o.Extra = strings.Split(extra, ",")
	o.Modified = time.Unix(0, 0).UTC()
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "release: SOURCE_DATE_EPOCH %q: %v\n", epoch, err)
			os.Exit(1)
		}
		o.Modified = time.Unix(sec, 0).UTC()
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// run writes the archives, sha256sums.txt and tollgate.yaml into o.Dir.
func run(o options) error {
	if o.Version == "" {
		return errors.New("-version is required")
	}
	var extras []namedFile
	for _, name := range o.Extra {
		if name == "" {
			continue
		}
		body, err := os.ReadFile(name) // a missing file fails the release: no archive without its licence
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		extras = append(extras, namedFile{filepath.Base(name), 0o644, body})
	}
	var sums strings.Builder
	plugin := newPlugin(o)
	for _, p := range platforms {
		bin, err := os.ReadFile(filepath.Join(o.Dir, p.OS+"_"+p.Arch, binName))
		if err != nil {
			return fmt.Errorf("read the %s/%s binary: %w", p.OS, p.Arch, err)
		}
		archive, err := tarGz(append([]namedFile{{binName, 0o755, bin}}, extras...), o.Modified)
		if err != nil {
			return fmt.Errorf("archive %s/%s: %w", p.OS, p.Arch, err)
		}
		name := archiveName(o.Version, p)
		if err := os.WriteFile(filepath.Join(o.Dir, name), archive, 0o644); err != nil { //nolint:gosec // release archives are public
			return fmt.Errorf("write %s: %w", name, err)
		}
		sum := sha256.Sum256(archive)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
		plugin.Spec.Platforms = append(plugin.Spec.Platforms, krewPlatform{
			Selector: selector{MatchLabels: map[string]string{"os": p.OS, "arch": p.Arch}},
			URI:      fmt.Sprintf("%s/releases/download/%s/%s", strings.TrimSuffix(o.Repo, "/"), o.Version, name),
			Sha256:   hex.EncodeToString(sum[:]),
			Bin:      binName,
		})
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "sha256sums.txt"), []byte(sums.String()), 0o644); err != nil { //nolint:gosec // public checksums
		return fmt.Errorf("write sha256sums.txt: %w", err)
	}
	manifest, err := yaml.Marshal(plugin)
	if err != nil {
		return fmt.Errorf("marshal krew manifest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "tollgate.yaml"), manifest, 0o644); err != nil { //nolint:gosec // public manifest
		return fmt.Errorf("write tollgate.yaml: %w", err)
	}
	return nil
}

func archiveName(version string, p platform) string {
	return fmt.Sprintf("%s_%s_%s_%s.tar.gz", binName, version, p.OS, p.Arch)
}

// namedFile is one entry of an archive.
type namedFile struct {
	name string
	mode int64
	body []byte
}

// tarGz is a reproducible archive: entries in the given order, one mtime, owner root.
func tarGz(files []namedFile, modified time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: modified, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("tar %s: %w", f.name, err)
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, fmt.Errorf("tar %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("tar: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return buf.Bytes(), nil
}

// plugin is the krew Plugin manifest (krew.googlecontainertools.github.com/v1alpha2).
type plugin struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Spec       pluginSpec     `json:"spec"`
}

type pluginSpec struct {
	Version          string         `json:"version"`
	Homepage         string         `json:"homepage"`
	ShortDescription string         `json:"shortDescription"`
	Description      string         `json:"description"`
	Platforms        []krewPlatform `json:"platforms"`
}

type krewPlatform struct {
	Selector selector `json:"selector"`
	URI      string   `json:"uri"`
	Sha256   string   `json:"sha256"`
	Bin      string   `json:"bin"`
}

type selector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

func newPlugin(o options) plugin {
	return plugin{
		APIVersion: "krew.googlecontainertools.github.com/v1alpha2",
		Kind:       "Plugin",
		Metadata:   map[string]any{"name": "tollgate"},
		Spec: pluginSpec{
			Version:          o.Version,
			Homepage:         o.Repo,
			ShortDescription: "Explain and test policy-gated OLM operator upgrades",
			Description: "kubectl tollgate explains why Tollgate held or approved an OLM operator upgrade,\n" +
				"evaluates its Rego policies against a cluster or a snapshot without a cluster,\n" +
				"and takes snapshots to test policies offline.\n",
		},
	}
}
