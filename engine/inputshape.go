package engine

import (
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/policies"
)

// misshapen is the fail-closed result for an input that has a key of its document's version
// (policies.InputV1, or policies.ExtensionV1 for an extension document) whose value is a list or an object there, but of another type here; nil
// when it has none. The policies read those keys with defaults and iterate over them, so a
// value of another type reads as empty or missing: the denial that rests on what it would hold
// (a degraded operand, a blocked peer, a second OperatorGroup, the operator's
// Upgradeable=False) silently goes, and the decision could be an approval. The manager always
// builds these types; a document written by hand or edited afterwards may not. An absent key
// is the policies' to judge (they give no result without a required one, which is a
// PolicyError too); a string key's type is checked where it is used.
func misshapen(revision string, input map[string]any) *Result {
	keys, version := policies.InputV1, "input document version 1"
	if input["apiVersion"] == policies.ExtensionAPIVersion {
		keys, version = policies.ExtensionV1, "extension document version 1"
	}
	var wrong []string
	for _, k := range keys {
		v, ok := input[k.Name]
		switch {
		case !ok:
		case k.Type == policies.List && !isList(v):
			wrong = append(wrong, fmt.Sprintf("input.%s is %s, not a list", k.Name, typeName(v)))
		case k.Type == policies.Object && v != nil && !isObject(v):
			wrong = append(wrong, fmt.Sprintf("input.%s is %s, not an object or null", k.Name, typeName(v)))
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	r := policyError(revision, fmt.Errorf("%w: %s (%s, policies/README.md)", ErrInputShape, strings.Join(wrong, "; "), version))
	d := &r.Decision.Denials[0]
	d.Facts = []string{"the policies would read such a value as empty or missing, which could leave a denial out, so nothing is approved (fail closed)"}
	d.Lift = []Remedy{{
		Text: "judge a document as Tollgate builds it: from the cluster or a snapshot (tollgate eval --snapshot), or as the decision log recorded it; a document edited by hand must keep the types policies/README.md gives",
	}}
	return r
}
