package olm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/gatelock"
	"github.com/tollgate-dev/tollgate/test/framework/process"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

const (
	// globalNS is OLM's global catalog namespace, where the catalog operator runs.
	globalNS = "olm"
	// policyNS and serviceAccount are where config/rbac puts Tollgate.
	policyNS       = "tollgate-system"
	serviceAccount = "tollgate-manager"
	// catalogName is the CatalogSource, in globalNS, that serves the suite's opm.
	catalogName = "real"

	// wait bounds every poll: OLM resolves and installs within seconds of a change.
	wait = 90 * time.Second
	tick = 100 * time.Millisecond
	// holdFor is how long a held plan is watched for a wrong approval.
	holdFor = 3 * time.Second
)

// world is one test's cluster: a fresh API server with OLM's CRDs and Tollgate's, opm
// serving the test's catalog, OLM's catalog and olm operators, the Deployment rollout that a
// kubelet would report, and Tollgate's manager. Nothing is shared between tests: OLM leaves
// objects behind that only a garbage collector would remove.
type world struct {
	t      *testing.T
	ctx    context.Context
	env    *controlplane.Env
	c      client.Client
	logDir string
	opm    *opm
	olm    []*process.Process
	// manager is Tollgate's running manager; nil while it is stopped.
	manager *manager
	// byHand names the plans the test approved by hand (approveByHand): the only bypasses a
	// gate may record, checked when the test ends (noBypassButByHand).
	byHand map[string]bool
}

// newWorld starts a world whose catalog publishes releases, with Tollgate's manager running
// with config/rbac's permissions.
func newWorld(t *testing.T, releases ...release) *world {
	t.Helper()
	w := newOLMWorld(t, true, releases...)
	w.applyRBAC()
	w.startManager(defaultOptions())
	return w
}

// newOLMWorld starts a world whose catalog publishes releases, with real OLM running and no
// Tollgate; withTollgateCRDs installs Tollgate's CRDs (else it is for OLM to install them).
func newOLMWorld(t *testing.T, withTollgateCRDs bool, releases ...release) *world {
	t.Helper()
	requireOLM(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	crds := []string{filepath.Join(olmBin, "crds")}
	if withTollgateCRDs {
		crds = append(crds, repo.Path("config", "crd", "bases"))
	}
	env, err := controlplane.Start(controlplane.Options{
		CRDDirs: crds,
		// The private network has no default route, from which the API server would pick it.
		APIServerFlags: map[string]string{"advertise-address": "127.0.0.1"},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	w := &world{t: t, ctx: ctx, env: env, c: bounded(t, env), logDir: t.TempDir()}
	t.Cleanup(w.printLogsOnFailure)
	for _, ns := range []string{globalNS, policyNS} {
		w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	// Every scenario runs under the gate lock: OLM is never refused by it.
	require.NoError(t, gatelock.Install(ctx, env.Config, w.c))
	w.opm = startOPM(t, w.logDir, releases)
	w.catalogSource(catalogName, w.opm)
	w.startOLM()
	go rollOut(ctx, w.c)
	w.dumpOnCleanup()
	t.Cleanup(w.noBypassButByHand)
	return w
}

// catalogSource creates the CatalogSource name, in OLM's global catalog namespace, that o serves.
func (w *world) catalogSource(name string, o *opm) {
	w.t.Helper()
	w.create(&v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: globalNS, Name: name},
		Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Address: o.address(), DisplayName: "Real OLM's catalog"},
	})
}

// startOLM runs OLM's catalog and olm operators as OLM's own Deployments would, minus
// leader election. The catalog operator serves its metrics over TLS, on :8443, since both
// would otherwise bind :8080.
func (w *world) startOLM() {
	w.t.Helper()
	kubeconfig := w.kubeconfig()
	cert, key := selfSignedCert(w.t, w.logDir)
	w.olm = append(w.olm,
		process.Start(w.t, w.logDir, "catalog", nil, filepath.Join(olmBin, "catalog"),
			"--kubeconfig", kubeconfig, "--namespace", globalNS, "--tls-cert", cert, "--tls-key", key),
		process.Start(w.t, w.logDir, "olm", []string{"KUBECONFIG=" + kubeconfig}, filepath.Join(olmBin, "olm"),
			"--namespace", globalNS),
	)
}

// kubeconfig writes the API server's admin config for OLM's operators and returns its path.
func (w *world) kubeconfig() string {
	w.t.Helper()
	path := filepath.Join(w.logDir, "kubeconfig")
	require.NoError(w.t, clientcmd.WriteToFile(kubeconfigOf(w.env.Config), path))
	return path
}

func kubeconfigOf(cfg *rest.Config) clientcmdapi.Config {
	return clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{"test": {Server: cfg.Host, CertificateAuthorityData: cfg.CAData}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{"admin": {
			ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken,
		}},
		Contexts:       map[string]*clientcmdapi.Context{"test": {Cluster: "test", AuthInfo: "admin"}},
		CurrentContext: "test",
	}
}

// create creates obj and fails the test if it cannot.
func (w *world) create(obj client.Object) {
	w.t.Helper()
	require.NoError(w.t, w.c.Create(w.ctx, obj), "create %T %s", obj, obj.GetName())
}

// printLogsOnFailure prints the end of every OLM program's log when the test failed.
func (w *world) printLogsOnFailure() {
	if !w.t.Failed() {
		return
	}
	procs := append([]*process.Process{}, w.olm...)
	if w.opm != nil && w.opm.process != nil {
		procs = append(procs, w.opm.process)
	}
	process.PrintLogs(w.t, 40, procs...)
	if os.Getenv("TOLLGATE_TEST_VERBOSE") != "" {
		entries, _ := os.ReadDir(w.logDir)
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		w.t.Logf("logs in %s: %s", w.logDir, strings.Join(names, ", "))
	}
}

// eventually polls cond until it holds, and fails the test with what state says otherwise.
func (w *world) eventually(what string, cond func() bool, state func() string) {
	w.t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			w.t.Fatalf("after %s, still not %s; %s", wait, what, state())
		}
		for _, p := range w.olm {
			if p.Exited() {
				w.t.Fatalf("waiting for %s: OLM's %s operator exited", what, p.Name)
			}
		}
		time.Sleep(tick)
	}
}

func describe(obj any) string { return fmt.Sprintf("%+v", obj) }

// bounded is env's client whose requests give up after 30 s.
func bounded(t *testing.T, env *controlplane.Env) client.Client {
	t.Helper()
	c, err := env.BoundedClient(30 * time.Second)
	require.NoError(t, err)
	return c
}
