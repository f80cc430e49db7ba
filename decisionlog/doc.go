// Package decisionlog writes Tollgate's decisions in OPA's decision log format, so that
// pipelines that ingest OPA's decision logs (console lines, or batches POSTed by OPA's
// decision log plugin) ingest Tollgate's too.
//
// Two kinds of event are logged, one JSON object each, with the field names of OPA's EventV1
// (v1/plugins/logs):
//
//   - a decision that changed a gate: path "tollgate/main/result" (the query
//     data.tollgate.main.result), input the Subscription's input document, result the
//     policies' result (decision, conditions, health, ... as engine.Result encodes it);
//   - an approval of an InstallPlan: path "tollgate/approval", input the input document of
//     the decision that allowed it, result {"approved", "installPlan", "csvs",
//     "subscription", "decision", "revision"}.
//
// Both carry labels {"app": "tollgate", "id": <instance>, "version": <Tollgate's version>},
// a random decision_id, bundles {"tollgate": {"revision": <policy revision>}} plus one entry
// per OPA bundle loaded with --bundle (its location, and its manifest revision),
// requested_by "tollgate", and an RFC 3339 timestamp. Tollgate adds one field of its own,
// input_digest: engine.Digest of the input, which the gate records as
// status.decision.inputDigest. Logged without input (the input may hold what a log pipeline
// should not), an event has no input and, as OPA marks an erased input, erased ["/input"]:
// input_digest still says which state was decided. nd_builtin_cache is never set: the
// policies cannot call non-deterministic built-ins, so every decision replays from its input
// (`tollgate eval --replay`).
//
// Sinks: a writer (standard output, or a file opened for appending), one line per event,
// written whole under one lock; or an HTTP service, to which batches are POSTed as OPA's
// plugin does (a gzip-compressed JSON array, Content-Encoding: gzip), from a bounded buffer
// that drops the oldest events when full (tollgate_decision_log_dropped_total) and with
// retries under an exponential backoff. Logging never blocks a reconcile on the network.
package decisionlog
