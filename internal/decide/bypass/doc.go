// Package bypass recognises what only Tollgate is meant to do, done by someone else: a Manual
// InstallPlan approved without Tollgate's approval record, and a ClusterExtension pin moved
// away from the one Tollgate owned. It says which plans a gate must report, who set the field
// (as the object's metadata.managedFields say), what the gate's policies said then, and how a
// gate's status keeps each bypass once (tollgatev1alpha1.Bypass, at most MaxBypasses).
//
// Who: an object's managedFields name the field manager that last set each field (a client
// name such as kubectl, kubectl-patch or a controller's), and the time of its last write; not
// the user. The user is in the API server's audit log, where the gate lock's admission policy
// (config/components/gate-lock) also annotates each break-glass change.
//
// Which plans (the rule that keeps a cluster's history from flooding the report): a Manual,
// approved plan without a readable approval record is a bypass when it is still pending (not
// Complete or Failed) when a gate reads it, or when it is the plan the Subscription
// references and the gate's status last recorded it awaiting approval (Tollgate saw it before
// it was approved, and OLM completed it before Tollgate looked again). Plans approved and
// completed before Tollgate gated the Subscription are history, not reported.
package bypass
