package kubeconn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
)

func TestProxyPath(t *testing.T) {
	for base, want := range map[string]string{
		"https://catalogd-service.olmv1-system.svc/catalogs/operatorhubio":                     "/api/v1/namespaces/olmv1-system/services/https:catalogd-service:443/proxy/catalogs/operatorhubio/api/v1/all",
		"https://catalogd-service.olmv1-system.svc.cluster.local:8443/catalogs/operatorhubio/": "/api/v1/namespaces/olmv1-system/services/https:catalogd-service:8443/proxy/catalogs/operatorhubio/api/v1/all",
	} {
		got, err := proxyPath(base)
		require.NoError(t, err, base)
		assert.Equal(t, want, got)
	}
	for _, base := range []string{"http://catalogd-service.olmv1-system.svc/catalogs/x", "https://localhost:8443/catalogs/x", "https://catalogd.example.com/catalogs/x", "::"} {
		_, err := proxyPath(base)
		assert.Error(t, err, base)
	}
}

// The content comes through the API server's proxy path, whole within the limits.
func TestCatalogsReadThroughTheProxy(t *testing.T) {
	const content = `{"schema":"olm.package","name":"p"}` + "\n"
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.Path
		_, _ = w.Write([]byte(content))
	}))
	defer srv.Close()
	c, err := NewCatalogs(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	src := catalogd.Source{Catalog: "hub", Base: "https://catalogd-service.olmv1-system.svc/catalogs/hub", Ref: "r@sha256:1"}
	cat, err := c.Catalog(context.Background(), src)
	require.NoError(t, err)
	assert.Contains(t, cat.Packages, "p")
	assert.Equal(t, "/api/v1/namespaces/olmv1-system/services/https:catalogd-service:443/proxy/catalogs/hub/api/v1/all", asked)

	c.Limits = fbc.Limits{MaxBytes: 10}
	_, err = c.Raw(context.Background(), src)
	require.ErrorContains(t, err, "larger than 10 bytes")
}
