package policysource

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gzipBomb is a bundle tarball of n files of size bytes of zeros each, beside a valid module:
// a few hundred kilobytes that expand to n*size bytes.
func gzipBomb(t *testing.T, n int, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	tw := tar.NewWriter(gz)
	module := demoModule("bomb", "x")
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "/bomb.rego", Mode: 0o644, Size: int64(len(module)), Typeflag: tar.TypeReg}))
	_, err = tw.Write([]byte(module))
	require.NoError(t, err)
	zeros := make([]byte, 1<<20)
	for i := range n {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "/data/" + strings.Repeat("z", 1+i%50) + ".json", Mode: 0o644, Size: size, Typeflag: tar.TypeReg}))
		for left := size; left > 0; left -= int64(len(zeros)) {
			_, err := tw.Write(zeros[:min(left, int64(len(zeros)))])
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// TestABundleIsCappedAsAWhole: every file is under the per-file cap, but together they are
// not. The bundle is refused before OPA's loader reads it into memory.
func TestABundleIsCappedAsAWhole(t *testing.T) {
	bomb := gzipBomb(t, 80, 1<<20) // 80 MiB of zeros, each file 1 MiB
	t.Logf("gzip bomb: %d bytes compressed, %d MiB uncompressed", len(bomb), 80)
	require.Less(t, len(bomb), 1<<20)
	path := filepath.Join(t.TempDir(), "bomb.tar.gz")
	require.NoError(t, os.WriteFile(path, bomb, 0o644))
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(bomb) }))
	defer ts.Close()
	opts := quiet()
	opts.Client = ts.Client()

	for _, loc := range []string{path, ts.URL + "/bomb.tar.gz"} {
		t.Run(loc, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := LoadBundles(context.Background(), []string{loc}, opts)
			runtime.ReadMemStats(&after)
			require.ErrorIs(t, err, ErrBundleTooLarge)
			assert.Contains(t, err.Error(), "more than 67108864 bytes uncompressed")
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20), "the bundle was not expanded into memory")
		})
	}

	small := quiet()
	small.MaxBytes = 4 << 20
	_, err := LoadBundles(context.Background(), []string{path}, small)
	require.ErrorIs(t, err, ErrBundleTooLarge, "the same cap applies to a smaller limit")

	fits := filepath.Join(t.TempDir(), "fits.tar.gz")
	require.NoError(t, os.WriteFile(fits, gzipBomb(t, 3, 1<<20), 0o644))
	_, err = LoadBundles(context.Background(), []string{fits}, small)
	require.NoError(t, err, "a bundle under the total cap loads (OPA reads only data.json files as data)")
}

func TestABundleDirectoryIsCappedAsAWhole(t *testing.T) {
	opts := quiet()
	opts.MaxBytes = 1 << 20
	files := map[string]string{"d.rego": demoModule("d", "v1")}
	for _, name := range []string{"a.json", "b.json", "c.json"} {
		files[name] = `{"pad": "` + strings.Repeat("x", 400<<10) + `"}`
	}
	dir := writeFiles(t, t.TempDir(), files)
	_, err := LoadBundles(context.Background(), []string{dir}, opts)
	require.ErrorIs(t, err, ErrBundleTooLarge)
	assert.Contains(t, err.Error(), "more than 1048576 bytes")

	tests := writeFiles(t, t.TempDir(), map[string]string{
		"d.rego": demoModule("d", "v1"), "a_test.rego": "package x_test\n# " + strings.Repeat("x", 2<<20) + "\n",
	})
	opts.MaxBytes = 3 << 20
	_, err = LoadBundles(context.Background(), []string{tests}, opts)
	require.NoError(t, err, "policy tests are not loaded, so they do not count")
}

// TestABundleServersErrorIsCutAndEscaped: the body of a failed answer reaches logs, metrics'
// neighbours and terminals, so it is kept short and escaped.
func TestABundleServersErrorIsCutAndEscaped(t *testing.T) {
	hostile := "\x1b[2J\x1b[32mALLOWED\x1b[0m \x1b]52;c;eA==\x07 \rfake\u202e line\ttab \u009b2J "
	for _, tc := range []struct {
		name string
		body string
		cut  bool
	}{
		{"short and hostile", hostile, false},
		{"long, cut inside a character", strings.Repeat("x", maxErrorBody-1) + "é" + strings.Repeat(hostile, 100), true},
		{"huge", strings.Repeat(hostile, 1<<14), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer ts.Close()
			opts := quiet()
			opts.Client = ts.Client()
			_, err := LoadBundles(context.Background(), []string{ts.URL + "/b.tar.gz"}, opts)
			require.Error(t, err)
			msg := err.Error()
			assert.Contains(t, msg, "403 Forbidden")
			assert.True(t, utf8.ValidString(msg))
			for _, r := range msg {
				assert.False(t, r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x202e, "unescaped %U in %q", r, msg)
			}
			assert.Less(t, len(msg), 4*maxErrorBody+200, "escapes at most quadruple the kept bytes")
			assert.Equal(t, tc.cut, strings.HasSuffix(msg, "(cut at 512 bytes)"), msg)
			if tc.cut && strings.HasPrefix(tc.body, "xxx") {
				assert.Contains(t, msg, strings.Repeat("x", maxErrorBody-1)+" …", "the split character is dropped, the rest kept")
			}
		})
	}
}
