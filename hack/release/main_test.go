package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

func TestRun(t *testing.T) {
	dir := binaries(t)
	license := filepath.Join(dir, "LICENSE")
	require.NoError(t, os.WriteFile(license, []byte("license text"), 0o600))
	o := options{
		Dir: dir, Version: "v1.2.3", Repo: "https://github.com/example/tollgate/",
		Extra: []string{license}, Modified: time.Unix(1700000000, 0),
	}
	require.NoError(t, run(o))

	raw, err := os.ReadFile(filepath.Join(dir, "tollgate.yaml"))
	require.NoError(t, err)
	var got plugin
	require.NoError(t, yaml.UnmarshalStrict(raw, &got))
	assert.Equal(t, "krew.googlecontainertools.github.com/v1alpha2", got.APIVersion)
	assert.Equal(t, "Plugin", got.Kind)
	assert.Equal(t, "tollgate", got.Metadata["name"])
	assert.Equal(t, "v1.2.3", got.Spec.Version)
	require.Len(t, got.Spec.Platforms, len(platforms))

	sums, err := os.ReadFile(filepath.Join(dir, "sha256sums.txt"))
	require.NoError(t, err)
	for i, p := range platforms {
		kp := got.Spec.Platforms[i]
		name := archiveName("v1.2.3", p)
		assert.Equal(t, map[string]string{"os": p.OS, "arch": p.Arch}, kp.Selector.MatchLabels)
		assert.Equal(t, "https://github.com/example/tollgate/releases/download/v1.2.3/"+name, kp.URI)
		assert.Equal(t, binName, kp.Bin)

		archive, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		sum := sha256.Sum256(archive)
		assert.Equal(t, hex.EncodeToString(sum[:]), kp.Sha256, "the manifest's sha256 for %s matches the archive", name)
		assert.Contains(t, string(sums), hex.EncodeToString(sum[:])+"  "+name+"\n")
		assert.Equal(t, map[string]string{binName: "bin " + p.OS + "/" + p.Arch, "LICENSE": "license text"}, untar(t, archive))
	}

	// The same inputs give the same archives, so a rebuilt release keeps its checksums.
	require.NoError(t, run(o))
	again, err := os.ReadFile(filepath.Join(dir, "sha256sums.txt"))
	require.NoError(t, err)
	assert.Equal(t, string(sums), string(again))
}

// make release runs from the repository's root with the default -extra: every archive holds
// the repository's Apache-2.0 LICENSE and its README beside the binary.
func TestTheArchivesHoldTheLicenseAndTheReadme(t *testing.T) {
	dir := binaries(t)
	root := repo.Root()
	var extra []string
	want := map[string]string{}
	for _, name := range extraFiles {
		body, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err, "the repository has %s", name)
		extra = append(extra, filepath.Join(root, name))
		want[name] = string(body)
	}
	assert.Contains(t, want["LICENSE"], "Apache License\n                           Version 2.0, January 2004")
	assert.Contains(t, want["LICENSE"], "Copyright 2026 The Tollgate Authors.")
	require.NoError(t, run(options{Dir: dir, Version: "v1.2.3", Extra: extra}))
	for _, p := range platforms {
		archive, err := os.ReadFile(filepath.Join(dir, archiveName("v1.2.3", p)))
		require.NoError(t, err)
		got := untar(t, archive)
		assert.Equal(t, "bin "+p.OS+"/"+p.Arch, got[binName])
		for name, body := range want {
			assert.Equal(t, body, got[name], "%s in the %s/%s archive", name, p.OS, p.Arch)
		}
	}
}

// An extra file that is missing fails the release rather than shipping an archive without it.
func TestRunNeedsEveryExtraFile(t *testing.T) {
	dir := binaries(t)
	err := run(options{Dir: dir, Version: "v1.2.3", Extra: []string{filepath.Join(dir, "LICENSE")}})
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorContains(t, err, "LICENSE")
}

// binaries is a release folder holding a fake binary for every platform.
func binaries(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range platforms {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, p.OS+"_"+p.Arch), 0o750))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p.OS+"_"+p.Arch, binName), []byte("bin "+p.OS+"/"+p.Arch), 0o600))
	}
	return dir
}

func TestRunNeedsEveryPlatform(t *testing.T) {
	err := run(options{Dir: t.TempDir(), Version: "v1.2.3"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "linux/amd64")
}

func untar(t *testing.T, archive []byte) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(string(archive)))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[hdr.Name] = string(body)
	}
}
