package olmv1

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// catalogdHost is the name catalogd's Service has in a cluster: its default external address.
const catalogdHost = "catalogd-service.olmv1-system.svc"

// certs are a world's CA and the one serving certificate it signed, for every TLS server of
// the world: the registry and catalogd's catalog, webhook and metrics servers.
type certs struct {
	// caDir holds the CA's certificate, ca.crt, alone: the form --pull-cas-dir and
	// --catalogd-cas-dir take.
	caDir string
	caPEM []byte
	pool  *x509.CertPool
	// cert and key are the serving certificate's files, for 127.0.0.1, localhost and
	// catalogdHost.
	cert, key string
	pair      tls.Certificate
}

// newCerts writes a CA and a serving certificate into dir.
func newCerts(t *testing.T, dir string) *certs {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := certTemplate(1, "tollgate test CA")
	caTmpl.IsCA, caTmpl.BasicConstraintsValid = true, true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := certTemplate(2, "localhost")
	tmpl.DNSNames = []string{"localhost", catalogdHost}
	tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)

	c := &certs{caDir: filepath.Join(dir, "ca"), pool: x509.NewCertPool(),
		cert: filepath.Join(dir, "tls.crt"), key: filepath.Join(dir, "tls.key")}
	c.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	c.pool.AddCert(caCert)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	c.pair, err = tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(c.caDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(c.caDir, "ca.crt"), c.caPEM, 0o600))
	require.NoError(t, os.WriteFile(c.cert, certPEM, 0o600))
	require.NoError(t, os.WriteFile(c.key, keyPEM, 0o600))
	return c
}

func certTemplate(serial int64, cn string) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
}

// clientTLS is a client configuration that trusts the CA alone.
func (c *certs) clientTLS() *tls.Config {
	return &tls.Config{RootCAs: c.pool, MinVersion: tls.VersionTLS12}
}

// serverTLS is a server configuration with the serving certificate.
func (c *certs) serverTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{c.pair}, MinVersion: tls.VersionTLS12}
}
