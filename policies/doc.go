// Package policies embeds Tollgate's Rego policy library, the policy set every evaluation
// starts from. The engine queries one entry point, data.tollgate.main.result, with one input
// document per Subscription; README.md documents that input document (version 1), the result,
// each package and the denial codes.
//
// One package per concern, each in its own folder with its tests beside it:
//
//	lib/           tollgate.lib            shared helpers
//	subscription/  tollgate.subscription   the ten Subscription conditions, state, upToDate, catalogStatus
//	health/        tollgate.health         worst-status aggregation of the operands' conditions
//	upgrade/       tollgate.upgrade        the embedded denials
//	catalogsource/ tollgate.catalogsource  CatalogSource spec validity
//	main/          tollgate.main           result: assembly, overrides, disabled codes
//
// InputV1 lists the keys of input document version 1 with their types, the one list the
// input builder, the engine's shape check and the tests read.
//
// Run the tests with `go tool opa test policies`.
package policies
