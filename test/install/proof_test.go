package install

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
	tollgatemanager "github.com/tollgate-dev/tollgate/internal/manager"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/olmplay"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// fieldOwner is the field manager of what the test applies, as `kubectl apply --server-side`.
const fieldOwner = "tollgate-install-proof"

// The proof of the install: everything `kustomize build config/default` makes is applied to a
// real API server (the Deployment only sits there: no kubelet), and the manager runs in this
// process with a token of the Deployment's ServiceAccount and the flags of its container. It
// holds an upgrade the operator calls not upgradeable, loads the sample policy ConfigMaps
// (whose rule then holds an upgrade in the production namespace until it has a change
// ticket), approves the upgrade once the operator agrees, holds its Lease, serves /readyz and
// /metrics, and still may not read a Secret. Had config/default left out a permission the
// manager uses (patch on InstallPlans, the ConfigMap Role, the Lease Role, TokenReview), a
// step would fail.
func TestTheDefaultInstallGatesAnUpgradeWithItsOwnServiceAccount(t *testing.T) {
	env := startControlPlane(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	admin := env.Client

	deploy := applyDefaultInstall(ctx, t, admin)
	ns := deploy.Namespace
	require.NotEmpty(t, ns)
	sa := deploy.Spec.Template.Spec.ServiceAccountName
	require.NotEmpty(t, sa, "the manager runs as its own ServiceAccount")
	// The manager's credentials: a token the API server issues for the ServiceAccount, as the
	// kubelet projects one into the pod.
	asManager := serviceAccountConfig(ctx, t, env, ns, sa)
	managerClient, err := client.New(asManager, client.Options{Scheme: apis.NewScheme()})
	require.NoError(t, err)
	review := &authenticationv1.SelfSubjectReview{}
	require.NoError(t, managerClient.Create(ctx, review))
	require.Equal(t, "system:serviceaccount:"+ns+":"+sa, review.Status.UserInfo.Username)

	mgr := startManager(ctx, t, asManager, deploy)
	require.NoError(t, admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mgr.globalCatalogNS}}))

	k := olmplay.NewCluster(t, admin, "proof-")
	k.ServeOperandKind("etcd")
	grantOperandRead(ctx, t, admin, "etcd")
	etcd := k.Install("etcd", "0.9.2", v1alpha1.ApprovalManual)
	etcd.Operand("main", olmplay.Healthy()...)
	etcd.Report("Upgradeable", metav1.ConditionFalse, "migrating storage")
	plan := etcd.OfferUpgrade("0.9.4")

	// Each step builds on the one before: the first to fail ends the test.
	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			t.FailNow()
		}
	}
	step("the manager holds the upgrade the operator calls not upgradeable", func(t *testing.T) {
		gate := etcd.Gate("holds the upgrade", func(g *tollgatev1alpha1.UpgradeGate) bool {
			return g.Status.CurrentCSV == "etcd.v0.9.4" && g.Status.Decision.BlockedBy == tollgatev1alpha1.CodeOperatorNotUpgradeable
		})
		assert.True(t, meta.IsStatusConditionTrue(gate.Status.Health, "Available"), "the operand was read through the aggregated role: %+v", gate.Status.Health)
		k.StillUnapproved(plan)
	})

	step("the sample policy ConfigMaps load from the install namespace", func(t *testing.T) {
		loadSamplePolicies(ctx, t, admin, ns, mgr)
	})

	step("the sample policy holds an upgrade in production until it has a change ticket", func(t *testing.T) {
		holdUntilChangeTicket(ctx, t, admin)
	})

	step("the manager approves the upgrade once the operator agrees", func(t *testing.T) {
		etcd.Report("Upgradeable", metav1.ConditionTrue, "migration done")
		k.Approved(plan)
		etcd.Gate("records the approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
			return g.Status.Decision.Allowed && g.Status.Decision.LastApprovedInstallPlan == plan.Name
		})
	})

	step("the manager holds the Lease in its namespace", func(t *testing.T) {
		lease := &unstructured.Unstructured{}
		lease.SetAPIVersion("coordination.k8s.io/v1")
		lease.SetKind("Lease")
		require.NoError(t, admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: controllers.LeaderElectionID}, lease))
		holder, _, _ := unstructured.NestedString(lease.Object, "spec", "holderIdentity")
		assert.NotEmpty(t, holder)
	})

	step("metrics are served to a scraper bound to tollgate-metrics-reader, and to nobody else", func(t *testing.T) {
		assertMetricsForScrapersOnly(ctx, t, env, mgr)
	})

	step("the manager may not read Secrets", func(t *testing.T) {
		assertNoSecretAccess(ctx, t, admin, managerClient, ns)
	})
}

// applyDefaultInstall applies everything `kustomize build config/default` makes, waits for its
// CRDs to be established, and returns its one Deployment.
func applyDefaultInstall(ctx context.Context, t *testing.T, admin client.Client) *appsv1.Deployment {
	t.Helper()
	objs, err := controlplane.Kustomize("config/default")
	require.NoError(t, err)
	var deploy *appsv1.Deployment
	for _, obj := range objs {
		require.NoError(t, admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldOwner), client.ForceOwnership),
			"apply %s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
		if obj.GetKind() == "Deployment" {
			require.Nil(t, deploy, "config/default has one Deployment")
			deploy = convert[appsv1.Deployment](t, obj)
		}
		if obj.GetKind() == "CustomResourceDefinition" {
			waitEstablished(ctx, t, admin, obj.GetName())
		}
	}
	require.NotNil(t, deploy, "config/default has a Deployment")
	return deploy
}

// loadSamplePolicies applies the sample policy ConfigMaps to the install namespace ns, waits
// for the manager to report each one loaded and served, and for the leader to be ready.
func loadSamplePolicies(ctx context.Context, t *testing.T, admin client.Client, ns string, mgr *manager) {
	samples, err := os.ReadFile(repo.Path("config", "samples", "policy-configmaps.yaml"))
	require.NoError(t, err)
	cms, err := controlplane.DecodeYAML(samples)
	require.NoError(t, err)
	require.NotEmpty(t, cms)
	for _, cm := range cms {
		require.Equal(t, "ConfigMap", cm.GetKind())
		cm.SetNamespace(ns)
		require.NoError(t, admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(cm), client.FieldOwner(fieldOwner), client.ForceOwnership))
	}
	for _, cm := range cms {
		var status policysource.Status
		require.Eventually(t, func() bool {
			got := &corev1.ConfigMap{}
			if admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: cm.GetName()}, got) != nil {
				return false
			}
			raw, ok := got.Annotations[policysource.StatusAnnotation]
			return ok && json.Unmarshal([]byte(raw), &status) == nil
		}, olmplay.Wait, olmplay.Tick, "the manager writes %s on ConfigMap %s", policysource.StatusAnnotation, cm.GetName())
		assert.Equal(t, "ok", status.Status, "ConfigMap %s: %+v", cm.GetName(), status)
		assert.Equal(t, policysource.ServingCurrent, status.Serving, "ConfigMap %s", cm.GetName())
	}
	require.Eventually(t, func() bool { return probe(mgr.probeAddr, "/readyz") == http.StatusOK }, olmplay.Wait, olmplay.Tick, "the leader is ready once its policies are loaded")
}

// holdUntilChangeTicket offers an upgrade in the production namespace, checks the sample
// policy holds it, then annotates its Subscription with a change ticket and checks it is
// approved.
func holdUntilChangeTicket(ctx context.Context, t *testing.T, admin client.Client) {
	prod := olmplay.NewNamedCluster(t, admin, "production")
	prod.ServeOperandKind("redis")
	grantOperandRead(ctx, t, admin, "redis")
	redis := prod.Install("redis", "1.0.0", v1alpha1.ApprovalManual)
	redis.Operand("main", olmplay.Healthy()...)
	redis.Report("Upgradeable", metav1.ConditionTrue, "ready")
	prodPlan := redis.OfferUpgrade("1.0.1")
	redis.BlockedBy("ChangeTicketMissing")
	prod.StillUnapproved(prodPlan)

	sub := &v1alpha1.Subscription{}
	require.NoError(t, admin.Get(ctx, client.ObjectKeyFromObject(redis.Sub), sub))
	patch := client.MergeFrom(sub.DeepCopy())
	metav1.SetMetaDataAnnotation(&sub.ObjectMeta, "example.com/change-ticket", "CHG-1234")
	require.NoError(t, admin.Patch(ctx, sub, patch))
	prod.Approved(prodPlan)
}

// assertMetricsForScrapersOnly scrapes the manager's metrics without a token, refused, and
// with the token of a scraper bound to tollgate-metrics-reader, served.
func assertMetricsForScrapersOnly(ctx context.Context, t *testing.T, env *controlplane.Env, mgr *manager) {
	if mgr.metricsAddr == "" || !mgr.metricsSecure {
		t.Skip("the Deployment serves no metrics, or serves them over plain HTTP")
	}
	scraper := scraperToken(ctx, t, env.Client, env)
	code, body := scrape(t, mgr.metricsAddr, "")
	assert.Equal(t, http.StatusUnauthorized, code, body)
	code, body = scrape(t, mgr.metricsAddr, scraper)
	require.Equal(t, http.StatusOK, code, "the manager reviews the scraper's token and access: %s", body)
	assert.Contains(t, body, "tollgate_installplan_approvals_total")
}

// assertNoSecretAccess creates a Secret in ns and checks the manager can neither get it nor
// get, list or watch Secrets, there or cluster-wide.
func assertNoSecretAccess(ctx context.Context, t *testing.T, admin, managerClient client.Client, ns string) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "credentials"}, StringData: map[string]string{"password": "hunter2"}}
	require.NoError(t, admin.Create(ctx, secret))
	err := managerClient.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{})
	assert.True(t, apierrors.IsForbidden(err), "get Secret: %v", err)
	for _, attrs := range []authorizationv1.ResourceAttributes{
		{Verb: "get", Resource: "secrets", Namespace: ns, Name: secret.Name},
		{Verb: "list", Resource: "secrets", Namespace: ns},
		{Verb: "list", Resource: "secrets"},
		{Verb: "watch", Resource: "secrets"},
	} {
		ssar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}
		require.NoError(t, managerClient.Create(ctx, ssar))
		assert.False(t, ssar.Status.Allowed, "%s secrets in %q: %s", attrs.Verb, attrs.Namespace, ssar.Status.Reason)
	}
}

// startControlPlane starts an API server with the OLM CRDs only: Tollgate's CRD comes from
// config/default.
func startControlPlane(t *testing.T) *controlplane.Env {
	t.Helper()
	env, err := controlplane.Start(controlplane.Options{CRDDirs: []string{repo.Path("config", "crd", "olm")}})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })
	require.NoError(t, apiextensionsv1.AddToScheme(env.Client.Scheme()))
	return env
}

func convert[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	var obj T
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &obj))
	return &obj
}

func waitEstablished(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if c.Get(ctx, client.ObjectKey{Name: name}, crd) != nil {
			return false
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true
			}
		}
		return false
	}, olmplay.Wait, olmplay.Tick, "CRD %s not established", name)
}

// serviceAccountConfig returns a config that authenticates with a token the API server issues
// for the ServiceAccount (TokenRequest), and nothing else of the admin's.
func serviceAccountConfig(ctx context.Context, t *testing.T, env *controlplane.Env, ns, name string) *rest.Config {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	require.NoError(t, env.Client.SubResource("token").Create(ctx, sa, req), "token for ServiceAccount %s/%s", ns, name)
	require.NotEmpty(t, req.Status.Token)
	return &rest.Config{
		Host:            env.Config.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData},
		BearerToken:     req.Status.Token,
	}
}

// manager is the manager running in this process, and where it serves.
type manager struct {
	probeAddr, metricsAddr string
	metricsSecure          bool
	globalCatalogNS        string
}

// startManager runs the manager as the Deployment's container would: `tollgate run` (package
// manager, which cmd/tollgate wires) with the container's args, POD_NAMESPACE from the pod,
// and the config of its ServiceAccount. The addresses keep the Deployment's ports out of the
// way of other tests: each server listens on a free port of 127.0.0.1 instead. The manager
// logs to standard error, which go test shows when the test fails.
func startManager(ctx context.Context, t *testing.T, cfg *rest.Config, deploy *appsv1.Deployment) *manager {
	t.Helper()
	require.Len(t, deploy.Spec.Template.Spec.Containers, 1)
	container := deploy.Spec.Template.Spec.Containers[0]
	require.Empty(t, container.Command, "the image's entrypoint is tollgate")
	podNamespace := ""
	for _, e := range container.Env {
		if e.Name == "POD_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			require.Equal(t, "metadata.namespace", e.ValueFrom.FieldRef.FieldPath)
			podNamespace = deploy.Namespace
		}
	}
	require.NotEmpty(t, podNamespace, "the container gets POD_NAMESPACE, the default --policy-namespace")
	t.Setenv("POD_NAMESPACE", podNamespace)

	var flags tollgatemanager.Flags
	fs := pflag.NewFlagSet("tollgate run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags.AddFlags(fs)
	require.NotEmpty(t, container.Args)
	require.Equal(t, "run", container.Args[0], "the container runs the manager")
	require.NoError(t, fs.Parse(container.Args[1:]), "the container's args are flags of `tollgate run`")
	require.Empty(t, fs.Args())
	opts, err := flags.Options()
	require.NoError(t, err, "the container's args are valid")
	require.Equal(t, deploy.Namespace, opts.PolicyNamespace, "the manager reads policy from its own namespace")
	leaderElect, err := fs.GetBool("leader-elect")
	require.NoError(t, err)
	require.True(t, leaderElect, "the Deployment's replicas elect a leader")

	m := &manager{globalCatalogNS: opts.Input.GlobalCatalogNamespace}
	m.metricsSecure, err = fs.GetBool("metrics-secure")
	require.NoError(t, err)
	if addr, _ := fs.GetString("metrics-bind-address"); addr != "0" {
		m.metricsAddr = freeAddr(t)
		require.NoError(t, fs.Set("metrics-bind-address", m.metricsAddr))
	}
	m.probeAddr = freeAddr(t)
	require.NoError(t, fs.Set("health-probe-bind-address", m.probeAddr))

	mgrCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- flags.Run(mgrCtx, cfg) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			assert.NoError(t, err, "the manager")
		case <-time.After(30 * time.Second):
			t.Error("the manager did not stop")
		}
	})
	require.Eventually(t, func() bool { return probe(m.probeAddr, "/healthz") == http.StatusOK }, olmplay.Wait, olmplay.Tick, "the manager is alive")
	return m
}

// freeAddr is an address of 127.0.0.1 nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// probe returns the status code of a GET on the probe server, 0 when it does not answer.
func probe(addr, path string) int {
	resp, err := http.Get("http://" + addr + path) //nolint:noctx // a short probe of a local test server
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// scrape GETs /metrics over HTTPS with a bearer token (none when empty). The manager's
// certificate is self-signed.
func scrape(t *testing.T, addr, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+addr+"/metrics", http.NoBody)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // the manager's self-signed certificate
	}}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// scraperToken plays the admin letting Prometheus scrape Tollgate: a ServiceAccount bound to
// the tollgate-metrics-reader ClusterRole of config/default, and a token for it.
func scraperToken(ctx context.Context, t *testing.T, admin client.Client, env *controlplane.Env) string {
	t.Helper()
	require.NoError(t, admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "monitoring"}}))
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "prometheus"}}
	require.NoError(t, admin.Create(ctx, sa))
	require.NoError(t, admin.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-tollgate-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "tollgate-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}},
	}))
	return serviceAccountConfig(ctx, t, env, sa.Namespace, sa.Name).BearerToken
}

// grantOperandRead plays the admin (or the operator's bundle) extending Tollgate's operand
// reader with pkg's operand kind, and kube-controller-manager aggregating it (envtest runs no
// controller manager).
func grantOperandRead(ctx context.Context, t *testing.T, admin client.Client, pkg string) {
	t.Helper()
	require.NoError(t, admin.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tollgate-read-" + olmplay.OperandPlural(pkg), Labels: map[string]string{controllers.OperandReaderLabel: "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{olmplay.OperandGroup(pkg)}, Resources: []string{olmplay.OperandPlural(pkg)}, Verbs: []string{"get", "list", "watch"}}},
	}))
	agg := &rbacv1.ClusterRole{}
	require.NoError(t, admin.Get(ctx, client.ObjectKey{Name: "tollgate-operand-reader"}, agg))
	require.NotNil(t, agg.AggregationRule, "tollgate-operand-reader is an aggregated ClusterRole")
	var roles rbacv1.ClusterRoleList
	require.NoError(t, admin.List(ctx, &roles))
	agg.Rules = nil
	for _, s := range agg.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&s)
		require.NoError(t, err)
		for _, r := range roles.Items {
			if r.Name != agg.Name && selector.Matches(labels.Set(r.Labels)) {
				agg.Rules = append(agg.Rules, r.Rules...)
			}
		}
	}
	require.NoError(t, admin.Update(ctx, agg))
}
