package policysource

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlainHTTPBundleServersAreRefusedUnlessAllowed(t *testing.T) {
	body := tarGz(t, map[string]string{"plain.rego": demoModule("plain", "v1")})
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	defer plain.Close()
	redirect := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/b.tar.gz", http.StatusFound)
	}))
	defer redirect.Close()

	tests := []struct {
		scenario string
		location string
		allow    bool
		refused  string
	}{
		{"an http:// location is refused", plain.URL + "/b.tar.gz", false, "plain http is refused"},
		{"an https server redirecting to http is refused", redirect.URL + "/b.tar.gz", false, "redirect to " + plain.URL + "/b.tar.gz: plain http is refused"},
		{"an http:// location is loaded when allowed", plain.URL + "/b.tar.gz", true, ""},
		{"a redirect to http is followed when allowed", redirect.URL + "/b.tar.gz", true, ""},
		{"another scheme is refused", "ftp://example.com/b.tar.gz", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			opts := quiet()
			opts.AllowInsecureHTTP, opts.Client = tt.allow, redirect.Client()
			src, err := LoadBundles(context.Background(), []string{tt.location}, opts)
			switch {
			case strings.HasPrefix(tt.location, "ftp"):
				require.Error(t, err) // not a bundle URL: read as a path that does not exist
			case tt.refused != "":
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.refused)
				assert.Contains(t, err.Error(), "--allow-insecure-bundle-http")
			default:
				require.NoError(t, err)
				assert.Equal(t, []string{"plain.rego"}, modulePaths(src.Bundles()))
			}
		})
	}
}

// signingKeys returns a PEM private key to sign with and its PEM public key.
func signingKeys(t *testing.T) (private, public string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
}

// signedBundle writes a bundle signed with private (key id "default"), as `opa build
// --signing-key` does, with a policy test beside the policy.
func signedBundle(t *testing.T, private string) []byte {
	t.Helper()
	b := bundle.Bundle{
		Manifest: bundle.Manifest{Revision: "signed-1", Roots: &[]string{"tollgate/packs/signed"}},
		Data:     map[string]any{},
		Modules: []bundle.ModuleFile{
			{URL: "/signed.rego", Path: "/signed.rego", Raw: []byte(demoModule("signed", "held"))},
			{URL: "/signed_test.rego", Path: "/signed_test.rego", Raw: []byte("package tollgate.packs.signed.test\n\ntest_nothing if true\n")},
		},
	}
	require.NoError(t, b.GenerateSignature(bundle.NewSigningConfig(private, "RS256", ""), "default", false))
	var buf bytes.Buffer
	require.NoError(t, bundle.NewWriter(&buf).Write(b))
	return buf.Bytes()
}

// retar rewrites a tarball, changing the content of the files in change.
func retar(t *testing.T, data []byte, change map[string]string) []byte {
	t.Helper()
	files := untar(t, data)
	for name, content := range change {
		files[name] = content
	}
	return tarGz(t, files)
}

func untar(t *testing.T, data []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[strings.TrimPrefix(h.Name, "/")] = string(b)
	}
}

func TestSignedBundlesAreVerified(t *testing.T) {
	private, public := signingKeys(t)
	_, otherPublic := signingKeys(t)
	signed := signedBundle(t, private)
	unsigned := tarGz(t, map[string]string{".manifest": demoManifest("tollgate/packs/signed"), "signed.rego": demoModule("signed", "held")})
	tampered := retar(t, signed, map[string]string{"signed.rego": demoModule("signed", "released")})
	signedDir := writeFiles(t, t.TempDir(), untar(t, signed))
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	require.NoError(t, os.WriteFile(keyFile, []byte(public), 0o600))

	tests := []struct {
		scenario string
		bundle   []byte // a tarball, else signedDir
		key      string
		refused  string
	}{
		{"a signed bundle verifies with its key", signed, public, ""},
		{"the key may be given as a file", signed, keyFile, ""},
		{"a signed bundle directory verifies with its key", nil, public, ""},
		{"a signed bundle is refused without a key", signed, "", "refused without a key to verify it with"},
		{"a signed bundle is refused with another key", signed, otherPublic, "bundle signature does not verify"},
		{"a bundle changed after signing is refused", tampered, public, "bundle signature does not verify"},
		{"an unsigned bundle is refused when a key is configured", unsigned, public, "every bundle must be signed"},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			location := signedDir
			if tt.bundle != nil {
				location = filepath.Join(t.TempDir(), "b.tar.gz")
				require.NoError(t, os.WriteFile(location, tt.bundle, 0o600))
			}
			opts := quiet()
			opts.VerificationKey = tt.key
			src, err := LoadBundles(context.Background(), []string{location}, opts)
			if tt.refused != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.refused)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{"signed.rego"}, modulePaths(src.Bundles()), "the policy test is left out")
			_, err = compileWith(t, src.Bundles())
			require.NoError(t, err)
		})
	}
}

func TestBundleVerificationOptionsAreChecked(t *testing.T) {
	opts := quiet()
	opts.VerificationKey, opts.SigningAlgorithm = "secret", "none"
	_, err := LoadBundles(context.Background(), nil, opts)
	assert.ErrorContains(t, err, `algorithm "none" is not supported`)
}

func TestAnHMACSignedBundleVerifiesWithItsSecret(t *testing.T) {
	b := bundle.Bundle{
		Manifest: bundle.Manifest{Revision: "hmac-1", Roots: &[]string{"tollgate/packs/signed"}},
		Data:     map[string]any{},
		Modules:  []bundle.ModuleFile{{URL: "/signed.rego", Path: "/signed.rego", Raw: []byte(demoModule("signed", "held"))}},
	}
	require.NoError(t, b.GenerateSignature(bundle.NewSigningConfig("s3cr3t", "HS256", ""), "ci", false))
	var buf bytes.Buffer
	require.NoError(t, bundle.NewWriter(&buf).Write(b))
	location := filepath.Join(t.TempDir(), "b.tar.gz")
	require.NoError(t, os.WriteFile(location, buf.Bytes(), 0o600))

	opts := quiet()
	opts.VerificationKey, opts.VerificationKeyID, opts.SigningAlgorithm = "s3cr3t", "ci", "HS256"
	_, err := LoadBundles(context.Background(), []string{location}, opts)
	require.NoError(t, err)
	opts.VerificationKey = "guessed"
	_, err = LoadBundles(context.Background(), []string{location}, opts)
	assert.ErrorContains(t, err, "bundle signature does not verify")
}
