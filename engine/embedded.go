package engine

import (
	"io/fs"

	"github.com/tollgate-dev/tollgate/policies"
)

// embeddedPolicies is the base policy set when Options.Policies is nil: the Rego embedded in
// the binary.
var embeddedPolicies fs.FS = policies.FS
