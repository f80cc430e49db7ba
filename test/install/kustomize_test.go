package install

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// build runs `go tool kustomize build` on a folder of config/, as `make verify` does, and
// returns the objects by kind and name.
func build(t *testing.T, dir string) map[string]*unstructured.Unstructured {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("kustomize runs as `go tool kustomize`: %v", err)
	}
	cmd := exec.Command(goBin, "tool", "kustomize", "build", filepath.Join("config", dir))
	cmd.Dir = repo.Root()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "kustomize build config/%s: %s", dir, stderr.String())
	objs := map[string]*unstructured.Unstructured{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return objs
		}
		require.NoError(t, err)
		objs[u.GetKind()+"/"+u.GetName()] = u
	}
}

func as[T any](t *testing.T, objs map[string]*unstructured.Unstructured, key string) *T {
	t.Helper()
	u, ok := objs[key]
	require.True(t, ok, "config/default has no %s", key)
	var obj T
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &obj))
	return &obj
}

func TestDefaultInstall(t *testing.T) {
	objs := build(t, "default")
	deploy := as[appsv1.Deployment](t, objs, "Deployment/tollgate-manager")
	podLabels := labels.Set(deploy.Spec.Template.Labels)
	require.Len(t, deploy.Spec.Template.Spec.Containers, 1)
	manager := deploy.Spec.Template.Spec.Containers[0]
	port := func(name string) int32 {
		for _, p := range manager.Ports {
			if p.Name == name {
				return p.ContainerPort
			}
		}
		t.Fatalf("the manager has no port %s", name)
		return 0
	}

	t.Run("the manager is probed on /healthz and /readyz", func(t *testing.T) {
		require.NotNil(t, manager.LivenessProbe)
		require.NotNil(t, manager.ReadinessProbe)
		assert.Equal(t, "/healthz", manager.LivenessProbe.HTTPGet.Path)
		assert.Equal(t, "/readyz", manager.ReadinessProbe.HTTPGet.Path)
		assert.Contains(t, manager.Args, "--health-probe-bind-address=:8081")
		assert.Equal(t, int32(8081), port("probes"))
	})
	t.Run("the manager has requests and limits", func(t *testing.T) {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			assert.Contains(t, manager.Resources.Requests, r)
			assert.Contains(t, manager.Resources.Limits, r)
		}
	})
	t.Run("the manager runs confined", func(t *testing.T) {
		sc := manager.SecurityContext
		require.NotNil(t, sc)
		assert.True(t, *sc.RunAsNonRoot)
		assert.True(t, *sc.ReadOnlyRootFilesystem)
		assert.False(t, *sc.AllowPrivilegeEscalation)
		assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
		assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, sc.SeccompProfile.Type)
	})
	t.Run("metrics are served over HTTPS on 8443 through a Service", func(t *testing.T) {
		assert.Contains(t, manager.Args, "--metrics-bind-address=:8443")
		assert.NotContains(t, manager.Args, "--metrics-secure=false")
		assert.Equal(t, int32(8443), port("metrics"))
		svc := as[corev1.Service](t, objs, "Service/tollgate-manager-metrics")
		assert.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels), "the Service selects the manager's pods")
		require.Len(t, svc.Spec.Ports, 1)
		assert.Equal(t, "https", svc.Spec.Ports[0].Name)
		assert.Equal(t, int32(8443), svc.Spec.Ports[0].Port)
		assert.Equal(t, "metrics", svc.Spec.Ports[0].TargetPort.String())
	})
	t.Run("the manager may review tokens and access, and scrapers may get /metrics", func(t *testing.T) {
		role := as[rbacv1.ClusterRole](t, objs, "ClusterRole/tollgate-manager")
		var reviews []string
		for _, r := range role.Rules {
			if len(r.Verbs) == 1 && r.Verbs[0] == "create" {
				reviews = append(reviews, r.Resources...)
			}
		}
		assert.Subset(t, reviews, []string{"tokenreviews", "subjectaccessreviews"})
		reader := as[rbacv1.ClusterRole](t, objs, "ClusterRole/tollgate-metrics-reader")
		assert.Equal(t, []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}, reader.Rules)
	})
	t.Run("ingress reaches only the metrics and probe ports", func(t *testing.T) {
		assertIngressToMetricsAndProbes(t, objs, podLabels)
	})
	t.Run("a disruption leaves one leader-elected replica", func(t *testing.T) {
		assertOneReplicaSurvivesADisruption(t, objs, deploy)
	})
}

// assertIngressToMetricsAndProbes checks the manager's NetworkPolicy selects its pods and admits
// ingress to the metrics and probe ports only.
func assertIngressToMetricsAndProbes(t *testing.T, objs map[string]*unstructured.Unstructured, podLabels labels.Set) {
	np := as[networkingv1.NetworkPolicy](t, objs, "NetworkPolicy/tollgate-manager")
	assert.True(t, labels.SelectorFromSet(np.Spec.PodSelector.MatchLabels).Matches(podLabels))
	var ports []string
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			ports = append(ports, p.Port.String())
		}
	}
	assert.ElementsMatch(t, []string{"metrics", "probes"}, ports)
}

// assertOneReplicaSurvivesADisruption checks the manager runs leader-elected replicas, spread
// over nodes, with a PodDisruptionBudget that keeps one.
func assertOneReplicaSurvivesADisruption(t *testing.T, objs map[string]*unstructured.Unstructured, deploy *appsv1.Deployment) {
	podLabels := labels.Set(deploy.Spec.Template.Labels)
	manager := deploy.Spec.Template.Spec.Containers[0]
	assert.Contains(t, manager.Args, "--leader-elect")
	require.NotNil(t, deploy.Spec.Replicas)
	assert.GreaterOrEqual(t, *deploy.Spec.Replicas, int32(2))
	// Spread over nodes, preferred (a single node still runs both).
	var hosts []corev1.TopologySpreadConstraint
	for _, c := range deploy.Spec.Template.Spec.TopologySpreadConstraints {
		if c.TopologyKey == corev1.LabelHostname {
			hosts = append(hosts, c)
		}
	}
	require.Len(t, hosts, 1, "the replicas spread over nodes")
	assert.Equal(t, int32(1), hosts[0].MaxSkew)
	assert.Equal(t, corev1.ScheduleAnyway, hosts[0].WhenUnsatisfiable)
	require.NotNil(t, hosts[0].LabelSelector)
	spread, err := metav1.LabelSelectorAsSelector(hosts[0].LabelSelector)
	require.NoError(t, err)
	assert.True(t, spread.Matches(podLabels), "the spread counts the manager's own pods")
	pdb := as[policyv1.PodDisruptionBudget](t, objs, "PodDisruptionBudget/tollgate-manager")
	assert.Equal(t, 1, pdb.Spec.MinAvailable.IntValue())
	assert.True(t, labels.SelectorFromSet(pdb.Spec.Selector.MatchLabels).Matches(podLabels))
}

func TestPrometheusInstall(t *testing.T) {
	objs := build(t, "prometheus")
	assert.Contains(t, objs, "ServiceMonitor/tollgate-manager")
	assert.Contains(t, objs, "PrometheusRule/tollgate")
	assert.Contains(t, objs, "ClusterRoleBinding/tollgate-metrics-reader")
	monitor := objs["ServiceMonitor/tollgate-manager"]
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	require.Len(t, endpoints, 1)
	endpoint, _ := endpoints[0].(map[string]any)
	assert.Equal(t, "https", endpoint["port"])
	assert.Equal(t, "https", endpoint["scheme"])

	// The scrape token comes the way prometheus-operator's API does not deprecate: from a Secret
	// (authorization.credentials), one the cluster fills with the token of a ServiceAccount that
	// may read the metrics, in the ServiceMonitor's namespace.
	for _, deprecated := range []string{"bearerTokenFile", "bearerTokenSecret"} {
		assert.NotContains(t, endpoint, deprecated, "the ServiceMonitor uses the deprecated %s", deprecated)
	}
	typ, _, _ := unstructured.NestedString(endpoint, "authorization", "type")
	assert.Equal(t, "Bearer", typ)
	secretName, _, _ := unstructured.NestedString(endpoint, "authorization", "credentials", "name")
	key, _, _ := unstructured.NestedString(endpoint, "authorization", "credentials", "key")
	assert.Equal(t, "token", key)
	secret := as[corev1.Secret](t, objs, "Secret/"+secretName)
	assert.Equal(t, monitor.GetNamespace(), secret.Namespace, "prometheus-operator reads the Secret in the ServiceMonitor's namespace")
	assert.Equal(t, corev1.SecretTypeServiceAccountToken, secret.Type, "the cluster writes the token")
	assert.Empty(t, secret.Data, "no credential is shipped")
	account := secret.Annotations[corev1.ServiceAccountNameKey]
	sa := as[corev1.ServiceAccount](t, objs, "ServiceAccount/"+account)
	assert.Equal(t, secret.Namespace, sa.Namespace)
	binding := as[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding/tollgate-metrics-reader")
	assert.Equal(t, "tollgate-metrics-reader", binding.RoleRef.Name)
	assert.Equal(t, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}, binding.Subjects,
		"the token's ServiceAccount, and nothing else, may read the metrics")

	def := build(t, "default")
	svc := def["Service/tollgate-manager-metrics"]
	require.NotNil(t, svc)
	want, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	assert.True(t, labels.SelectorFromSet(want).Matches(labels.Set(svc.GetLabels())), "the ServiceMonitor selects the metrics Service")
}
