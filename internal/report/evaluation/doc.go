// Package evaluation decides a whole snapshot or cluster with one policy set, as the manager
// decides each Subscription: every Subscription (its decision, conditions, health and the
// UpgradeGate status the manager would write), every InstallPlan (approved or why not) and
// every CatalogSource (valid by the policies, healthy by its connection state).
//
// Evaluator.Each is the loop every whole-cluster report shares; Evaluator.Report is what
// `tollgate eval` prints (Report is its JSON contract, Report.WriteTable its table). The
// impact package compares the Each of two policy sets.
package evaluation
