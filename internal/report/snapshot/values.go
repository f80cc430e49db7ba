package snapshot

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// enumField is a string field that holds one of a few values.
type enumField struct {
	at      path
	allowed []string
}

// enums are the fields of the kinds Tollgate reads that hold one of a few values. The values
// are the constants of apis/, not the CRDs' schemas, which the loader does not have: Mode's
// constants are the ones its kubebuilder Enum marker lists, which becomes the enum of
// Tollgate's CRD (config/crd/bases); OLM's CRDs give approval no enum, only a description
// ("It must be one of "Automatic" or "Manual""), and OLM compares it with these constants.
var enums = map[schema.GroupKind][]enumField{
	{Group: "tollgate.dev", Kind: "UpgradeGate"}: {
		{at: path{"spec", "mode"}, allowed: []string{string(tollgatev1alpha1.ModeEnforce), string(tollgatev1alpha1.ModeAudit)}},
	},
	{Group: "operators.coreos.com", Kind: "InstallPlan"}: {
		{at: path{"spec", "approval"}, allowed: approvals},
	},
	{Group: "operators.coreos.com", Kind: "Subscription"}: {
		{at: path{"spec", "installPlanApproval"}, allowed: approvals},
	},
}

var approvals = []string{string(v1alpha1.ApprovalAutomatic), string(v1alpha1.ApprovalManual)}

// checkValues checks what a value's type cannot: a field of enums holds one of its values,
// when it is set (an empty string is a value, and not one of them), and an InstallPlan names
// no CSV by the empty string. A value Tollgate would read as something else — "manual" is
// not Manual to OLM — would make a decision on an object no one has.
func checkValues(obj map[string]any, gk schema.GroupKind) error {
	for _, f := range enums[gk] {
		v, ok := lookup(obj, f.at).(string) // checkType has refused what is not a string
		if !ok || slices.Contains(f.allowed, v) {
			continue
		}
		hint := ""
		if i := slices.IndexFunc(f.allowed, func(a string) bool { return strings.EqualFold(a, v) }); i >= 0 {
			hint = fmt.Sprintf(": the value is spelled %q (values are case-sensitive)", f.allowed[i])
		}
		return fieldErrorf(f.at, "must be %s, not %s%s", oneOf(f.allowed), describe(v), hint)
	}
	if gk == (schema.GroupKind{Group: "operators.coreos.com", Kind: "InstallPlan"}) {
		at := path{"spec", "clusterServiceVersionNames"}
		names, _ := lookup(obj, at).([]any)
		for i, n := range names {
			if n == "" {
				return fieldErrorf(at.index(i), "empty: every item names a ClusterServiceVersion the plan installs")
			}
		}
	}
	return nil
}

// lookup is the value at p, made of keys only, in obj; nil when it is not there.
func lookup(obj map[string]any, p path) any {
	var v any = obj
	for _, step := range p {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[step.(string)]
	}
	return v
}

// oneOf names values for a person: "A or B", "A, B or C".
func oneOf(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
