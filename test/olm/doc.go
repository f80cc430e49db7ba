// Package olm runs Tollgate against real OLM v0 on a real API server: OLM's catalog and olm
// operators and opm, built by `make olm` from the versions pinned in hack/tools/olm, with
// OLM's own CRDs. Each test starts a world of its own (API server, opm serving a file-based
// catalog whose bundles carry their objects, OLM's two operators, Tollgate's manager with
// config/rbac's permissions) and asserts what OLM did as well as what Tollgate decided.
//
// There is no kubelet: the suite marks the Deployments OLM creates as rolled out, which is
// all OLM waits for. OLM's operators listen on fixed ports (:8080, :8443) and opm on every
// interface, so the suite runs in a private network namespace of its own.
package olm
