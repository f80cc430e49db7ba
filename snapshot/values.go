package snapshot

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// checkValues checks what a value's type cannot: an InstallPlan names no CSV by the empty
// string, which would make a decision on a plan that installs nothing anyone can name.
func checkValues(obj map[string]any, gk schema.GroupKind) error {
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
