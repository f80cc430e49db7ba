package controllers_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tollgate-dev/tollgate/apis"
	"github.com/tollgate-dev/tollgate/controllers"
	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// token returns a bearer token of a new service account, bound to clusterRole unless empty.
func token(t *testing.T, ctx context.Context, cs kubernetes.Interface, name, clusterRole string) string {
	t.Helper()
	const ns = "default"
	_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	if clusterRole != "" {
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tr.Status.Token
}

// TestSecureMetricsAndReadiness runs the manager as `tollgate run` does: metrics answer over
// HTTPS only to a token allowed to get /metrics, and /readyz once the policies are loaded.
func TestSecureMetricsAndReadiness(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	env, err := controlplane.Start(controlplane.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	serving := controllers.ServingOptions{MetricsAddr: freeAddr(t), MetricsSecure: true, ProbeAddr: freeAddr(t)}
	mgrOpts := serving.ManagerOptions()
	mgrOpts.Scheme, mgrOpts.Cache = apis.NewScheme(), controllers.CacheOptions("tollgate-system")
	// Other tests of this package run a manager in the same process.
	mgrOpts.Controller.SkipNameValidation = ptr.To(true)
	mgr, err := ctrl.NewManager(env.Config, mgrOpts)
	require.NoError(t, err)
	policies, err := controllers.Setup(ctx, mgr, controllers.Options{PolicyNamespace: "tollgate-system"})
	require.NoError(t, err)
	require.NoError(t, controllers.AddHealthChecks(mgr, policies))
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tollgate-metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	reader := token(t, ctx, cs, "scraper", "tollgate-metrics-reader")
	stranger := token(t, ctx, cs, "stranger", "")

	// The certificate is self-signed, as the ServiceMonitor's insecureSkipVerify says.
	httpc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // #nosec G402 -- the server's self-signed certificate
	}}
	get := func(url, bearer string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		require.NoError(t, err)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := httpc.Do(req)
		if err != nil {
			return 0
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	metricsURL := fmt.Sprintf("https://%s/metrics", serving.MetricsAddr)
	require.Eventually(t, func() bool { return get(metricsURL, reader) == http.StatusOK }, 30*time.Second, 100*time.Millisecond,
		"a token bound to tollgate-metrics-reader gets the metrics")
	require.Equal(t, http.StatusUnauthorized, get(metricsURL, ""), "no token, no metrics")
	require.Equal(t, http.StatusForbidden, get(metricsURL, stranger), "a token without the role is refused")
	require.Equal(t, http.StatusBadRequest, get(fmt.Sprintf("http://%s/metrics", serving.MetricsAddr), reader), "plain HTTP is refused")

	require.Eventually(t, func() bool {
		return get(fmt.Sprintf("http://%s/readyz", serving.ProbeAddr), "") == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond, "ready once the policies are loaded")
	require.True(t, policies.Loaded())
}
