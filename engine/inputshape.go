package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
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
		if v, ok := input[k]; ok {
			if t := jsonType(v); t != "a list" {
				wrong = append(wrong, fmt.Sprintf("input.%s is %s, not a list", k, t))
			}
		}
	}
	for _, k := range objectKeys {
		if v, ok := input[k]; ok {
			if t := jsonType(v); t != "an object" && t != "null" {
				wrong = append(wrong, fmt.Sprintf("input.%s is %s, not an object or null", k, t))
			}
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

// jsonType names the JSON type of a value of a decoded document: "a list", "an object", "null",
// "a string", "a number" or "a boolean" (a Go value that is no JSON data: "a <Go type>").
func jsonType(v any) string {
	if v == nil {
		return "null"
	}
	if _, ok := v.(json.Number); ok {
		return "a number"
	}
	switch reflect.TypeOf(v).Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}
