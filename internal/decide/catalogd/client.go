package catalogd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// Source is where a ClusterCatalog's content is served, and which content it is.
type Source struct {
	// Catalog is the ClusterCatalog's name.
	Catalog string
	// Base is its status.urls.base.
	Base string
	// Ref is its status.resolvedSource.image.ref, a digest reference: the content's identity.
	Ref string
}

// Options set how a Client fetches and how much it keeps.
type Options struct {
	// HTTP is the client that reaches catalogd (its CA: HTTPClient). Default: http.DefaultClient.
	HTTP *http.Client
	// Limits bound one catalog's content. Default: fbc.DefaultLimits.
	Limits fbc.Limits
	// Timeout bounds one fetch. Default: one minute.
	Timeout time.Duration
	// Keep is how many catalogs' content stays in memory, the least recently used going
	// first. Default: 8.
	Keep int
}

// Client reads catalogs' content, once per digest.
type Client struct {
	opts    Options
	fetches atomic.Int64

	mu   sync.Mutex
	kept map[Source]*entry
	tick uint64
}

// entry is one catalog's content, or the fetch under way (done open).
type entry struct {
	done chan struct{}
	cat  *fbc.Catalog
	err  error
	used uint64
}

// New returns a Client with opts, defaults filled in.
func New(opts Options) *Client {
	if opts.HTTP == nil {
		opts.HTTP = http.DefaultClient
	}
	if opts.Timeout <= 0 {
		opts.Timeout = time.Minute
	}
	if opts.Keep <= 0 {
		opts.Keep = 8
	}
	return &Client{opts: opts, kept: map[Source]*entry{}}
}

// Fetches is how many times the Client has asked catalogd for content.
func (c *Client) Fetches() int64 { return c.fetches.Load() }

// Catalog returns the content of s: kept, shared with a fetch under way, or fetched now. A
// caller whose ctx ends stops waiting; the fetch goes on for the others, within the timeout.
func (c *Client) Catalog(ctx context.Context, s Source) (*fbc.Catalog, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	e, fetch := c.entry(s)
	if fetch {
		go func() {
			e.cat, e.err = c.fetch(context.WithoutCancel(ctx), s)
			c.settle(s, e)
		}()
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		if !isDone(e) {
			return nil, fmt.Errorf("catalog %q: %w", s.Catalog, ctx.Err())
		}
	}
	return e.cat, e.err
}

// check refuses a source that cannot be fetched, or whose content is not named by a digest
// (it could change under the same name, and a kept copy would go stale).
func (s Source) check() error {
	switch {
	case s.Base == "":
		return fmt.Errorf("catalog %q has no status.urls.base: catalogd does not serve it (yet)", s.Catalog)
	case !strings.Contains(s.Ref, "@"):
		return fmt.Errorf("catalog %q: status.resolvedSource.image.ref %q names no digest", s.Catalog, text.Escape(s.Ref))
	}
	return nil
}

// entry returns s's entry, and whether the caller must fetch it (a new entry).
func (c *Client) entry(s Source) (*entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	if e, ok := c.kept[s]; ok {
		e.used = c.tick
		return e, false
	}
	e := &entry{done: make(chan struct{}), used: c.tick}
	c.kept[s] = e
	return e, true
}

// settle ends e's fetch: a failure is forgotten (the next caller fetches again); content is
// kept, and the least recently used beyond Keep dropped.
func (c *Client) settle(s Source, e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(e.done)
	if e.err != nil {
		delete(c.kept, s)
		return
	}
	for len(c.kept) > c.opts.Keep {
		var oldest Source
		var at uint64
		for k, v := range c.kept {
			if isDone(v) && (at == 0 || v.used < at) {
				oldest, at = k, v.used
			}
		}
		if at == 0 {
			return
		}
		delete(c.kept, oldest)
	}
}

func isDone(e *entry) bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// fetch reads s's content from catalogd, within the timeout and the limits.
func (c *Client) fetch(ctx context.Context, s Source) (*fbc.Catalog, error) {
	c.fetches.Add(1)
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	u, err := url.JoinPath(s.Base, "api", "v1", "all")
	if err != nil {
		return nil, fmt.Errorf("catalog %q: status.urls.base %q: %w", s.Catalog, text.Escape(s.Base), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("catalog %q: %w", s.Catalog, err)
	}
	resp, err := c.opts.HTTP.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("catalog %q: catalogd did not answer GET %s within %s", s.Catalog, text.Escape(u), c.opts.Timeout)
		}
		return nil, fmt.Errorf("catalog %q: %w", s.Catalog, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("catalog %q: GET %s: %s: %s", s.Catalog, text.Escape(u), resp.Status, text.Escape(strings.TrimSpace(string(body))))
	}
	cat, err := fbc.Read(resp.Body, c.opts.Limits)
	if err != nil {
		return nil, fmt.Errorf("catalog %q (%s): %w", s.Catalog, text.Escape(s.Ref), err)
	}
	return cat, nil
}

// HTTPClient is an HTTP client that trusts only the CA certificates in caPEM: the CA that
// signed catalogd's serving certificate.
func HTTPClient(caPEM []byte) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no PEM certificate in the CA given for catalogd")
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: t}, nil
}
