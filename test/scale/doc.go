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
// A plain `go test ./test/scale/` runs only TestCatalogFlip, a small correctness check
// (the flip reaches every gate) with no timing.
package scale
