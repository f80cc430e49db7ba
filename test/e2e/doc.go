// Package e2e runs the Tollgate manager against a real kube-apiserver and etcd with the
// OLM CRDs installed. The tests play OLM's part: they create and update Subscriptions,
// CSVs, InstallPlans and the rest, and watch what Tollgate does.
package e2e
