package catalogd_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// served is catalogd's answer for the sample catalog (test/testdata/olmv1).
func served(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(repo.Path("test", "testdata", "olmv1", "catalog-revision-1.jsonl"))
	require.NoError(t, err)
	return b
}

// catalogdServer serves body at /catalogs/demo/api/v1/all over TLS, counting requests, and
// returns a client that trusts it and the catalog's base URL.
func catalogdServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *http.Client, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/catalogs/demo/api/v1/all" {
			http.NotFound(w, r)
			return
		}
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c, err := catalogd.HTTPClient(ca)
	require.NoError(t, err)
	return srv, c, &hits
}

func source(srv *httptest.Server, digest string) catalogd.Source {
	return catalogd.Source{Catalog: "demo", Base: srv.URL + "/catalogs/demo", Ref: "registry.example/catalog@sha256:" + digest}
}

func TestOneFetchPerDigestHoweverManyAsk(t *testing.T) {
	body := served(t)
	srv, hc, hits := catalogdServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
	c := catalogd.New(catalogd.Options{HTTP: hc})
	var wg sync.WaitGroup
	cats := make([]*fbc.Catalog, 50)
	for i := range cats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cat, err := c.Catalog(context.Background(), source(srv, "aaa"))
			assert.NoError(t, err)
			cats[i] = cat
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(1), hits.Load(), "one request for 50 callers")
	for _, cat := range cats {
		assert.Same(t, cats[0], cat)
	}
	require.Contains(t, cats[0].Packages, "tollgate-demo")

	_, err := c.Catalog(context.Background(), source(srv, "bbb"))
	require.NoError(t, err)
	assert.Equal(t, int64(2), c.Fetches(), "new content, new fetch")
}

func TestOnlyTheMostRecentlyUsedCatalogsAreKept(t *testing.T) {
	body := served(t)
	srv, hc, _ := catalogdServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
	c := catalogd.New(catalogd.Options{HTTP: hc, Keep: 2})
	for _, d := range []string{"a", "b", "a", "c", "a", "b"} {
		_, err := c.Catalog(context.Background(), source(srv, d))
		require.NoError(t, err)
	}
	assert.Equal(t, int64(4), c.Fetches(), "a, b and c once each; b again after c pushed it out")
}

func TestAFailedFetchSaysWhyAndIsNotKept(t *testing.T) {
	fail := atomic.Bool{}
	fail.Store(true)
	body := served(t)
	srv, hc, _ := catalogdServer(t, func(w http.ResponseWriter, _ *http.Request) {
		if fail.Load() {
			http.Error(w, "cache for catalog \x1b[2J not found", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(body)
	})
	c := catalogd.New(catalogd.Options{HTTP: hc})
	_, err := c.Catalog(context.Background(), source(srv, "a"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `catalog "demo": GET `+srv.URL+"/catalogs/demo/api/v1/all: 500 Internal Server Error")
	assert.Contains(t, err.Error(), `cache for catalog \x1b[2J not found`, "the body, escaped")
	fail.Store(false)
	_, err = c.Catalog(context.Background(), source(srv, "a"))
	require.NoError(t, err, "the failure was not kept")
}

func TestAFetchIsBoundedInTimeAndSize(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv, hc, _ := catalogdServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		// Never an answer: a handler that returned would answer 200 with no body, which the
		// client may still read when it comes as its deadline passes.
		panic(http.ErrAbortHandler)
	})
	c := catalogd.New(catalogd.Options{HTTP: hc, Timeout: 50 * time.Millisecond})
	_, err := c.Catalog(context.Background(), source(srv, "a"))
	assert.ErrorContains(t, err, "catalogd did not answer GET "+srv.URL+"/catalogs/demo/api/v1/all within 50ms")

	large := strings.Repeat(string(served(t)), 100)
	srv2, hc2, _ := catalogdServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(large)) })
	c = catalogd.New(catalogd.Options{HTTP: hc2, Limits: fbc.Limits{MaxBytes: 4096}})
	_, err = c.Catalog(context.Background(), source(srv2, "a"))
	assert.ErrorIs(t, err, fbc.ErrTooLarge)
}

func TestACallerThatGivesUpLeavesTheFetchToTheOthers(t *testing.T) {
	release := make(chan struct{})
	body := served(t)
	srv, hc, hits := catalogdServer(t, func(w http.ResponseWriter, _ *http.Request) {
		<-release
		_, _ = w.Write(body)
	})
	c := catalogd.New(catalogd.Options{HTTP: hc})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Catalog(ctx, source(srv, "a"))
	require.ErrorIs(t, err, context.Canceled)
	close(release)
	cat, err := c.Catalog(context.Background(), source(srv, "a"))
	require.NoError(t, err)
	assert.Contains(t, cat.Packages, "tollgate-demo")
	assert.Equal(t, int64(1), hits.Load(), "the first fetch went on and served the second caller")
}

func TestSourcesThatCannotBeKeptAreRefused(t *testing.T) {
	c := catalogd.New(catalogd.Options{})
	_, err := c.Catalog(context.Background(), catalogd.Source{Catalog: "demo", Ref: "x@sha256:a"})
	assert.ErrorContains(t, err, `catalog "demo" has no status.urls.base`)
	_, err = c.Catalog(context.Background(), catalogd.Source{Catalog: "demo", Base: "https://x", Ref: "registry/catalog:latest"})
	assert.ErrorContains(t, err, `status.resolvedSource.image.ref "registry/catalog:latest" names no digest`)
	assert.Zero(t, c.Fetches())
}

func TestOnlyTheGivenCAIsTrusted(t *testing.T) {
	srv, _, _ := catalogdServer(t, func(w http.ResponseWriter, _ *http.Request) {})
	hc, err := catalogd.HTTPClient(otherCA(t))
	require.NoError(t, err)
	_, err = catalogd.New(catalogd.Options{HTTP: hc}).Catalog(context.Background(), source(srv, "a"))
	assert.ErrorContains(t, err, "certificate signed by unknown authority")
	_, err = catalogd.HTTPClient([]byte("not a certificate"))
	assert.ErrorContains(t, err, "no PEM certificate")
}

// otherCA is a CA certificate, PEM, that signed nothing the test servers use.
func otherCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
