package bypass_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/decide/bypass"
)

// managedFields are the managed fields of an approved InstallPlan as the API server writes
// them: OLM's catalog operator created the plan and writes its status; kubectl patched
// spec.approved (kubectl patch, whose field manager is kubectl-patch); Tollgate's manager, at
// another time, wrote an annotation.
const managedFields = `[
  {"manager": "catalog", "operation": "Update", "apiVersion": "operators.coreos.com/v1alpha1", "time": "2026-11-20T09:00:00Z",
   "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:ownerReferences": {".": {}, "k:{\"uid\":\"0b5a\"}": {}}},
     "f:spec": {".": {}, "f:approval": {}, "f:approved": {}, "f:clusterServiceVersionNames": {}, "f:generation": {}}}},
  {"manager": "catalog", "operation": "Update", "apiVersion": "operators.coreos.com/v1alpha1", "time": "2026-11-20T09:00:05Z",
   "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {".": {}, "f:phase": {}, "f:approved": {}}}, "subresource": "status"},
  {"manager": "kubectl-patch", "operation": "Update", "apiVersion": "operators.coreos.com/v1alpha1", "time": "2026-11-20T10:30:00Z",
   "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:approved": {}}}},
  {"manager": "tollgate", "operation": "Update", "apiVersion": "operators.coreos.com/v1alpha1", "time": "2026-11-20T11:00:00Z",
   "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:note": {}}}}}
]`

func entries(t *testing.T, raw string) []metav1.ManagedFieldsEntry {
	t.Helper()
	var out []metav1.ManagedFieldsEntry
	require.NoError(t, json.Unmarshal([]byte(raw), &out))
	return out
}

func TestLastSetByReadsTheManagedFields(t *testing.T) {
	approvedEntries := entries(t, managedFields)
	// A ClusterExtension whose pin kubectl (client-side apply) set, then an admin's script
	// (server-side apply, sharing the field at the same value) applied it again later.
	pin := entries(t, `[
	  {"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-20T08:00:00Z", "fieldsType": "FieldsV1",
	   "fieldsV1": {"f:spec": {".": {}, "f:namespace": {}, "f:source": {".": {}, "f:catalog": {".": {}, "f:packageName": {}, "f:version": {}}, "f:sourceType": {}}}}},
	  {"manager": "upgrade-script", "operation": "Apply", "time": "2026-11-20T10:00:00Z", "fieldsType": "FieldsV1",
	   "fieldsV1": {"f:spec": {"f:source": {"f:catalog": {"f:version": {}}}}}},
	  {"manager": "operator-controller", "operation": "Update", "time": "2026-11-20T10:00:09Z", "fieldsType": "FieldsV1",
	   "fieldsV1": {"f:status": {"f:install": {}}}, "subresource": "status"}
	]`)
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		path    []string
		manager string
		at      string
	}{
		{"the latest of the managers owning spec.approved", approvedEntries, []string{"spec", "approved"}, "kubectl-patch", "2026-11-20T10:30:00Z"},
		{"a status subresource's field of the same name does not count", approvedEntries[1:2], []string{"spec", "approved"}, "", ""},
		{"a field nobody owns", approvedEntries, []string{"spec", "channel"}, "", ""},
		{"a status field: its subresource's entries", approvedEntries, []string{"status", "phase"}, "catalog", "2026-11-20T09:00:05Z"},
		{"a status field owned by the object's own entries does not count", entries(t, `[{"manager": "creator", "operation": "Update", "time": "2026-11-20T08:00:00Z",
		  "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:phase": {}}}}]`), []string{"status", "phase"}, "", ""},
		{"the pin, owned twice: the most recent apply", pin, []string{"spec", "source", "catalog", "version"}, "upgrade-script", "2026-11-20T10:00:00Z"},
		{"a parent is not the field", pin[:1], []string{"spec", "source", "catalog", "channels"}, "", ""},
		{"no managed fields (a cache that drops them)", nil, []string{"spec", "approved"}, "", ""},
		{"no path owns nothing", approvedEntries, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			manager, at, ok := bypass.LastSetBy(tt.entries, tt.path...)
			assert.Equal(t, tt.manager != "", ok)
			assert.Equal(t, tt.manager, manager)
			if tt.at == "" {
				assert.Nil(t, at)
				return
			}
			require.NotNil(t, at)
			assert.Equal(t, tt.at, at.UTC().Format(time.RFC3339))
		})
	}
}

func TestLastSetByIgnoresWhatIsNotAFieldSet(t *testing.T) {
	e := []metav1.ManagedFieldsEntry{
		{Manager: "broken", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec": "not a set"}`)}},
		{Manager: "no-fields"},
		{Manager: "no-time", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:approved":{}}}`)}},
	}
	manager, at, ok := bypass.LastSetBy(e, "spec", "approved")
	assert.True(t, ok)
	assert.Equal(t, "no-time", manager)
	assert.Nil(t, at, "an entry without a time says who, not when")
}
