package olmv1

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/tollgate-dev/tollgate/test/framework/process"
)

// startCatalogd runs catalogd as its Deployment would, minus leader election and the Service:
// its catalog server (HTTPS, with the world's serving certificate) answers at localhost, which
// the certificate names; it pulls from the registry trusting the world's CA. It returns once
// catalogd is ready and its webhook serves, since the API server calls the webhook for every
// ClusterCatalog.
func (w *world) startCatalogd() {
	w.t.Helper()
	p := w.ports
	catalogd := process.Start(w.t, w.logDir, "catalogd", w.controllerEnv(), filepath.Join(olmv1Bin, "catalogd"),
		"--system-namespace="+systemNS,
		fmt.Sprintf("--catalogs-server-addr=127.0.0.1:%d", p.catalogs),
		fmt.Sprintf("--external-address=localhost:%d", p.catalogs),
		"--tls-cert="+w.certs.cert, "--tls-key="+w.certs.key,
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", p.metrics),
		fmt.Sprintf("--webhook-server-port=%d", p.webhook),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", p.catalogdProbe),
		"--pull-cas-dir="+w.certs.caDir,
		"--cache-dir="+filepath.Join(w.t.TempDir(), "catalogd-cache"),
		"--feature-gates=APIV1MetasHandler=true",
	)
	w.olm = append(w.olm, catalogd)
	w.waitReady("catalogd", p.catalogdProbe)
	w.eventually("catalogd's webhook serving", func() bool { return w.servesTLS(p.webhook) }, func() string { return "" })
}

// startOperatorController runs operator-controller as its Deployment would, minus leader
// election: it reads catalogs from catalogd and pulls bundles from the registry, trusting the
// world's CA. It returns once operator-controller is ready.
func (w *world) startOperatorController() {
	w.t.Helper()
	p := w.ports
	operatorController := process.Start(w.t, w.logDir, "operator-controller", w.controllerEnv(), filepath.Join(olmv1Bin, "operator-controller"),
		"--system-namespace="+systemNS,
		"--catalogd-cas-dir="+w.certs.caDir,
		"--pull-cas-dir="+w.certs.caDir,
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", p.operatorControllerProbe),
		"--cache-path="+filepath.Join(w.t.TempDir(), "operator-controller-cache"),
	)
	w.olm = append(w.olm, operatorController)
	w.waitReady("operator-controller", p.operatorControllerProbe)
}

// controllerEnv is what OLM v1's controllers run with: the API server's admin kubeconfig (they
// have no ServiceAccount token), and a temporary folder of the test's for the files they leave
// behind.
func (w *world) controllerEnv() []string {
	return []string{"KUBECONFIG=" + w.kubeconfig, "TMPDIR=" + w.t.TempDir()}
}

// waitReady waits until the health probe on port says ready.
func (w *world) waitReady(name string, port int) {
	w.t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	var last string
	w.eventually(name+" ready", func() bool {
		last = probe(url)
		return last == "200 OK"
	}, func() string { return "GET " + url + ": " + last })
}

// probe is the status of GET url, or the error.
func probe(url string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	_ = resp.Body.Close()
	return resp.Status
}

// servesTLS says whether port on 127.0.0.1 completes a TLS handshake with the world's
// serving certificate.
func (w *world) servesTLS(port int) bool {
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: w.certs.clientTLS()}
	conn, err := dialer.DialContext(w.ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
