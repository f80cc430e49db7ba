package engine

import (
	"fmt"
	"strings"
)

// listKeys and objectKeys are the keys of input document version 1 (policies/README.md) whose
// value is a list, and an object or null. The policies read them with defaults and iterate
// over them, so a value of another type reads as empty or missing: the denial that rests on
// what it would hold (a degraded operand, a blocked peer, a second OperatorGroup, the
// operator's Upgradeable=False) silently goes, and the decision could be an approval. The
// manager always builds these types; a document written by hand or edited afterwards may not.
var (
	listKeys = []string{"pendingInstallPlans", "installPlanPeers", "catalogSources",
		"operatorGroups", "operands", "unreadableOperandKinds"}
	objectKeys = []string{"subscription", "installedCSV", "currentCSV", "installPlan",
		"sourceCatalog", "operatorCondition", "operatorGroup", "replacedCSV", "packageManifest",
		"gate", "config"}
)

// misshapen is the fail-closed result for an input that has one of those keys with a value of
// another type; nil when it has none. An absent key is the policies' to judge (they give no
// result without one, which is a PolicyError too).
func misshapen(revision string, input map[string]any) *Result {
	var wrong []string
	for _, k := range listKeys {
		if v, ok := input[k]; ok && !isList(v) {
			wrong = append(wrong, fmt.Sprintf("input.%s is %s, not a list", k, typeName(v)))
		}
	}
	for _, k := range objectKeys {
		if v, ok := input[k]; ok && v != nil && !isObject(v) {
			wrong = append(wrong, fmt.Sprintf("input.%s is %s, not an object or null", k, typeName(v)))
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	r := policyError(revision, fmt.Errorf("%w: %s (input document version 1, policies/README.md)", ErrInputShape, strings.Join(wrong, "; ")))
	d := &r.Decision.Denials[0]
	d.Facts = []string{"the policies would read such a value as empty or missing, which could leave a denial out, so nothing is approved (fail closed)"}
	d.Lift = []Remedy{{
		Text: "judge a document as Tollgate builds it: from the cluster or a snapshot (tollgate eval --snapshot), or as the decision log recorded it; a document edited by hand must keep the types policies/README.md gives",
	}}
	return r
}
