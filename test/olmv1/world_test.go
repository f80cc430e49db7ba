package olmv1

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/gatelock"
	"github.com/tollgate-dev/tollgate/test/framework/process"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

const (
	// systemNS is OLM v1's namespace, with its two controllers' ServiceAccounts.
	systemNS             = "olmv1-system"
	catalogdSA           = "catalogd-controller-manager"
	operatorControllerSA = "operator-controller-controller-manager"
	// installNS is where the sample package is installed, by installer, a ServiceAccount
	// there bound to cluster-admin: operator-controller v1.2.0 installs as the ServiceAccount
	// a ClusterExtension names.
	installNS = "tollgate-demo"
	installer = "tollgate-demo-installer"
	// pkgName is the sample package, in channel of the catalog catalogName.
	pkgName     = "tollgate-demo"
	channel     = "stable"
	catalogName = "tollgate-demo-catalog"

	// wait bounds every poll: OLM v1 serves a catalog and installs within seconds.
	wait = 2 * time.Minute
	tick = 100 * time.Millisecond
)

// world is one test's cluster: a fresh API server with OLM v1's CRDs and Tollgate's, the
// registry with the sample package's bundle images and its catalog (revision 1), OLM v1's
// namespace, catalogd's webhook and the installer ServiceAccount, and catalogd and
// operator-controller running. Nothing is shared between tests.
type world struct {
	t          *testing.T
	ctx        context.Context
	env        *controlplane.Env
	c          client.Client
	logDir     string
	kubeconfig string
	certs      *certs
	registry   *registry
	ports      ports
	// olm are catalogd and operator-controller.
	olm []*process.Process
	// tollgate is Tollgate's manager, once started.
	tollgate *tollgate
}

// ports are where OLM v1's controllers listen, on 127.0.0.1 (the webhook on every interface).
type ports struct {
	catalogs, webhook, metrics, catalogdProbe, operatorControllerProbe int
}

// newWorld starts a world.
func newWorld(t *testing.T) *world {
	t.Helper()
	requireOLMv1(t)
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env, err := controlplane.Start(controlplane.Options{
		CRDDirs: []string{filepath.Join(olmv1Bin, "crds"), repo.Path("config", "crd", "bases")},
		// The private network has no default route, from which the API server would pick it.
		APIServerFlags: map[string]string{"advertise-address": "127.0.0.1"},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	w := &world{t: t, ctx: ctx, env: env, c: bounded(t, env), logDir: t.TempDir()}
	defer w.printLogsOnFailure() // when starting fails, before the processes stop
	w.kubeconfig = filepath.Join(w.logDir, "kubeconfig")
	require.NoError(t, env.Kubeconfig(w.kubeconfig))
	w.ports = freePorts(t)
	w.certs = newCerts(t, t.TempDir())
	w.registry = startRegistry(t, w.certs, w.logDir)
	w.registry.pushBundles(sample("bundles"))
	w.registry.publishCatalog(sample("catalog"))
	w.createSystem()
	w.createInstaller()
	w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: policyNS}})
	// Every scenario runs under the gate lock: OLM v1 is never refused by it.
	require.NoError(t, gatelock.Install(ctx, env.Config, w.c))
	w.startCatalogd()
	w.startOperatorController()
	t.Cleanup(w.printLogsOnFailure) // after the processes' Stop, so it runs before them
	t.Logf("world up in %s (registry at %s)", time.Since(start).Round(time.Millisecond), w.registry.host)
	return w
}

// freePorts picks the controllers' ports among those nothing listens on.
func freePorts(t *testing.T) ports {
	t.Helper()
	var picked [5]int
	for i := range picked {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer func() { _ = l.Close() }() // held until all are picked, so they differ
		picked[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports{catalogs: picked[0], webhook: picked[1], metrics: picked[2], catalogdProbe: picked[3], operatorControllerProbe: picked[4]}
}

// createSystem creates OLM v1's namespace, its controllers' ServiceAccounts and catalogd's
// mutating webhook, which the API server reaches at its port on 127.0.0.1: there is no
// Service in front of it.
func (w *world) createSystem() {
	w.t.Helper()
	w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: systemNS}})
	for _, sa := range []string{catalogdSA, operatorControllerSA} {
		w.create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: sa}})
	}
	w.create(catalogdWebhook(w.ports.webhook, w.certs.caPEM))
}

// catalogdWebhook is catalogd's MutatingWebhookConfiguration as its manifests make it, but
// calling the URL of port on 127.0.0.1, trusting caPEM.
func catalogdWebhook(port int, caPEM []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "catalogd-mutating-webhook-configuration"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "inject-metadata-name.olm.operatorframework.io",
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL:      ptr.To(fmt.Sprintf("https://127.0.0.1:%d/mutate-olm-operatorframework-io-v1-clustercatalog", port)),
				CABundle: caPEM,
			},
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{"olm.operatorframework.io"}, APIVersions: []string{"v1"}, Resources: []string{"clustercatalogs"},
				},
			}},
			SideEffects:    ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds: ptr.To[int32](10),
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "MissingOrIncorrectMetadataNameLabel",
				Expression: "'name' in object.metadata && (!has(object.metadata.labels) || !('" + metadataNameLabel +
					"' in object.metadata.labels) || object.metadata.labels['" + metadataNameLabel + "'] != object.metadata.name)",
			}},
		}},
	}
}

// createInstaller creates the install namespace and the installer ServiceAccount, bound to
// cluster-admin.
func (w *world) createInstaller() {
	w.t.Helper()
	w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: installNS}})
	w.create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: installNS, Name: installer}})
	w.create(&rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: installer + "-cluster-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: installNS, Name: installer}},
	})
}

// create creates obj and fails the test if it cannot.
func (w *world) create(obj client.Object) {
	w.t.Helper()
	require.NoError(w.t, w.c.Create(w.ctx, obj), "create %T %s", obj, obj.GetName())
}

// get reads the cluster-scoped object kind/name and fails the test if it cannot.
func (w *world) get(kind schema.GroupVersionKind, name string) *unstructured.Unstructured {
	w.t.Helper()
	u := newObject(kind, name)
	require.NoError(w.t, w.c.Get(w.ctx, client.ObjectKeyFromObject(u), u), "get %s %s", kind.Kind, name)
	return u
}

// waitFor polls the cluster-scoped object kind/name until cond holds and returns it; the
// failure message shows the object as last read.
func (w *world) waitFor(kind schema.GroupVersionKind, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	w.t.Helper()
	u := newObject(kind, name)
	var err error
	w.eventually(fmt.Sprintf("%s %s %s", kind.Kind, name, what), func() bool {
		u = newObject(kind, name)
		err = w.c.Get(w.ctx, client.ObjectKeyFromObject(u), u)
		return err == nil && cond(u)
	}, func() string {
		if err != nil {
			return err.Error()
		}
		return describe(u)
	})
	return u
}

// eventually polls cond until it holds, and fails the test with what state says otherwise, or
// when one of OLM v1's controllers has exited.
func (w *world) eventually(what string, cond func() bool, state func() string) {
	w.t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > wait {
			w.t.Fatalf("after %s, still not %s; %s", wait, what, state())
		}
		for _, p := range w.olm {
			if p.Exited() {
				w.t.Fatalf("waiting for %s: %s exited", what, p.Name)
			}
		}
		time.Sleep(tick)
	}
	w.t.Logf("%s after %s", what, time.Since(start).Round(time.Millisecond))
}

// printLogsOnFailure prints the end of OLM v1's logs when the test has failed.
func (w *world) printLogsOnFailure() {
	if w.t.Failed() {
		process.PrintLogs(w.t, 60, w.olm...)
	}
}

// bounded is env's client whose requests give up after 30 s.
func bounded(t *testing.T, env *controlplane.Env) client.Client {
	t.Helper()
	c, err := env.BoundedClient(30 * time.Second)
	require.NoError(t, err)
	return c
}
