// Package controllers holds Tollgate's two reconcilers. The gate reconciler keeps one
// UpgradeGate per OLM Subscription: it decides the Subscription from the informer cache
// (package approval), approves the InstallPlans whose verdict allows it, and writes the
// status package gatestatus builds. The policy reconciler assembles the admin's policy
// sources (package policysource) and swaps in a new policy set only when it compiles.
package controllers
