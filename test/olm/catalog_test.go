package olm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/test/framework/process"
)

// release is one version of an operator as a catalog publishes it: a bundle with no image,
// whose CSV (and the CRD it owns) are embedded as olm.bundle.object properties, so OLM
// resolves and installs it without unpacking an image.
type release struct {
	pkg      string
	version  string
	replaces string   // the CSV this one replaces in the channel, if any
	requires []string // packages this bundle needs (olm.package.required), any version
}

// channel is the one channel every package of the suite's catalogs publishes.
const channel = "stable"

func csvName(pkg, version string) string { return pkg + ".v" + version }

// catalogDocs is the file-based catalog of releases: each package, its channel with every
// release in order, and one bundle per release.
func catalogDocs(releases []release) ([]any, error) {
	var docs []any
	var pkgs []string
	for _, r := range releases {
		if !slices.Contains(pkgs, r.pkg) {
			pkgs = append(pkgs, r.pkg)
		}
	}
	for _, pkg := range pkgs {
		docs = append(docs, map[string]any{"schema": "olm.package", "name": pkg, "defaultChannel": channel})
		var entries []map[string]any
		for _, r := range releases {
			if r.pkg != pkg {
				continue
			}
			entry := map[string]any{"name": csvName(r.pkg, r.version)}
			if r.replaces != "" {
				entry["replaces"] = r.replaces
			}
			entries = append(entries, entry)
		}
		docs = append(docs, map[string]any{"schema": "olm.channel", "package": pkg, "name": channel, "entries": entries})
	}
	for _, r := range releases {
		b, err := bundleDoc(r)
		if err != nil {
			return nil, err
		}
		docs = append(docs, b)
	}
	return docs, nil
}

// bundleDoc is the olm.bundle of r, with the properties opm would render for its CSV and CRD.
func bundleDoc(r release) (map[string]any, error) {
	csv, err := json.Marshal(csvObject(r))
	if err != nil {
		return nil, err
	}
	crd, err := json.Marshal(crdObject(r.pkg))
	if err != nil {
		return nil, err
	}
	props := []map[string]any{
		{"type": "olm.package", "value": map[string]string{"packageName": r.pkg, "version": r.version}},
		{"type": "olm.gvk", "value": map[string]string{"group": operandGroup(r.pkg), "kind": operandKind(r.pkg), "version": "v1"}},
	}
	for _, pkg := range r.requires {
		props = append(props, map[string]any{"type": "olm.package.required", "value": map[string]string{"packageName": pkg, "versionRange": ">=0.0.0"}})
	}
	props = append(props,
		map[string]any{"type": "olm.bundle.object", "value": map[string][]byte{"data": csv}},
		map[string]any{"type": "olm.bundle.object", "value": map[string][]byte{"data": crd}},
	)
	return map[string]any{"schema": "olm.bundle", "package": r.pkg, "name": csvName(r.pkg, r.version), "properties": props}, nil
}

// writeCatalog writes the catalog of releases into dir/catalog.json, replacing what was there.
func writeCatalog(dir string, releases []release) error {
	docs, err := catalogDocs(releases)
	if err != nil {
		return err
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, doc := range docs {
		if err := enc.Encode(doc); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(b.String()), 0o600)
}

// opm serves a catalog folder over gRPC on a fixed port, so that a CatalogSource's address
// stays right across restarts.
type opm struct {
	t       *testing.T
	name    string // of its log; "opm" when empty
	dir     string
	logDir  string
	port    int
	process *process.Process
}

// startOPM writes the catalog of releases and serves it.
func startOPM(t *testing.T, logDir string, releases []release) *opm {
	t.Helper()
	o := &opm{t: t, dir: filepath.Join(t.TempDir(), "catalog"), logDir: logDir, port: freePort(t)}
	o.publish(releases)
	return o
}

// address is what a CatalogSource of sourceType grpc points at.
func (o *opm) address() string { return fmt.Sprintf("127.0.0.1:%d", o.port) }

// publish stops opm if it runs, rewrites the catalog as releases, and serves it again: OLM
// re-resolves once its connection comes back.
func (o *opm) publish(releases []release) {
	o.t.Helper()
	o.stop()
	require.NoError(o.t, writeCatalog(o.dir, releases))
	o.start()
}

// start serves the catalog and waits until opm accepts connections.
func (o *opm) start() {
	o.t.Helper()
	o.process = process.Start(o.t, o.logDir, cmp.Or(o.name, "opm"), nil, filepath.Join(olmBin, "opm"), "serve", o.dir,
		"--port", fmt.Sprint(o.port), "--termination-log", filepath.Join(o.logDir, "opm-termination.log"),
		"--pprof-addr", "127.0.0.1:0")
	require.Eventually(o.t, func() bool {
		conn, err := net.DialTimeout("tcp", o.address(), time.Second)
		if err == nil {
			_ = conn.Close()
		}
		return err == nil || o.process.Exited()
	}, wait, tick)
	require.False(o.t, o.process.Exited(), "opm exited:\n%s", o.process.Tail(20))
}

// stop ends opm; the catalog goes away until start.
func (o *opm) stop() {
	if o.process != nil {
		o.process.Stop()
	}
}

// freePort is a TCP port nothing listens on (in the suite's own network namespace).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port //nolint:forcetypeassert // a TCP listener
}
