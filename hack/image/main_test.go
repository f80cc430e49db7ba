package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildLayout(t *testing.T) {
	dir := t.TempDir()
	bins := fakeBinaries(t, dir)
	o := options{
		BinaryDir: bins, Arches: []string{"amd64", "arm64"}, Version: "v1.2.3", Revision: "abc123",
		Source: "https://example.com/tollgate", Created: time.Unix(1700000000, 0).UTC(),
	}

	first, err := buildLayout(filepath.Join(dir, "one"), o)
	require.NoError(t, err)
	second, err := buildLayout(filepath.Join(dir, "two"), o)
	require.NoError(t, err)
	assert.Equal(t, first, second, "two builds of the same input must have the same digest")
	again, err := buildLayout(filepath.Join(dir, "one"), o)
	require.NoError(t, err)
	assert.Equal(t, first, again, "rebuilding into an existing layout must replace it")

	root, err := layout.ImageIndexFromPath(filepath.Join(dir, "one"))
	require.NoError(t, err)
	manifest, err := root.IndexManifest()
	require.NoError(t, err)
	require.Len(t, manifest.Manifests, 1, "the layout holds exactly one image index")
	assert.Equal(t, first, manifest.Manifests[0].Digest)
	assert.Equal(t, types.OCIImageIndex, manifest.Manifests[0].MediaType)
	assert.Equal(t, "v1.2.3", manifest.Manifests[0].Annotations["org.opencontainers.image.ref.name"])

	// The index lists one image per platform, linux/amd64 and linux/arm64, each of its own
	// architecture with its own binary.
	idx, err := root.ImageIndex(first)
	require.NoError(t, err)
	platforms, err := idx.IndexManifest()
	require.NoError(t, err)
	var listed []string
	for _, m := range platforms.Manifests {
		require.NotNil(t, m.Platform)
		listed = append(listed, m.Platform.String())
		img, err := idx.Image(m.Digest)
		require.NoError(t, err)
		cfg, err := img.ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, m.Platform.OS, cfg.OS)
		assert.Equal(t, m.Platform.Architecture, cfg.Architecture)
	}
	assert.Equal(t, []string{"linux/amd64", "linux/arm64"}, listed)

	img, err := idx.Image(platforms.Manifests[1].Digest)
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "65532:65532", cfg.Config.User)
	assert.Equal(t, []string{"/usr/local/bin/tollgate"}, cfg.Config.Entrypoint)
	assert.Equal(t, "linux", cfg.OS)
	assert.Equal(t, "arm64", cfg.Architecture)
	assert.True(t, cfg.Created.Equal(o.Created))
	assert.Equal(t, "https://example.com/tollgate", cfg.Config.Labels["org.opencontainers.image.source"])
	assert.Equal(t, "v1.2.3", cfg.Config.Labels["org.opencontainers.image.version"])
	assert.Equal(t, "abc123", cfg.Config.Labels["org.opencontainers.image.revision"])

	files, bodies := imageFiles(t, img)
	require.Contains(t, files, "usr/local/bin/tollgate")
	assert.Equal(t, "#!/bin/false arm64\n", string(bodies["usr/local/bin/tollgate"]))
	assert.Equal(t, int64(0o755), files["usr/local/bin/tollgate"].Mode)
	require.Contains(t, files, "etc/ssl/certs/ca-certificates.crt")
	assert.Contains(t, string(bodies["etc/ssl/certs/ca-certificates.crt"]), "-----BEGIN CERTIFICATE-----")
	assert.Contains(t, string(bodies["etc/passwd"]), "nonroot:x:65532:65532:")
	assert.Contains(t, string(bodies["etc/group"]), "nonroot:x:65532:")
	for name, hdr := range files {
		assert.True(t, hdr.ModTime.Equal(o.Created), "%s has the source date", name)
	}
}

// fakeBinaries writes a tollgate binary for linux/amd64 and linux/arm64 under dir/bin, as the
// build leaves them, and returns that directory.
func fakeBinaries(t *testing.T, dir string) string {
	t.Helper()
	bins := filepath.Join(dir, "bin")
	for _, arch := range []string{"amd64", "arm64"} {
		require.NoError(t, os.MkdirAll(filepath.Join(bins, "linux_"+arch), 0o750))
		require.NoError(t, os.WriteFile(filepath.Join(bins, "linux_"+arch, "tollgate"), []byte("#!/bin/false "+arch+"\n"), 0o600))
	}
	return bins
}

// imageFiles returns the headers and contents of the files of img's flattened filesystem, by name.
func imageFiles(t *testing.T, img v1.Image) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	files := map[string]*tar.Header{}
	bodies := map[string][]byte{}
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, bodies
		}
		require.NoError(t, err)
		files[hdr.Name] = hdr
		bodies[hdr.Name], err = io.ReadAll(tr)
		require.NoError(t, err)
	}
}

func TestBuildLayoutNeedsEveryBinary(t *testing.T) {
	_, err := buildLayout(filepath.Join(t.TempDir(), "out"), options{BinaryDir: t.TempDir(), Arches: []string{"amd64", "arm64"}})
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorContains(t, err, "linux/amd64")
}

func TestSourceDate(t *testing.T) {
	got, err := sourceDate("")
	require.NoError(t, err)
	assert.Equal(t, int64(0), got.Unix())
	got, err = sourceDate("1700000000")
	require.NoError(t, err)
	assert.Equal(t, int64(1700000000), got.Unix())
	_, err = sourceDate("yesterday")
	require.Error(t, err)
}
