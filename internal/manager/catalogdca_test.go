package manager

import (
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The CA file is read again on each request: a renewed CA, which the kubelet writes into the
// mounted Secret, is trusted without a restart, and a file gone bad fails the request saying so.
func TestTheCatalogdCAIsReadAgainWhenItChanges(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	t.Cleanup(srv.Close)
	srvCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	otherCA, err := os.ReadFile(writeCA(t))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "ca.crt")
	write := func(data []byte) { require.NoError(t, os.WriteFile(path, data, 0o600)) }

	write(otherCA)
	tr, err := newCATransport(path)
	require.NoError(t, err)
	c := &http.Client{Transport: tr}
	get := func() error {
		resp, err := c.Get(srv.URL)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	var unknown x509.UnknownAuthorityError
	assert.ErrorAs(t, get(), &unknown, "a server signed by another CA")

	write(srvCA)
	assert.NoError(t, get(), "the CA renewed in the file")

	write([]byte("garbage"))
	assert.ErrorContains(t, get(), "the CA of --catalogd-ca-file: "+path+": no PEM certificate in the CA given for catalogd")
	require.NoError(t, os.Remove(path))
	assert.ErrorContains(t, get(), "the CA of --catalogd-ca-file: open "+path)

	write(srvCA)
	assert.NoError(t, get())
}
