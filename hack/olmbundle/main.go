// Command olmbundle writes Tollgate's own OLM bundle (bundles/olm) from the generated CRD,
// the generated RBAC and the manager Deployment under config/, so the bundle never drifts
// from them. `make manifests` runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const (
	packageName = "tollgate"
	channel     = "alpha"
	imageRepo   = "ghcr.io/tollgate-dev/tollgate"
)

func main() {
	if err := run(".", filepath.Join("bundles", "olm")); err != nil {
		fmt.Fprintln(os.Stderr, "olmbundle:", err)
		os.Exit(1)
	}
}

func run(root, out string) error {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := read(filepath.Join(root, "config", "crd", "bases", "tollgate.dev_upgradegates.yaml"), &crd); err != nil {
		return err
	}
	role, nsRules, err := readRoles(filepath.Join(root, "config", "rbac", "role.yaml"))
	if err != nil {
		return err
	}
	var deploy appsv1.Deployment
	if err := read(filepath.Join(root, "config", "manager", "manager.yaml"), &deploy); err != nil {
		return err
	}
	// The VERSION file is the one version of a release: the image tag and the CSV's version.
	release, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return fmt.Errorf("read the release version: %w", err)
	}
	tag := strings.TrimSpace(string(release))
	image := imageRepo + ":" + tag
	for i := range deploy.Spec.Template.Spec.Containers {
		deploy.Spec.Template.Spec.Containers[i].Image = image
	}
	csv := csv(crd, role, nsRules, deploy, strings.TrimPrefix(tag, "v"), image)
	annotations := map[string]any{"annotations": map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         packageName,
		"operators.operatorframework.io.bundle.channels.v1":        channel,
		"operators.operatorframework.io.bundle.channel.default.v1": channel,
	}}
	crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	for path, obj := range map[string]any{
		filepath.Join(out, "manifests", packageName+".clusterserviceversion.yaml"): csv,
		filepath.Join(out, "manifests", "tollgate.dev_upgradegates.yaml"):          crdManifest(crd),
		filepath.Join(out, "metadata", "annotations.yaml"):                         annotations,
	} {
		if err := write(path, obj); err != nil {
			return err
		}
	}
	return nil
}

// csv is the ClusterServiceVersion: the manager Deployment as its install strategy, the
// ClusterRole as its cluster permissions, the Roles' rules (the policy ConfigMaps) and leader
// election as its permissions in its own namespace, UpgradeGate as its owned CRD. Tollgate
// watches every namespace, so AllNamespaces is its only install mode.
func csv(crd apiextensionsv1.CustomResourceDefinition, role rbacv1.ClusterRole, nsRules []rbacv1.PolicyRule, deploy appsv1.Deployment, semver, image string) map[string]any {
	version := crd.Spec.Versions[0].Name
	return map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "ClusterServiceVersion",
		"metadata": map[string]any{
			"name": packageName + ".v" + semver,
			"annotations": map[string]string{
				"capabilities":   "Basic Install",
				"categories":     "Developer Tools",
				"description":    "Gates OLM operator upgrades by policy and explains every decision.",
				"containerImage": image,
			},
		},
		"spec": map[string]any{
			"displayName": "Tollgate",
			"description": "Tollgate approves an operator's InstallPlans only when its Rego policies allow the upgrade: " +
				"the operator says it is upgradeable, its operands are healthy, its catalog is sound, and the admins' own rules hold. " +
				"Set installPlanApproval: Manual on the Subscriptions it should gate.",
			"version":        semver,
			"maturity":       "alpha",
			"keywords":       []string{"olm", "upgrades", "policy", "opa", "rego"},
			"provider":       map[string]string{"name": "The Tollgate Authors"},
			"maintainers":    []map[string]string{{"name": "The Tollgate Authors", "email": "maintainers@tollgate.dev"}},
			"links":          []map[string]string{{"name": "Source", "url": "https://github.com/tollgate-dev/tollgate"}},
			"minKubeVersion": "1.30.0",
			"installModes": []map[string]any{
				{"type": "OwnNamespace", "supported": false},
				{"type": "SingleNamespace", "supported": false},
				{"type": "MultiNamespace", "supported": false},
				{"type": "AllNamespaces", "supported": true},
			},
			"customresourcedefinitions": map[string]any{"owned": []map[string]string{{
				"name": crd.Name, "version": version, "kind": crd.Spec.Names.Kind,
				"displayName": "Upgrade Gate", "description": "Holds or releases the upgrades of one OLM Subscription.",
			}}},
			"install": map[string]any{
				"strategy": "deployment",
				"spec": map[string]any{
					"clusterPermissions": []map[string]any{{"serviceAccountName": deploy.Spec.Template.Spec.ServiceAccountName, "rules": role.Rules}},
					"permissions": []map[string]any{{"serviceAccountName": deploy.Spec.Template.Spec.ServiceAccountName, "rules": append(nsRules,
						rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
					)}},
					"deployments": []map[string]any{{"name": deploy.Name, "label": deploy.Labels, "spec": deploy.Spec}},
				},
			},
		},
	}
}

// crdManifest drops the fields a bundle does not carry.
func crdManifest(crd apiextensionsv1.CustomResourceDefinition) map[string]any {
	return map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crd.Name, "annotations": crd.Annotations}, "spec": crd.Spec}
}

// readRoles reads the generated RBAC: the ClusterRole, and the rules of the Roles (which
// controller-gen writes into the same file, for the markers that name a namespace).
func readRoles(path string) (rbacv1.ClusterRole, []rbacv1.PolicyRule, error) {
	var cluster rbacv1.ClusterRole
	var rules []rbacv1.PolicyRule
	data, err := os.ReadFile(path)
	if err != nil {
		return cluster, nil, err
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var role rbacv1.Role // a ClusterRole reads the same, but for aggregation
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			return cluster, nil, fmt.Errorf("%s: %w", path, err)
		}
		switch role.Kind {
		case "ClusterRole":
			cluster.ObjectMeta, cluster.Rules = role.ObjectMeta, role.Rules
		case "Role":
			rules = append(rules, role.Rules...)
		}
	}
	return cluster, rules, nil
}

func read(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func write(path string, obj any) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	header := []byte("# Generated by hack/olmbundle from config/ (make manifests); do not edit.\n")
	return os.WriteFile(path, append(header, data...), 0o600)
}
