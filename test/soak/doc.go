// Package soak is a seeded, randomized soak of the manager on a real API server: the safety
// invariant under churn. It has tests only; run it with
//
//	go test -run TestSoak ./test/soak/                                       (short form, make test)
//	TOLLGATE_SOAK_OPS=3000 TOLLGATE_SOAK_SEED=<seed> go test -run TestSoak -timeout 60m ./test/soak/   (make soak)
//
// # The churn
//
// The manager runs in the test process (olmplay.Suite) with its default 16 workers, so the
// Subscriptions of a namespace, a bundled plan's among them, are decided concurrently.
// Three namespaces (soak-0, soak-1, soak-2), each with an OperatorGroup, a catalog and three
// Manual Subscriptions (alpha, beta, gamma), and a global catalog in olm. The test plays OLM,
// the operators and the admin, drawing each operation from a math/rand/v2 PCG seeded with
// TOLLGATE_SOAK_SEED (printed at the start and on failure; random when unset), with a random
// pause of up to 120ms between operations, TOLLGATE_SOAK_OPS times (300 by default):
//
//   - Upgradeable flips in OperatorConditions (False a third of the time);
//   - gate overrides added (expiring 2–6s ahead) and removed;
//   - upgrade offers (a plan created, then RequiresApproval, the Subscription's currentCSV
//     moved) and bundled offers (one plan for two operators' CSVs);
//   - plans the manager approved moved to Installing then Complete, with the new CSV and its
//     OperatorCondition created, the Subscriptions moved on and the replaced CSV and
//     OperatorCondition deleted, as OLM would; pending plans replaced by a newer one;
//   - the namespace or global catalog going TRANSIENT_FAILURE (a third of the time) and back;
//   - the site policy ConfigMap swapped between a good variant that denies namespace soak-1,
//     one that denies package beta, a broken one (a syntax error) and none;
//   - Subscriptions deleted and re-created; OperatorConditions deleted and re-created.
//
// The operations drawn are the seed's; which of them take effect can depend on the manager's
// timing (a plan completes only once approved), so a replay repeats the churn, not
// necessarily every interleaving.
//
// # The checker
//
// The checker shares nothing with the manager but the API server. Its own watches (no
// informer, no cache) record every version of every Subscription, InstallPlan, CSV,
// CatalogSource, OperatorGroup, OperatorCondition, UpgradeGate and policy ConfigMap, with its
// resourceVersion and the instant the watch delivered it. With one etcd, resourceVersions are
// its global revision: the state "as of resourceVersion R" is, for every object, its last
// version with a resourceVersion ≤ R. An approval is the first version of a plan (by UID) with
// spec.approved true; R is its resourceVersion and T the instant it was delivered.
//
// A state is judged offline, exactly as the manager judges: approval.Decider.Judge over a
// snapshot.Snapshot of the state's objects in the plan's namespace and the global catalog
// namespace, the operand check the manager makes on this cluster (no CRD serves an operand
// kind), and the policy in force as of R. The policy in force is replayed from the recorded
// ConfigMap versions in resourceVersion order through policysource.Resolve, as the manager's
// policy reconciler does: a ConfigMap that does not compile keeps its last good version (or
// stays out when it never compiled), and when nothing compiles the set in service stays.
//
// # What is a violation
//
// The manager decides on its cache, slightly behind the API server, with the policy set it
// last compiled, and approves with the plan's resourceVersion as a precondition: the plan
// cannot have changed between its decision and the approval, but another object can (an
// OperatorCondition flipping to False), and a policy ConfigMap's new version is in force only
// once compiled. Those lags are inherent (OLM has the first too), so an approval is judged
// against the states and policies in force shortly before it:
//
//   - clean: the state as of R−1 (just before the approval), under the policy in force as of
//     R−1, allows the plan, evaluated at T;
//   - race: it does not, but a combination of a state in force at some instant of the grace
//     window [T−grace, T] and a policy in force at some instant of the policy window
//     [T−policyGrace, T] does. The states: the state as of r0 (the last
//     change delivered before T−grace) and as of every change after r0 and before R, each with
//     the plan as of R−1 (the version the approval was made from: the precondition pins it)
//     and evaluated at the first instant it was in force within the window (input.now moves
//     on; overrides only expire). The policies: the one in force at T−policyGrace and every
//     one delivered since, before R (the manager's policy set lags its ConfigMaps by a
//     compile, which takes over a second under the race detector on a busy machine). Races
//     are logged with how long before the approval the allowing state and policy were
//     superseded, and by what; they do not fail the test;
//   - VIOLATION: no such combination allows the plan: everything the manager could have seen
//     within the windows denied it (or did not make it eligible), and the manager
//     approved it anyway.
//
// The order of states is exact (resourceVersions); only the window's length is measured in
// time, on the checker's clock, by when its watches delivered each change (separate watches
// are not ordered among themselves, so an age can be a few milliseconds negative). A grace of
// 0 turns every race into a violation. grace is 2s and policyGrace 10s (TOLLGATE_SOAK_GRACE
// and TOLLGATE_SOAK_POLICY_GRACE override them). A
// violation fails the test with the seed, the plan and a summary of the state just before its
// approval (verdict, policy, every Subscription's status, Upgradeable condition, overrides and
// gate decision, every plan and catalog).
//
// Once the churn stops, approved plans complete, deleted Subscriptions are re-created, the
// catalogs turn healthy, every operator without a pending plan is offered an upgrade, and the
// last override expires; then every plan that the final state allows must be approved within
// 30s. A plan the final state denies must stay unapproved: its approval would be a violation.
// Finally the log is compared with a fresh list of every recorded kind (same objects, same
// resourceVersions), so a watch that missed something fails the test rather than judging on a
// gap.
package soak
