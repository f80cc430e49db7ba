package policies

import "embed"

// FS holds the embedded Rego: every .rego file one folder deep ("upgrade/upgrade.rego"), the
// policies and their tests side by side. The engine compiles every file except those ending
// in _test.rego, which are for `opa test` only (they hold the tests, shared input builders and
// a fixture policy pack).
//
//go:embed */*.rego
var FS embed.FS
