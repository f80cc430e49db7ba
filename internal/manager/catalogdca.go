package manager

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
)

// caTransport reaches catalogd trusting only the CA in a file, read again on each request: the
// kubelet updates a mounted Secret or ConfigMap in place when the CA is renewed (cert-manager
// renews OLM v1's), and catalogd's content is fetched seldom (once per content digest), so
// reading a small file each time costs nothing and a renewed CA needs no restart.
type caTransport struct {
	path string

	mu  sync.Mutex
	pem []byte
	rt  http.RoundTripper
}

// newCATransport reads path once, so that a missing file or one without a certificate stops
// the manager at start.
func newCATransport(path string) (*caTransport, error) {
	t := &caTransport{path: path}
	if _, err := t.current(); err != nil {
		return nil, err
	}
	return t, nil
}

// current is the transport trusting the file's CA as it is now.
func (t *caTransport) current() (http.RoundTripper, error) {
	pem, err := os.ReadFile(t.path)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rt != nil && bytes.Equal(pem, t.pem) {
		return t.rt, nil
	}
	c, err := catalogd.HTTPClient(pem)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.path, err)
	}
	if old, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		old.CloseIdleConnections() // connections verified with the former CA
	}
	t.pem, t.rt = pem, c.Transport
	return t.rt, nil
}

// RoundTrip sends req trusting the file's CA; a file that cannot be read or holds no
// certificate fails the request, saying so (the catalog is then not read, which holds).
func (t *caTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt, err := t.current()
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("the CA of --catalogd-ca-file: %w", err)
	}
	return rt.RoundTrip(req)
}
