package rbac

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tollgate-dev/tollgate/test/framework/controlplane"
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// kustomize builds a kustomization folder; see controlplane.Kustomize.
func kustomize(dir string) ([]*unstructured.Unstructured, error) { return controlplane.Kustomize(dir) }

// rules are the RBAC rules of the Roles and ClusterRoles among objs, with the kind that holds
// them.
func rules(t *testing.T, objs []*unstructured.Unstructured) map[string][]rbacv1.PolicyRule {
	t.Helper()
	out := map[string][]rbacv1.PolicyRule{}
	for _, obj := range objs {
		if obj.GetKind() != "Role" && obj.GetKind() != "ClusterRole" {
			continue
		}
		var role rbacv1.ClusterRole
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role))
		out[obj.GetKind()] = append(out[obj.GetKind()], role.Rules...)
	}
	return out
}

var writes = []string{"create", "update", "patch", "delete", "deletecollection", "*"}

func TestTheDefaultInstallIsLeastPrivilege(t *testing.T) {
	objs, err := kustomize("config/default")
	require.NoError(t, err)
	all := rules(t, objs)
	require.NotEmpty(t, all["ClusterRole"])
	for kind, rs := range all {
		for _, r := range rs {
			for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames} {
				assert.NotContains(t, field, "*", "%s rule %v has a wildcard", kind, r)
			}
			assert.NotContains(t, r.Resources, "secrets", "%s rule %v", kind, r)
			if kind == "ClusterRole" && (slices.Contains(r.Resources, "configmaps") || slices.Contains(r.Resources, "subscriptions")) {
				for _, verb := range writes {
					// A Subscription is patched, to switch it to Manual (the dependencies of
					// plans Tollgate approved); never created, updated or deleted.
					if verb == "patch" && !slices.Contains(r.Resources, "configmaps") {
						continue
					}
					assert.NotContains(t, r.Verbs, verb, "cluster-wide %s on %v", verb, r.Resources)
				}
			}
		}
	}
	var aggregated bool
	for _, obj := range objs {
		if obj.GetKind() == "ClusterRole" && obj.GetName() == "tollgate-operand-reader" {
			_, aggregated, _ = unstructured.NestedSlice(obj.Object, "aggregationRule", "clusterRoleSelectors")
		}
	}
	assert.True(t, aggregated, "operand kinds are read through an aggregated ClusterRole")
}

// The optional component adds the flag; the patch on Subscriptions it uses is config/rbac's.
func TestTheTakeOverApprovalComponentGoesWithItsFlag(t *testing.T) {
	overlay := t.TempDir()
	config := repo.Path("config")
	rel, err := filepath.Rel(overlay, config)
	require.NoError(t, err)
	kustomization := fmt.Sprintf("resources:\n  - %s/default\ncomponents:\n  - %s/components/take-over-approval\n", rel, rel)
	require.NoError(t, os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600))
	objs, err := kustomize(overlay)
	require.NoError(t, err)
	for _, obj := range objs {
		if obj.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
			assert.Contains(t, args, "--take-over-approval")
		}
	}
}
