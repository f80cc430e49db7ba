// Package olmv1 runs real OLM v1 on a real API server: catalogd and operator-controller, built
// by `make olmv1` from the version pinned in hack/tools/olmv1, with their own CRDs
// (ClusterCatalog, ClusterExtension) beside Tollgate's. Each test starts a world of its own: the
// API server, an in-process OCI registry over TLS serving the sample package's bundle images
// and a file-based catalog image (test/testdata/olmv1/sample), catalogd with its mutating
// webhook, and operator-controller installing as a cluster-admin ServiceAccount.
//
// The smoke scenario proves OLM v1 itself works there, as a gate will rely on: a ClusterCatalog
// is served (and catalogd answers its content as the fixtures in test/testdata/olmv1 hold), and
// a ClusterExtension installs the bundle its spec.source.catalog.version pins, upgrades when
// the pin moves, and keeps what it has when the pin names a version the catalog lacks.
//
// There is no kubelet, and none is needed: the installed Deployments stay unavailable and OLM
// v1 does not wait for them. The servers listen on 127.0.0.1 (catalogd's webhook on every
// interface), so the suite runs in a private network namespace of its own.
package olmv1
