package olm

import "strings"

// The suite's operators: package <pkg> installs the Deployment <pkg>-operator, which runs as
// the ServiceAccount <pkg>-operator, and owns the namespaced kind <Pkg>Cluster in
// <pkg>.example.com.

func operandKind(pkg string) string   { return strings.ToUpper(pkg[:1]) + pkg[1:] + "Cluster" }
func operandGroup(pkg string) string  { return pkg + ".example.com" }
func operandPlural(pkg string) string { return pkg + "clusters" }
func crdName(pkg string) string       { return operandPlural(pkg) + "." + operandGroup(pkg) }
func deploymentName(pkg string) string {
	return pkg + "-operator"
}

// csvObject is r's ClusterServiceVersion, as an operator author writes it into a bundle.
func csvObject(r release) map[string]any {
	spec := map[string]any{
		"displayName": r.pkg,
		"description": "The " + r.pkg + " operator.",
		"version":     r.version,
		"provider":    map[string]string{"name": "Example"},
		"installModes": []map[string]any{
			{"type": "OwnNamespace", "supported": true},
			{"type": "SingleNamespace", "supported": true},
			{"type": "MultiNamespace", "supported": false},
			{"type": "AllNamespaces", "supported": false},
		},
		"customresourcedefinitions": map[string]any{"owned": []map[string]string{{
			"name": crdName(r.pkg), "version": "v1", "kind": operandKind(r.pkg), "displayName": operandKind(r.pkg),
		}}},
		"install": map[string]any{"strategy": "deployment", "spec": installSpec(r)},
	}
	if r.replaces != "" {
		spec["replaces"] = r.replaces
	}
	return map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "ClusterServiceVersion",
		"metadata":   map[string]any{"name": csvName(r.pkg, r.version)},
		"spec":       spec,
	}
}

// installSpec is the CSV's deployment strategy: one Deployment, and the permissions the
// operator needs on its operands.
func installSpec(r release) map[string]any {
	sa := deploymentName(r.pkg)
	labels := map[string]string{"app": sa}
	return map[string]any{
		"permissions": []map[string]any{{"serviceAccountName": sa, "rules": []map[string]any{{
			"apiGroups": []string{operandGroup(r.pkg)}, "resources": []string{operandPlural(r.pkg), operandPlural(r.pkg) + "/status"},
			"verbs": []string{"get", "list", "watch", "update", "patch"},
		}}}},
		"deployments": []map[string]any{{"name": sa, "spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"serviceAccountName": sa, "containers": []map[string]any{{
					"name": "manager", "image": "example.com/" + r.pkg + ":v" + r.version,
				}}},
			},
		}}},
	}
}

// crdObject is the CRD of pkg's operand kind, with a status subresource for its conditions.
func crdObject(pkg string) map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": crdName(pkg)},
		"spec": map[string]any{
			"group": operandGroup(pkg),
			"scope": "Namespaced",
			"names": map[string]any{"kind": operandKind(pkg), "listKind": operandKind(pkg) + "List", "plural": operandPlural(pkg), "singular": strings.ToLower(operandKind(pkg))},
			"versions": []map[string]any{{
				"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}
}
