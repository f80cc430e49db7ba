// Package controllers turns the policy engine into an operator: one reconciler per OLM
// Subscription gathers its state from the informer cache into an input document
// (package gather), evaluates the policies, writes the UpgradeGate status, and approves
// the InstallPlans the policies allow. A second reconciler loads admin policy from
// ConfigMaps and swaps in the new policy set only when it compiles.
package controllers
