package manager

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	operatorsv1alpha1 "github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
)

func TestOLMFlagsHaveTheControllersDefaults(t *testing.T) {
	t.Setenv(caFileEnv, "")
	f := parsed(t).olm
	assert.Equal(t, olmFlags{mode: "auto", fetchTimeout: time.Minute, kept: 8, heldRecheck: controllers.DefaultHeldRecheck}, f)
}

func TestOLMFlagsReachTheOptions(t *testing.T) {
	ca := writeCA(t)
	f := parsed(t, "--olm", "v1", "--catalogd-ca-file", ca, "--catalog-fetch-timeout", "20s", "--catalogs-kept", "3", "--held-recheck", "5m")
	assert.Equal(t, olmFlags{mode: "v1", caFile: ca, fetchTimeout: 20 * time.Second, kept: 3, heldRecheck: 5 * time.Minute}, f.olm)
	opts, err := f.Options()
	require.NoError(t, err)
	assert.NotNil(t, opts.Extensions)
	assert.Equal(t, 5*time.Minute, opts.HeldRecheck)
	for _, mode := range []string{"auto", "v0", "v1", "both"} {
		_, err := parsed(t, "--olm", mode).Options()
		assert.NoError(t, err, mode)
	}
}

func TestTheCAFileDefaultsToTheEnvironments(t *testing.T) {
	t.Setenv(caFileEnv, "/etc/tollgate/catalogd/ca.crt")
	assert.Equal(t, "/etc/tollgate/catalogd/ca.crt", parsed(t).olm.caFile, "a Subscription's config sets env, not args")
	assert.Empty(t, parsed(t, "--catalogd-ca-file", "").olm.caFile)
}

func TestInvalidOLMFlagsSayWhatToGive(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.crt")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600))
	missing := filepath.Join(dir, "missing.crt")
	for want, args := range map[string][]string{
		`invalid --olm "v2": use auto, v0, v1 or both`:                                                {"--olm", "v2"},
		`invalid --olm "": use auto, v0, v1 or both`:                                                  {"--olm", ""},
		"invalid --catalog-fetch-timeout 0s: it must be positive":                                     {"--catalog-fetch-timeout", "0"},
		"invalid --catalogs-kept 0: at least 1":                                                       {"--catalogs-kept", "0"},
		"invalid --held-recheck -1s: it must be positive":                                             {"--held-recheck", "-1s"},
		"invalid --catalogd-ca-file: " + notPEM + ": no PEM certificate in the CA given for catalogd": {"--catalogd-ca-file", notPEM},
		"invalid --catalogd-ca-file: open " + missing + ": no such file or directory":                 {"--catalogd-ca-file", missing},
	} {
		_, err := parsed(t, args...).Options()
		assert.EqualError(t, err, want)
	}
}

// writeCA writes a self-signed CA certificate as PEM and returns its path.
func writeCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "olmv1-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return path
}

// The API server's discovery, for a cluster with the kinds given (subresources among them).
func fakeDiscovery(kinds ...kind) *fakediscovery.FakeDiscovery {
	byGV := map[string]*metav1.APIResourceList{}
	var lists []*metav1.APIResourceList
	for _, k := range kinds {
		l := byGV[k.groupVersion]
		if l == nil {
			l = &metav1.APIResourceList{GroupVersion: k.groupVersion}
			byGV[k.groupVersion] = l
			lists = append(lists, l)
		}
		l.APIResources = append(l.APIResources,
			metav1.APIResource{Name: k.kind + "s", Kind: k.kind},
			metav1.APIResource{Name: k.kind + "s/status", Kind: k.kind})
	}
	return &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: lists}}
}

func TestDiscoveryFindsTheKindsServed(t *testing.T) {
	other := kind{"operators.coreos.com/v1alpha1", "InstallPlan"}
	s, err := discover(fakeDiscovery(subscription, other, clusterExtension, extensionGate))
	require.NoError(t, err)
	assert.Equal(t, served{subscription: true, other: true, clusterExtension: true, extensionGate: true}, s)

	s, err = discover(fakeDiscovery())
	require.NoError(t, err)
	assert.Empty(t, s, "a group version not served serves nothing")
}

func TestDiscoveryFailsOnAnythingButNotFound(t *testing.T) {
	d := fakeDiscovery(subscription)
	d.PrependReactor("*", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	_, err := discover(d)
	assert.EqualError(t, err, "discover which OLM the cluster serves: operators.coreos.com/v1alpha1: connection refused")
}

func TestTheOLMGatedIsWhatIsServedAndAskedFor(t *testing.T) {
	v0 := []kind{subscription, upgradeGate}
	v1 := []kind{clusterExtension, clusterCatalog, extensionGate}
	both := append(append([]kind{}, v0...), v1...)
	tests := []struct {
		mode   string
		served []kind
		want   olmChoice
	}{
		{"auto", v0, olmChoice{v0: true}},
		{"auto", v1, olmChoice{v1: true}},
		{"auto", both, olmChoice{v0: true, v1: true}},
		{"auto", append([]kind{subscription, upgradeGate}, extensionGate), olmChoice{v0: true}},
		{"v0", both, olmChoice{v0: true}},
		{"v1", both, olmChoice{v1: true}},
		{"both", both, olmChoice{v0: true, v1: true}},
		{"v1", v1, olmChoice{v1: true}},
	}
	for _, tt := range tests {
		s := served{}
		for _, k := range tt.served {
			s[k] = true
		}
		got, err := chooseOLM(tt.mode, s)
		require.NoError(t, err, "--olm=%s on %v", tt.mode, tt.served)
		assert.Equal(t, tt.want, got, "--olm=%s on %v", tt.mode, tt.served)
	}
}

func TestAnOLMNotServedIsNamed(t *testing.T) {
	const fix = "; install it, or choose what --olm gates (auto gates what is served)"
	tests := []struct {
		mode   string
		served []kind
		want   string
	}{
		{"auto", nil, "the API server serves neither OLM v0 (Subscription (operators.coreos.com/v1alpha1)) nor OLM v1 (ClusterExtension (olm.operatorframework.io/v1)): Tollgate gates OLM's upgrades and does not install OLM; install OLM first"},
		{"auto", []kind{upgradeGate, extensionGate}, "the API server serves neither OLM v0 (Subscription (operators.coreos.com/v1alpha1)) nor OLM v1 (ClusterExtension (olm.operatorframework.io/v1)): Tollgate gates OLM's upgrades and does not install OLM; install OLM first"},
		{"v1", []kind{subscription, upgradeGate, extensionGate}, "gating OLM v1 needs what the API server does not serve: ClusterExtension (olm.operatorframework.io/v1) from OLM v1's operator-controller, ClusterCatalog (olm.operatorframework.io/v1) from OLM v1's catalogd" + fix},
		{"v0", []kind{clusterExtension, clusterCatalog, extensionGate}, "gating OLM v0 needs what the API server does not serve: Subscription (operators.coreos.com/v1alpha1) from OLM v0, UpgradeGate (tollgate.dev/v1alpha1) from Tollgate's CRDs (config/crd)" + fix},
		{"both", []kind{subscription, upgradeGate}, "gating OLM v1 needs what the API server does not serve: ClusterExtension (olm.operatorframework.io/v1) from OLM v1's operator-controller, ClusterCatalog (olm.operatorframework.io/v1) from OLM v1's catalogd, ExtensionGate (tollgate.dev/v1alpha1) from Tollgate's CRDs (config/crd)" + fix},
		{"auto", []kind{subscription, upgradeGate, clusterExtension, clusterCatalog}, "gating OLM v1 needs what the API server does not serve: ExtensionGate (tollgate.dev/v1alpha1) from Tollgate's CRDs (config/crd)" + fix},
		{"auto", []kind{clusterExtension, extensionGate}, "gating OLM v1 needs what the API server does not serve: ClusterCatalog (olm.operatorframework.io/v1) from OLM v1's catalogd" + fix},
	}
	for _, tt := range tests {
		s := served{}
		for _, k := range tt.served {
			s[k] = true
		}
		_, err := chooseOLM(tt.mode, s)
		assert.EqualError(t, err, tt.want, "--olm=%s on %v", tt.mode, tt.served)
	}
}

func TestWithoutOLMv0NoCSVIsCached(t *testing.T) {
	csvCached := func(v0 bool) bool {
		for obj := range parsed(t).managerOptions("tollgate-system", v0).Cache.ByObject {
			if _, ok := obj.(*operatorsv1alpha1.ClusterServiceVersion); ok {
				return true
			}
		}
		return false
	}
	assert.True(t, csvCached(true))
	assert.False(t, csvCached(false))
	for obj, by := range parsed(t).managerOptions("site", false).Cache.ByObject {
		if _, ok := obj.(*corev1.ConfigMap); ok {
			assert.Contains(t, by.Namespaces, "site", "the policy ConfigMaps only")
		}
	}
}

func TestTheChoiceIsLoggedByName(t *testing.T) {
	assert.Equal(t, "OLM v0", olmChoice{v0: true}.String())
	assert.Equal(t, "OLM v1", olmChoice{v1: true}.String())
	assert.Equal(t, "OLM v0 and OLM v1", olmChoice{v0: true, v1: true}.String())
}
