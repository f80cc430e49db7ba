// Package scale measures Tollgate at scale on a real API server, each figure against a bare
// baseline measured in the same run on the same API server.
//
// BenchmarkCatalogFlip seeds TOLLGATE_SCALE_N namespaces (default 200), each with an
// OperatorGroup, a Succeeded CSV, a Manual Subscription at its latest version from the global
// catalog and an Upgradeable OperatorCondition, starts the manager in the test process, waits
// for every gate's first decision, then flips the global catalog's health back and forth and
// times until every gate's status reflects it. The baseline is a bare client writing the
// same N UpgradeGate status updates with as many workers as the manager (and, for reference,
// with 16), once the manager has stopped. The target: a flip within 1.5× the bare writes.
//
//	make bench-scale                  # N=200, a few minutes at most
//	make scale-long                   # N=5000
//	TOLLGATE_SCALE_N=1000 make bench-scale
//
// BenchmarkExtensionPins does the same for OLM v1, on a control plane with OLM v1's CRDs (those
// `make olmv1` copies; skipped without them) and no OLM running: TOLLGATE_EXTENSIONS_N
// ClusterExtensions (default 1,000) installed at 1.0.0 from one ClusterCatalog, whose content
// an in-process catalogd serves over TLS. It times from the creation of their ExtensionGates
// until every pin is 1.1.0, against a bare client patching as many pins with the controller's
// concurrency, and fails when the catalog's content is fetched more than once.
//
//	make bench-extensions             # N=1,000, one run
//	make bench-extensions EXTENSIONS_COUNT=3
//
// A plain `go test ./test/scale/` runs only TestCatalogFlip and TestExtensionPins, small
// correctness checks (the flip reaches every gate; every pin moves, fetched once) with no timing.
package scale
