// Package admission proves config/admission on a real kube-apiserver that serves OLM's
// upstream CatalogSource CRD (test/testdata/olm-upstream), which by itself accepts a
// CatalogSource that names no usable source or several. It records what that CRD lets
// through, applies the ValidatingAdmissionPolicies, and checks every valid form is accepted
// (with a warning per deprecated legacy field) and every invalid one is rejected with the
// message of policies/catalogsource/catalogsource.rego. A second API server serves Tollgate's
// own CRD (config/crd/olm), which keeps the structured sources, to check those as well.
package admission
