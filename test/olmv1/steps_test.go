package olmv1

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// fixtureRegistry is the registry's address in the fixtures of test/testdata/olmv1.
const fixtureRegistry = "127.0.0.1:5443"

// serveCatalog creates the ClusterCatalog name of the registry's catalog image and returns it
// once catalogd serves its content.
func (w *world) serveCatalog(name string) *unstructured.Unstructured {
	w.t.Helper()
	w.create(clusterCatalog(name, w.registry.catalogRef()))
	return w.waitFor(clusterCatalogKind, name, "Serving with status.urls.base", func(u *unstructured.Unstructured) bool {
		return conditionIs(u, "Serving", metav1.ConditionTrue, "Available") && nestedString(u, "status", "urls", "base") != ""
	})
}

// catalogContent is what catalogd answers at GET {base}/api/v1/all: the catalog, one JSON
// object a line.
func (w *world) catalogContent(base string) []string {
	w.t.Helper()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = w.certs.clientTLS()
	c := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/all", nil)
	require.NoError(w.t, err)
	resp, err := c.Do(req)
	require.NoError(w.t, err)
	defer func() { _ = resp.Body.Close() }()
	require.Equal(w.t, http.StatusOK, resp.StatusCode, "GET %s/api/v1/all", base)
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(w.t, sc.Err())
	return lines
}

// fixtureLines are the lines of test/testdata/olmv1/name, with the fixtures' registry address
// replaced by the world's.
func (w *world) fixtureLines(name string) []string {
	w.t.Helper()
	data, err := os.ReadFile(repo.Path("test", "testdata", "olmv1", name))
	require.NoError(w.t, err)
	text := strings.ReplaceAll(string(data), fixtureRegistry, w.registry.host)
	return strings.Split(strings.TrimRight(text, "\n"), "\n")
}

// createExtension creates the ClusterExtension name of the sample package, pinned at
// version, in channel, from the catalog catalogName, installed by installer.
func (w *world) createExtension(name, version string) {
	w.t.Helper()
	w.create(clusterExtension(name, extensionSpec{
		namespace: installNS, serviceAccount: installer, pkg: pkgName,
		version: version, channels: []string{channel}, catalog: catalogName,
	}))
}

// pin moves the ClusterExtension name's pin to version and returns its new generation.
func (w *world) pin(name, version string) int64 {
	w.t.Helper()
	u := w.get(clusterExtensionKind, name)
	before := u.DeepCopy()
	require.NoError(w.t, setPin(u, version))
	require.NoError(w.t, w.c.Patch(w.ctx, u, client.MergeFrom(before)), "pin %s at %s", name, version)
	require.Greater(w.t, u.GetGeneration(), before.GetGeneration(), "a new pin is a new generation")
	return u.GetGeneration()
}

// waitInstalled waits until the ClusterExtension name has installed version and has settled
// there at its current generation: Installed True, Progressing Succeeded.
func (w *world) waitInstalled(name, version string) *unstructured.Unstructured {
	w.t.Helper()
	return w.waitFor(clusterExtensionKind, name, "installed at "+version, func(u *unstructured.Unstructured) bool {
		return installedVersion(u) == version &&
			conditionIs(u, "Installed", metav1.ConditionTrue, "Succeeded") &&
			conditionIs(u, "Progressing", metav1.ConditionTrue, "Succeeded")
	})
}

// waitRetrying waits until the ClusterExtension name fails to resolve its current
// generation's pin: Progressing Retrying.
func (w *world) waitRetrying(name string) *unstructured.Unstructured {
	w.t.Helper()
	return w.waitFor(clusterExtensionKind, name, "Progressing Retrying", func(u *unstructured.Unstructured) bool {
		return conditionIs(u, "Progressing", metav1.ConditionTrue, "Retrying")
	})
}

// requireInstalled fails the test unless u has version installed, and says so.
func (w *world) requireInstalled(u *unstructured.Unstructured, version string) {
	w.t.Helper()
	installed := condition(u, "Installed")
	require.True(w.t, installed != nil && installed.Status == metav1.ConditionTrue && installedVersion(u) == version,
		"%s still installed%s", version, describe(u))
	require.Equal(w.t, fmt.Sprintf("%s.v%s", pkgName, version), nestedString(u, "status", "install", "bundle", "name"))
}
