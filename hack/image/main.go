// Command image builds Tollgate's container image without a Docker daemon or a base image:
// FROM scratch, one layer with the static binary, the Mozilla CA bundle (for policy bundle
// servers over HTTPS) and a nonroot user, one image per architecture (linux/amd64 and
// linux/arm64 from `make image`) under one image index, written as an OCI image layout. Every
// timestamp is the source date and every tar entry is sorted with a fixed owner and mode, so
// the same binaries and flags give the same digests. `make image` runs it and prints the
// index's digest.
package main

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

const (
	binaryPath = "/usr/local/bin/tollgate"
	caPath     = "/etc/ssl/certs/ca-certificates.crt"
	// nonroot is distroless's unprivileged user, so the image and gcr.io/distroless/static:nonroot
	// (the Dockerfile's base) run Tollgate as the same user.
	nonroot = "65532"
)

// options are what goes into the image besides the fixed file system.
type options struct {
	BinaryDir string    // holds linux_<arch>/tollgate, the static binary of each architecture
	Arches    []string  // the GOARCHes of the index, in its order
	Version   string    // org.opencontainers.image.version, and the tag in index.json
	Revision  string    // org.opencontainers.image.revision
	Source    string    // org.opencontainers.image.source
	Created   time.Time // every timestamp in the image
}

func main() {
	var o options
	var out, arches string
	flag.StringVar(&o.BinaryDir, "binary-dir", "bin", "directory holding linux_<arch>/tollgate for each -arch")
	flag.StringVar(&arches, "arch", "amd64,arm64", "comma-separated GOARCHes, one image each in the index")
	flag.StringVar(&o.Version, "version", "dev", "image version label and tag")
	flag.StringVar(&o.Revision, "revision", "", "VCS revision label")
	flag.StringVar(&o.Source, "source", "https://github.com/tollgate-dev/tollgate", "source repository label")
	flag.StringVar(&out, "out", "bin/image", "OCI image layout directory to (re)create")
	flag.Parse()
	o.Arches = strings.Split(arches, ",")
	created, err := sourceDate(os.Getenv("SOURCE_DATE_EPOCH"))
	if err == nil {
		o.Created = created
		var digest v1.Hash
		if digest, err = buildLayout(out, o); err == nil {
			fmt.Println(digest)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "image:", err)
	os.Exit(1)
}

// sourceDate reads SOURCE_DATE_EPOCH (https://reproducible-builds.org/specs/source-date-epoch/);
// unset means the Unix epoch, still reproducible.
func sourceDate(epoch string) (time.Time, error) {
	if epoch == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", epoch, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// buildLayout writes the image index, one image per architecture, as a fresh OCI layout at
// dir and returns the index's digest.
func buildLayout(dir string, o options) (v1.Hash, error) {
	if len(o.Arches) == 0 {
		return v1.Hash{}, errors.New("no architecture")
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range o.Arches {
		img, err := build(o, arch, filepath.Join(o.BinaryDir, "linux_"+arch, "tollgate"))
		if err != nil {
			return v1.Hash{}, fmt.Errorf("linux/%s: %w", arch, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
	}
	// A layout appends to index.json; start over so the directory holds exactly this index.
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, fmt.Errorf("remove %s: %w", dir, err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("write layout %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": o.Version,
	})); err != nil {
		return v1.Hash{}, fmt.Errorf("write image index to %s: %w", dir, err)
	}
	return idx.Digest()
}

// build assembles the image of one architecture in memory, from the binary at path.
func build(o options, arch, path string) (v1.Image, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read binary: %w", err)
	}
	layerTar, err := rootfs(bin, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "hack/image", Comment: "tollgate, CA certificates, nonroot user"},
	})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", arch
	cfg.Created = v1.Time{Time: o.Created}
	cfg.Config = v1.Config{
		User:       nonroot + ":" + nonroot,
		Entrypoint: []string{binaryPath},
		WorkingDir: "/",
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"SSL_CERT_FILE=" + caPath,
		},
		Labels: map[string]string{
			"org.opencontainers.image.source":   o.Source,
			"org.opencontainers.image.version":  o.Version,
			"org.opencontainers.image.revision": o.Revision,
			"org.opencontainers.image.title":    "tollgate",
		},
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("set config: %w", err)
	}
	return img, nil
}

// file is one entry of the image's file system.
type file struct {
	mode int64
	uid  int
	body []byte // nil for a directory
}

// rootfs is the layer's tar: sorted entries, one timestamp, fixed owners and modes.
func rootfs(bin []byte, created time.Time) ([]byte, error) {
	pemCerts, err := caBundle()
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.Atoi(nonroot)
	files := map[string]file{
		"etc/":           {mode: 0o755},
		"etc/ssl/":       {mode: 0o755},
		"etc/ssl/certs/": {mode: 0o755},
		caPath[1:]:       {mode: 0o644, body: pemCerts},
		"etc/passwd":     {mode: 0o644, body: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		"etc/group":      {mode: 0o644, body: []byte("root:x:0:\nnonroot:x:65532:\n")},
		"home/":          {mode: 0o755},
		"home/nonroot/":  {mode: 0o700, uid: uid},
		"tmp/":           {mode: 0o1777},
		"usr/":           {mode: 0o755},
		"usr/local/":     {mode: 0o755},
		"usr/local/bin/": {mode: 0o755},
		binaryPath[1:]:   {mode: 0o755, body: bin},
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range names {
		f := files[name]
		hdr := &tar.Header{
			Name: name, Mode: f.mode, Uid: f.uid, Gid: f.uid, ModTime: created,
			Typeflag: tar.TypeReg, Size: int64(len(f.body)), Format: tar.FormatPAX,
		}
		if f.body == nil {
			hdr.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("tar %s: %w", name, err)
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, fmt.Errorf("tar %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("tar: %w", err)
	}
	return buf.Bytes(), nil
}

// caBundle is the Mozilla root store that golang.org/x/crypto/x509roots/fallback ships, as
// PEM, so the image does not depend on the build machine's /etc/ssl. Roots with constraints
// that PEM cannot express (NSS distrust dates) are left out rather than trusted unconditionally.
func caBundle() ([]byte, error) {
	var buf bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, fmt.Errorf("encode CA certificate: %w", err)
		}
	}
	if buf.Len() == 0 {
		return nil, errors.New("the fallback CA bundle is empty")
	}
	return buf.Bytes(), nil
}
