// Package admission proves config/admission on a real kube-apiserver that serves OLM's
// upstream CatalogSource CRD (test/testdata/olm-upstream), which by itself accepts a
// CatalogSource that names no usable source or several. It records what that CRD lets
// through, applies the ValidatingAdmissionPolicies, and checks every valid form is accepted
// (with a warning per deprecated legacy field) and every invalid one is rejected with the
// message of policies/catalogsource/catalogsource.rego. A second API server serves Tollgate's
// own CRD (config/crd/olm), which keeps the structured sources, to check those as well.
//
// The first API server also serves OLM v1's ClusterExtension (when `make olmv1` built its CRDs)
// and proves config/components/gate-lock: acting, by impersonation, as a tenant, a member of the
// break-glass group, Tollgate's ServiceAccount and OLM's controllers, it checks each policy
// refuses what it locks, with its message, admits everything else, and records each
// break-glass write in the API server's audit log, and that the lock reads its parameters from
// its one ConfigMap.
package admission
