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
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// demoModule is a small policy pack in package tollgate.packs.<name>.
func demoModule(name, message string) string {
	return `# METADATA
# title: the ` + name + ` bundle holds this Subscription
package tollgate.packs.` + name + `

import data.tollgate.lib

# METADATA
# title: held by ` + name + `
# custom:
#   code: DemoHold
deny contains denial if {
	input.subscription.metadata.name == "` + name + `"
	denial := lib.denial(rego.metadata.rule(), "` + message + `")
}
`
}

func demoManifest(roots ...string) string {
	return `{"revision": "r1", "roots": ["` + strings.Join(roots, `", "`) + `"]}`
}

// brokenModule parses but does not compile: it calls a function that does not exist.
const brokenModule = `package tollgate.packs.broken

deny contains denial if {
	denial := no_such_function(input)
}
`

func writeFiles(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

// tarGz builds a bundle tarball the way `opa build` lays it out ("/path" names).
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "/" + n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(files[n]))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func modulePaths(bs []*bundle.Bundle) []string {
	var out []string
	for _, b := range bs {
		for _, m := range b.Modules {
			out = append(out, bundleModulePath(m))
		}
	}
	sort.Strings(out)
	return out
}

func quiet() BundleOptions { return BundleOptions{Once: true, Log: logr.Discard()} }

func compileWith(t *testing.T, bs []*bundle.Bundle) (*engine.Engine, error) {
	t.Helper()
	return engine.New(context.Background(), engine.Options{Policies: policies.FS, Bundles: bs})
}

func TestBundleDirectory(t *testing.T) {
	dir := writeFiles(t, t.TempDir(), map[string]string{
		".manifest":                   demoManifest("tollgate/packs/demo", "demo"),
		"demo.rego":                   demoModule("demo", "held"),
		"demo_test.rego":              "this is not Rego, and it is not loaded",
		"demo/limits/data.json":       `{"max": 3}`,
		"README.md":                   "ignored",
		"nested/more/extra.rego":      "package tollgate.packs.demo.extra\n\nx := 1\n",
		"nested/more/extra_test.rego": "package tollgate.packs.demo.extra_test\n",
	})
	src, err := LoadBundles(context.Background(), []string{dir}, quiet())
	require.NoError(t, err)
	bs := src.Bundles()
	require.Len(t, bs, 1)
	assert.Equal(t, []string{"demo.rego", "nested/more/extra.rego"}, modulePaths(bs))
	assert.Equal(t, map[string]any{"demo": map[string]any{"limits": map[string]any{"max": jsonNumber(t, "3")}}}, bs[0].Data)
	assert.Equal(t, "r1", bs[0].Manifest.Revision)

	e, err := compileWith(t, bs)
	require.NoError(t, err)
	assert.Contains(t, e.Modules(), "demo.rego")
	assert.Contains(t, e.Modules(), "nested/more/extra.rego")
}

// jsonNumber is how OPA's bundle reader decodes a JSON number.
func jsonNumber(t *testing.T, s string) any {
	t.Helper()
	b, err := bundle.NewCustomReader(bundle.NewTarballLoaderWithBaseURL(bytes.NewReader(tarGz(t, map[string]string{"data.json": `{"n": ` + s + `}`})), "")).Read()
	require.NoError(t, err)
	return b.Data["n"]
}

func TestBundleTarball(t *testing.T) {
	dir := t.TempDir()
	// Written with OPA's own bundle writer, as `opa build` does.
	var buf bytes.Buffer
	roots := []string{"tollgate/packs/tar"}
	require.NoError(t, bundle.NewWriter(&buf).Write(bundle.Bundle{
		Manifest: bundle.Manifest{Revision: "v7", Roots: &roots},
		Modules:  []bundle.ModuleFile{{URL: "/tar/tar.rego", Path: "/tar/tar.rego", Raw: []byte(demoModule("tar", "held"))}},
		Data:     map[string]any{},
	}))
	built := filepath.Join(dir, "tar.tar.gz")
	require.NoError(t, os.WriteFile(built, buf.Bytes(), 0o644))

	// A hand-made one whose tests are left out.
	handmade := filepath.Join(dir, "hand.tgz")
	require.NoError(t, os.WriteFile(handmade, tarGz(t, map[string]string{
		".manifest":      demoManifest("tollgate/packs/hand"),
		"hand.rego":      demoModule("hand", "held"),
		"hand_test.rego": "not Rego",
	}), 0o644))

	src, err := LoadBundles(context.Background(), []string{built, handmade}, quiet())
	require.NoError(t, err)
	bs := src.Bundles()
	require.Len(t, bs, 2)
	assert.Equal(t, "v7", bs[0].Manifest.Revision)
	assert.Equal(t, []string{"hand.rego", "tar/tar.rego"}, modulePaths(bs))
	_, err = compileWith(t, bs)
	require.NoError(t, err)
}

func TestBundleLoadErrors(t *testing.T) {
	dir := t.TempDir()
	notGzip := filepath.Join(dir, "plain.tar.gz")
	require.NoError(t, os.WriteFile(notGzip, []byte("just text"), 0o644))
	badTar := filepath.Join(dir, "bad.tar.gz")
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(bytes.Repeat([]byte("not a tar header "), 64))
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(badTar, gz.Bytes(), 0o644))
	empty := t.TempDir()
	onlyTests := writeFiles(t, t.TempDir(), map[string]string{"x_test.rego": "package x_test\n"})
	syntax := writeFiles(t, t.TempDir(), map[string]string{"bad.rego": "package tollgate.packs.bad\n\ndeny contains x if {\n"})
	outside := writeFiles(t, t.TempDir(), map[string]string{".manifest": demoManifest("tollgate/packs/a"), "b.rego": demoModule("b", "x")})
	a := writeFiles(t, t.TempDir(), map[string]string{".manifest": demoManifest("tollgate/packs"), "a.rego": demoModule("a", "x")})
	b := writeFiles(t, t.TempDir(), map[string]string{".manifest": demoManifest("tollgate/packs/b"), "b.rego": demoModule("b", "x")})
	samePath := writeFiles(t, t.TempDir(), map[string]string{".manifest": demoManifest("tollgate/packs/c"), "b.rego": demoModule("c", "x")})

	for _, tc := range []struct {
		name      string
		locations []string
		want      []string
	}{
		{"missing path", []string{filepath.Join(dir, "nope")}, []string{"nope", "no such file or directory"}},
		{"not gzip", []string{notGzip}, []string{"plain.tar.gz", "not a gzipped tar bundle"}},
		{"bad tar", []string{badTar}, []string{"bad.tar.gz", "read bundle tarball"}},
		{"empty directory", []string{empty}, []string{"not an OPA bundle"}},
		{"only tests", []string{onlyTests}, []string{"not an OPA bundle"}},
		{"syntax error names the file and row", []string{syntax}, []string{"bad.rego:", "rego_parse_error"}},
		{"module outside the roots", []string{outside}, []string{"do not permit", "tollgate.packs.b"}},
		{"several packs in one directory", []string{repo.Path("bundles", "packs")}, []string{"multiple manifest files", "its own --bundle"}},
		{"overlapping roots", []string{a, b}, []string{"overlaps root", a}},
		{"same module path in two bundles", []string{b, samePath}, []string{"module b.rego is also in bundle " + b}},
		{"bad URL", []string{"http://"}, []string{"not a valid URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadBundles(context.Background(), tc.locations, quiet())
			require.Error(t, err)
			t.Log(err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestBundleBrokenModuleIsACompileError(t *testing.T) {
	dir := writeFiles(t, t.TempDir(), map[string]string{
		".manifest":   demoManifest("tollgate/packs/broken"),
		"broken.rego": brokenModule,
	})
	src, err := LoadBundles(context.Background(), []string{dir}, quiet())
	require.NoError(t, err, "the bundle reads; compiling it with the rest is what fails")
	_, err = compileWith(t, src.Bundles())
	var ce *engine.CompileError
	require.ErrorAs(t, err, &ce)
	require.NotEmpty(t, ce.Items)
	assert.Equal(t, "broken.rego", ce.Items[0].File)
	assert.Equal(t, 4, ce.Items[0].Row)
	assert.Contains(t, ce.Items[0].Message, "no_such_function")
}

// bundleServer serves one bundle with an ETag, or fails.
type bundleServer struct {
	mu       sync.Mutex
	body     []byte
	etag     string
	fail     bool
	requests []string // If-None-Match of each request
}

func (s *bundleServer) set(body []byte, etag string, fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body, s.etag, s.fail = body, etag, fail
}

func (s *bundleServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Header.Get("If-None-Match"))
	switch {
	case s.fail:
		http.Error(w, "bundle store unavailable", http.StatusInternalServerError)
	case s.etag != "" && r.Header.Get("If-None-Match") == s.etag:
		w.WriteHeader(http.StatusNotModified)
	default:
		if s.etag != "" {
			w.Header().Set("ETag", s.etag)
		}
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(s.body)
	}
}

func (s *bundleServer) lastIfNoneMatch() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[len(s.requests)-1]
}

func noEvent(t *testing.T, src *BundleSource) {
	t.Helper()
	select {
	case <-src.Changed():
		t.Fatal("unexpected change event")
	default:
	}
}

func oneEvent(t *testing.T, src *BundleSource) {
	t.Helper()
	select {
	case <-src.Changed():
	default:
		t.Fatal("no change event")
	}
}

func TestBundleServerETagPolling(t *testing.T) {
	v1 := tarGz(t, map[string]string{".manifest": demoManifest("tollgate/packs/srv"), "srv.rego": demoModule("srv", "v1")})
	v2 := tarGz(t, map[string]string{
		".manifest":      demoManifest("tollgate/packs/srv"),
		"srv.rego":       demoModule("srv", "v2"),
		"more/more.rego": "package tollgate.packs.srv.more\n\nx := 2\n",
	})
	srv := &bundleServer{}
	srv.set(v1, `"v1"`, false)
	ts := httptest.NewTLSServer(srv)
	defer ts.Close()
	url := ts.URL + "/bundles/srv.tar.gz?token=secret"
	metric := SourceFailing.WithLabelValues("bundle/" + ts.URL + "/bundles/srv.tar.gz")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, err := LoadBundles(ctx, []string{url}, BundleOptions{PollInterval: time.Hour, Log: logr.Discard(), Client: ts.Client()})
	require.NoError(t, err)
	assert.Equal(t, "", srv.lastIfNoneMatch())
	assert.Equal(t, []string{"srv.rego"}, modulePaths(src.Bundles()))
	first := src.Bundles()[0]
	noEvent(t, src)

	// 304: unchanged, no event.
	require.NoError(t, src.refresh(ctx, 0))
	assert.Equal(t, `"v1"`, srv.lastIfNoneMatch())
	assert.Same(t, first, src.Bundles()[0])
	noEvent(t, src)

	// A new ETag: a new bundle and one event.
	srv.set(v2, `"v2"`, false)
	require.NoError(t, src.refresh(ctx, 0))
	assert.Equal(t, `"v1"`, srv.lastIfNoneMatch())
	assert.Equal(t, []string{"more/more.rego", "srv.rego"}, modulePaths(src.Bundles()))
	oneEvent(t, src)
	_, err = compileWith(t, src.Bundles())
	require.NoError(t, err)
	second := src.Bundles()[0]

	// 500: the last good bundle stays, the error is counted, and it is retried with the ETag.
	srv.set(nil, "", true)
	err = src.refresh(ctx, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "500")
	assert.Contains(t, err.Error(), "bundle store unavailable")
	assert.NotContains(t, err.Error(), "secret")
	assert.Same(t, second, src.Bundles()[0])
	assert.Equal(t, 1.0, testutil.ToFloat64(metric))
	noEvent(t, src)

	// A body that is no bundle: the same.
	srv.set([]byte("<html>maintenance</html>"), `"v3"`, false)
	require.Error(t, src.refresh(ctx, 0))
	assert.Same(t, second, src.Bundles()[0])
	noEvent(t, src)

	// Back: 304 on the last accepted ETag, and the error clears.
	srv.set(v2, `"v2"`, false)
	require.NoError(t, src.refresh(ctx, 0))
	assert.Equal(t, `"v2"`, srv.lastIfNoneMatch())
	assert.Equal(t, 0.0, testutil.ToFloat64(metric))
	assert.Same(t, second, src.Bundles()[0])
	noEvent(t, src)

	// A server without ETags: the same content is no change.
	srv.set(v2, "", false)
	require.NoError(t, src.refresh(ctx, 0))
	assert.Same(t, second, src.Bundles()[0])
	noEvent(t, src)
}

func TestBundleServerPollsInTheBackground(t *testing.T) {
	srv := &bundleServer{}
	srv.set(tarGz(t, map[string]string{"bg.rego": demoModule("bg", "v1")}), `"1"`, false)
	ts := httptest.NewTLSServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, err := LoadBundles(ctx, []string{ts.URL}, BundleOptions{PollInterval: 10 * time.Millisecond, Log: logr.Discard(), Client: ts.Client()})
	require.NoError(t, err)

	srv.set(tarGz(t, map[string]string{"bg.rego": demoModule("bg", "v2")}), `"2"`, false)
	select {
	case <-src.Changed():
	case <-time.After(10 * time.Second):
		t.Fatal("no change event from the poller")
	}
	assert.Contains(t, string(src.Bundles()[0].Modules[0].Raw), "v2")
}

func TestBundleServerMustAnswerAtStart(t *testing.T) {
	srv := &bundleServer{}
	srv.set(nil, "", true)
	ts := httptest.NewTLSServer(srv)
	defer ts.Close()
	opts := quiet()
	opts.Client = ts.Client()
	_, err := LoadBundles(context.Background(), []string{ts.URL + "/b.tar.gz"}, opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "500")

	ts.Close()
	_, err = LoadBundles(context.Background(), []string{ts.URL + "/b.tar.gz"}, opts)
	require.Error(t, err)
}

func TestBundleDirectoryIsReread(t *testing.T) {
	dir := writeFiles(t, t.TempDir(), map[string]string{"d.rego": demoModule("d", "v1")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, err := LoadBundles(ctx, []string{dir}, BundleOptions{PollInterval: time.Hour, Log: logr.Discard()})
	require.NoError(t, err)
	first := src.Bundles()[0]

	require.NoError(t, src.refresh(ctx, 0))
	assert.Same(t, first, src.Bundles()[0])
	noEvent(t, src)

	writeFiles(t, dir, map[string]string{"d.rego": "package tollgate.packs.d\n\ndeny contains x if {\n"})
	require.Error(t, src.refresh(ctx, 0))
	assert.Same(t, first, src.Bundles()[0])
	noEvent(t, src)

	writeFiles(t, dir, map[string]string{"d.rego": demoModule("d", "v2")})
	require.NoError(t, src.refresh(ctx, 0))
	assert.Contains(t, string(src.Bundles()[0].Modules[0].Raw), "v2")
	oneEvent(t, src)
}

// TestBundlePacks loads every policy pack as its own bundle, together, and compiles them with
// the embedded policies.
func TestBundlePacks(t *testing.T) {
	entries, err := os.ReadDir(repo.Path("bundles", "packs"))
	require.NoError(t, err)
	var dirs, want []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := repo.Path("bundles", "packs", e.Name())
		dirs = append(dirs, dir)
		want = append(want, e.Name()+".rego")
		t.Run(e.Name(), func(t *testing.T) {
			src, err := LoadBundles(context.Background(), []string{dir}, quiet())
			require.NoError(t, err)
			b := src.Bundles()[0]
			assert.Equal(t, []string{"tollgate/packs/" + e.Name()}, *b.Manifest.Roots)
			assert.Equal(t, []string{e.Name() + ".rego"}, modulePaths(src.Bundles()), "tests are left out")
			_, err = compileWith(t, src.Bundles())
			require.NoError(t, err)
		})
	}
	require.GreaterOrEqual(t, len(dirs), 3)
	src, err := LoadBundles(context.Background(), dirs, quiet())
	require.NoError(t, err)
	assert.Equal(t, want, modulePaths(src.Bundles()))
	e, err := compileWith(t, src.Bundles())
	require.NoError(t, err)
	for _, m := range want {
		assert.Contains(t, e.Modules(), m)
	}
}

// TestSetBlamesABundleThatDoesNotCompile checks compile-then-blame for bundles: a bundle that
// does not compile is a problem of the bundles (""), not of the ConfigMaps read beside it, and
// the fixed bundle compiles with them.
func TestSetBlamesABundleThatDoesNotCompile(t *testing.T) {
	dir := writeFiles(t, t.TempDir(), map[string]string{".manifest": demoManifest("tollgate/packs/rec"), "rec.rego": demoModule("rec", "v1")})
	ctx := context.Background()
	snap := snapshot.New()
	require.NoError(t, snap.Add(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "tollgate-system", Labels: map[string]string{Label: KindData}},
		Data:       map[string]string{"config.yaml": `disabledCodes: ["X"]`},
	}))
	read := func() *Set {
		src, err := LoadBundles(ctx, []string{dir}, quiet())
		require.NoError(t, err)
		set, err := Read(ctx, snap, "tollgate-system", engine.Options{Bundles: src.Bundles()})
		require.NoError(t, err)
		return set
	}

	set := read()
	e, err := set.Compile(ctx)
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Empty(t, set.Problems)
	assert.NoError(t, set.Failure())

	writeFiles(t, dir, map[string]string{"rec.rego": strings.Replace(brokenModule, "packs.broken", "packs.rec", 1)})
	set = read()
	e, err = set.Compile(ctx)
	require.NoError(t, err)
	assert.Nil(t, e, "a set that does not compile is not put in service")
	assert.Contains(t, set.Problems, "", "the bundle is blamed")
	assert.NotContains(t, set.Problems, "data", "the data ConfigMap is not")
	assert.ErrorContains(t, set.Failure(), "an OPA bundle")
}
