package bypass

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LastSetBy reads entries, an object's metadata.managedFields, for the field manager that owns
// the field at path (e.g. "spec", "approved": fieldsV1 {"f:spec":{"f:approved":{}}}) and the
// time of its entry. ok is false when no entry owns the field. A field under status is written
// through the status subresource, every other through the object itself: only entries of that
// subresource count. When several managers own it (server-side apply
// shares a field set to the same value), the one whose entry is the most recent is taken, the
// first listed on a tie.
func LastSetBy(entries []metav1.ManagedFieldsEntry, path ...string) (manager string, at *metav1.Time, ok bool) {
	subresource := ""
	if len(path) > 0 && path[0] == "status" {
		subresource = "status"
	}
	for _, e := range entries {
		if e.Subresource != subresource || e.FieldsV1 == nil || !owns(e.FieldsV1.Raw, path) {
			continue
		}
		if ok && (e.Time == nil || at != nil && !e.Time.After(at.Time)) {
			continue
		}
		manager, at, ok = e.Manager, e.Time, true
	}
	return manager, at, ok
}

// owns says whether the fieldsV1 set raw holds the field at path.
func owns(raw []byte, path []string) bool {
	for _, name := range path {
		var set map[string]json.RawMessage
		if json.Unmarshal(raw, &set) != nil {
			return false
		}
		next, found := set["f:"+name]
		if !found {
			return false
		}
		raw = next
	}
	return len(path) > 0
}
