package engine

import "io/fs"

// embeddedPolicies is the default base policy set (see embedded.go).
var embeddedPolicies fs.FS
