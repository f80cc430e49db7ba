package kubeconn

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
)

// Catalogs reads OLM v1 catalog content as the CLI can reach it: through the API server's
// proxy to catalogd's Service (status.urls.base names it, https://<service>.<namespace>.svc/…),
// with the caller's credentials (RBAC: get services/proxy in catalogd's namespace). The manager
// reaches catalogd directly instead (package catalogd).
type Catalogs struct {
	// REST is a client of the core API group (kubernetes.Interface's CoreV1().RESTClient()).
	REST rest.Interface
	// Limits bound one catalog's content; zero values are fbc.DefaultLimits.
	Limits fbc.Limits
}

// NewCatalogs is a Catalogs on the cluster of cfg.
func NewCatalogs(cfg *rest.Config) (*Catalogs, error) {
	c := rest.CopyConfig(cfg)
	c.APIPath, c.GroupVersion = "/api", &schema.GroupVersion{Version: "v1"}
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("a client of %s: %w", cfg.Host, err)
	}
	return &Catalogs{REST: rc}, nil
}

// Raw is the content catalogd serves for src at /api/v1/all, at most Limits.MaxBytes of it.
func (c *Catalogs) Raw(ctx context.Context, src catalogd.Source) ([]byte, error) {
	path, err := proxyPath(src.Base)
	if err != nil {
		return nil, fmt.Errorf("ClusterCatalog %s: %w", src.Catalog, err)
	}
	body, err := c.REST.Get().AbsPath(path).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("ClusterCatalog %s: GET %s through the API server: %w", src.Catalog, path, err)
	}
	defer func() { _ = body.Close() }()
	limit := c.Limits.WithDefaults().MaxBytes
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("ClusterCatalog %s: read %s: %w", src.Catalog, path, err)
	case int64(len(data)) > limit:
		return nil, fmt.Errorf("ClusterCatalog %s: its content is larger than %d bytes", src.Catalog, limit)
	}
	return data, nil
}

// Catalog reads and parses src's content (pin.Content).
func (c *Catalogs) Catalog(ctx context.Context, src catalogd.Source) (*fbc.Catalog, error) {
	data, err := c.Raw(ctx, src)
	if err != nil {
		return nil, err
	}
	cat, err := fbc.Read(bytes.NewReader(data), c.Limits)
	if err != nil {
		return nil, fmt.Errorf("ClusterCatalog %s: %w", src.Catalog, err)
	}
	return cat, nil
}

// proxyPath is the API server's proxy path to base's /api/v1/all: base must be an https URL
// of a Service, <service>.<namespace>.svc[.<cluster domain>][:port].
func proxyPath(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("status.urls.base %q is no https URL", base)
	}
	parts := strings.Split(u.Hostname(), ".")
	if len(parts) < 3 || parts[2] != "svc" || parts[0] == "" || parts[1] == "" {
		return "", fmt.Errorf("status.urls.base %q names no Service (<service>.<namespace>.svc): the API server cannot proxy to it", base)
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	return fmt.Sprintf("/api/v1/namespaces/%s/services/https:%s:%s/proxy%s/api/v1/all",
		url.PathEscape(parts[1]), url.PathEscape(parts[0]), port, strings.TrimSuffix(u.EscapedPath(), "/")), nil
}
