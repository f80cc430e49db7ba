// Package decisionlog writes Tollgate's decisions in OPA's decision log format, so that
// pipelines that ingest OPA's decision logs (console lines, or batches POSTed by OPA's
// decision log plugin) ingest Tollgate's too.
//
// Four kinds of event are logged, one JSON object each, with the field names of OPA's EventV1
// (v1/plugins/logs):
//
//   - a decision that changed a gate: path "tollgate/main/result" (the query
//     data.tollgate.main.result), input the Subscription's input document, result the
//     policies' result (decision, conditions, health, ... as engine.Result encodes it);
//   - an approval of an InstallPlan: path "tollgate/approval", input the input document of
//     the decision that allowed it, result {"approved", "installPlan", "csvs",
//     "subscription", "decision", "revision"};
//   - a pin an ExtensionGate set on its ClusterExtension: path "tollgate/pin" (PinResult);
//   - a bypass, an InstallPlan approved or a ClusterExtension's pin moved by someone else than
//     Tollgate, once, when its gate records it: path "tollgate/bypass", no input (nothing is
//     decided), result BypassResult {"gateKind", "gate", "kind", "name", "uid", "field",
//     "from", "to", "by" (the field manager, or "unknown"), "at", "seenAt", "decision"
//     (what the gate's policies said then: "allowed", "codes", "policyRevision",
//     "inputDigest")}, its bundles and input_digest those of that decision.
//
// Every event carries labels {"app": "tollgate", "id": <instance>, "version": <Tollgate's version>},
// a random decision_id, bundles {"tollgate": {"revision": <policy revision>}} plus one entry
// per OPA bundle loaded with --bundle (its location, and its manifest revision),
// requested_by "tollgate", and an RFC 3339 timestamp. Tollgate adds two fields of its own:
// input_digest, engine.Digest of the input, which the gate records as
// status.decision.inputDigest (the state decided on: it leaves out the clock, input.now, and
// the gate's status); and input_sha256, the sha256 of all of the input, clock and gate
// status included, so that a replay tells an edited input from the one decided on. Logged
// without input (the input may hold what a log pipeline should not), an event has no input
// and, as OPA marks an erased input, erased ["/input"]: both digests still say which input
// was decided. nd_builtin_cache is never set: the policies cannot call non-deterministic
// built-ins, so every decision replays from its input (`tollgate eval --replay`).
//
// Sinks: a writer (standard output, or a file opened for appending), one line per event,
// written whole under one lock; or an HTTP service, to which batches are POSTed as OPA's
// plugin does (a gzip-compressed JSON array, Content-Encoding: gzip), from a bounded buffer
// that drops the oldest events when full (tollgate_decision_log_dropped_total) and with
// retries under an exponential backoff. Logging never blocks a reconcile on the network.
//
// Every approval is logged, whenever the manager stops. An approval event says the plan was
// approved: it is written once the patch that approves the plan has succeeded, never ahead of
// it, so the log claims no approval that did not happen and needs no second event to take one
// back. What keeps it complete is the order of shutdown: the reconciler holds the log open
// (Logger.Hold) from before the patch until the approval is logged, and the Logger, when the
// manager stops it, first refuses new holds (no approval is made then: the next manager makes
// it), then waits for the approvals under way to be logged, and only then stops its sink,
// which flushes and closes. The file sink writes each event with one write to the file, so an
// event written outlives the process; the file is synced when it closes. What no order can
// cover is the process dying between the patch and the write (killed, or a lost Lease, after
// which controller-runtime does not wait for reconciles to end): the plan's own approval
// record (annotation tollgate.dev/approval) then still says who approved it and on which
// decision. The HTTP sink uploads what is pending when it stops, within FlushTimeout; what
// it could not deliver is counted in tollgate_decision_log_dropped_total and logged with its
// number. A decision event written after the log closed (a reconcile still running as the
// manager stops) is refused, counted and logged the same way: nothing is dropped silently.
package decisionlog
