// Package rbac proves Tollgate's least privilege on a real kube-apiserver that authorizes by
// RBAC: it applies config/rbac, runs the manager as its ServiceAccount (impersonated) through a
// held and then approved upgrade, and asks the API server what that ServiceAccount may not do:
// read Secrets, create or delete InstallPlans, write ConfigMaps outside its namespace, do more
// to a Subscription than patch it.
//
// envtest runs no kube-controller-manager, so the tests play its ClusterRole aggregation (the
// operand-reader role) as they play OLM's part.
package rbac
