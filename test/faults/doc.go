// Package faults runs the Tollgate manager on a real API server through faults a cluster
// produces: the kube-apiserver stopped and started again mid-run (etcd kept), write
// conflicts on InstallPlans and UpgradeGates, and two replicas electing a leader whose
// leader is killed. Whatever the fault, every approved plan was approved once, carrying its
// decision record, and no plan is approved while its operator says it is not
// upgradeable.
package faults
