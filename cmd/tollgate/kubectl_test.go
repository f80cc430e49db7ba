package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/demo"
)

// TestKubectlConventionsAgainstARealAPIServer runs the cluster flags, the printers and the
// completions of the commands on a real API server holding the demo's held upgrade.
func TestKubectlConventionsAgainstARealAPIServer(t *testing.T) {
	env, kubeconfig := demoCluster(t)
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}))
	admin := func(args ...string) []string { return append([]string{"--kubeconfig", kubeconfig}, args...) }

	t.Run("--as a user without rights is forbidden; --as-group system:masters is allowed", func(t *testing.T) {
		_, _, err := run(t, append([]string{"explain"}, admin("-n", demo.Namespace, demo.Subscription, "--as", "alice")...)...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `User "alice" cannot`)
		stdout, stderr, err := run(t, append([]string{"explain"}, admin("-n", demo.Namespace, demo.Subscription, "--as", "alice", "--as-group", "system:masters")...)...)
		require.NoError(t, err, stderr)
		assert.Contains(t, stdout, "Subscription demo/etcd")
	})

	t.Run("--server and --token authenticate as the token's ServiceAccount", func(t *testing.T) {
		assertTokenAuthenticatesAsItsServiceAccount(ctx, t, env)
	})

	t.Run("--context must name a context of the kubeconfig", func(t *testing.T) {
		_, _, err := run(t, append([]string{"status"}, admin("--context", "nope")...)...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "find the cluster")
		assert.Contains(t, err.Error(), `context "nope"`)
	})

	t.Run("-o jsonpath and -o name on what the cluster holds", func(t *testing.T) {
		stdout, _, err := run(t, append([]string{"explain"}, admin("-n", demo.Namespace, demo.Subscription, "-o", "jsonpath={.denials[*].code}")...)...)
		require.NoError(t, err)
		assert.Equal(t, "OperatorNotUpgradeable", stdout)

		stdout, _, err = run(t, append([]string{"explain"}, admin("-n", demo.Namespace, demo.Subscription, "-o", "name")...)...)
		require.NoError(t, err)
		assert.Equal(t, "subscription.operators.coreos.com/etcd\n", stdout)

		stdout, _, err = run(t, append([]string{"snapshot"}, admin("-n", demo.Namespace, "-o", "name")...)...)
		require.NoError(t, err)
		for _, want := range []string{"subscription.operators.coreos.com/etcd\n", "installplan.operators.coreos.com/", "operatorgroup.operators.coreos.com/"} {
			assert.Contains(t, stdout, want)
		}
		stdout, _, err = run(t, append([]string{"snapshot"}, admin("-n", demo.Namespace, "-o", `jsonpath={range .items[?(@.kind=="Subscription")]}{.metadata.name}{end}`)...)...)
		require.NoError(t, err)
		assert.Equal(t, "etcd", stdout)
	})

	t.Run("status --only plans --no-headers prints the rows only", func(t *testing.T) {
		stdout, _, err := run(t, append([]string{"status"}, admin("--only", "plans", "--no-headers")...)...)
		require.NoError(t, err)
		assert.Equal(t, "demo  install-etcd-v0-9-4  etcd.v0.9.4\n", stdout)
	})

	t.Run("explain -A finds the Subscription in every namespace", func(t *testing.T) {
		stdout, _, err := run(t, append([]string{"explain"}, admin("-A", demo.Subscription, "-o", "jsonpath={.namespace}/{.name}")...)...)
		require.NoError(t, err)
		assert.Equal(t, "demo/etcd", stdout)
	})

	t.Run("explain in the wrong namespace says where the Subscription is", func(t *testing.T) {
		_, _, err := run(t, append([]string{"explain"}, admin("-n", "elsewhere", demo.Subscription)...)...)
		require.Error(t, err)
		assert.Equal(t, "no Subscription etcd in namespace elsewhere; found in namespace demo (use -n demo)", err.Error())
	})

	t.Run("completion lists the Subscriptions of the namespace, and the namespaces", func(t *testing.T) {
		assertCompletions(t, admin)
	})
}

// assertTokenAuthenticatesAsItsServiceAccount runs status with --server, --token and
// --certificate-authority only: forbidden to the ServiceAccount "reader" until it is bound to
// cluster-admin.
func assertTokenAuthenticatesAsItsServiceAccount(ctx context.Context, t *testing.T, env *controlplane.Env) {
	token := serviceAccountToken(ctx, t, env, demo.Namespace, "reader")
	ca := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(ca, env.Config.CAData, 0o600))
	empty := filepath.Join(t.TempDir(), "empty-kubeconfig")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	args := []string{"status", "--kubeconfig", empty, "--server", env.Config.Host, "--token", token, "--certificate-authority", ca}
	_, _, err := run(t, args...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `User "system:serviceaccount:demo:reader" cannot list`)

	require.NoError(t, env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader-is-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: demo.Namespace, Name: "reader"}},
	}))
	require.Eventually(t, func() bool { _, _, err := run(t, args...); return err == nil }, 10*time.Second, 100*time.Millisecond, "the binding takes effect")
	stdout, _, err := run(t, append(args, "-o", "jsonpath={.scope}")...)
	require.NoError(t, err)
	assert.Equal(t, "all namespaces of "+env.Config.Host, stdout)
}

// assertCompletions completes explain's Subscription and status's namespace; admin adds the
// kubeconfig to the arguments.
func assertCompletions(t *testing.T, admin func(args ...string) []string) {
	stdout, _, err := run(t, append([]string{"__complete", "explain"}, admin("-n", demo.Namespace, "")...)...)
	require.NoError(t, err)
	assert.Equal(t, []string{"etcd", ":4"}, completionLines(stdout))

	stdout, _, err = run(t, append([]string{"__complete", "explain"}, admin("-n", "elsewhere", "")...)...)
	require.NoError(t, err)
	assert.Equal(t, []string{":4"}, completionLines(stdout), "no Subscription there")

	stdout, _, err = run(t, append([]string{"__complete", "explain"}, admin("-A", "e")...)...)
	require.NoError(t, err)
	assert.Equal(t, []string{"etcd", ":4"}, completionLines(stdout))

	stdout, _, err = run(t, append([]string{"__complete", "status"}, admin("-n", "")...)...)
	require.NoError(t, err)
	for _, ns := range []string{"default", "demo", "elsewhere", "kube-system"} {
		assert.Contains(t, completionLines(stdout), ns)
	}
}

// completionLines are the lines `__complete` prints, without cobra's closing remark on stderr.
func completionLines(stdout string) []string {
	return strings.Split(strings.TrimSpace(stdout), "\n")
}

func serviceAccountToken(ctx context.Context, t *testing.T, env *controlplane.Env, ns, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	require.NoError(t, env.Client.Create(ctx, sa))
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	require.NoError(t, env.Client.SubResource("token").Create(ctx, sa, req))
	return req.Status.Token
}
