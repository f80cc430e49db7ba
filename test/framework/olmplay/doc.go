// Package olmplay plays OLM's part for tests on a real API server: in a namespace of its own,
// a test creates the OperatorGroup, CatalogSources, Subscriptions, CSVs, InstallPlans,
// OperatorConditions and operands that OLM and the operators would, moves them through the
// states OLM would, and waits for what Tollgate does about them. Run starts the control plane
// and the Tollgate manager for a test package's TestMain.
package olmplay
