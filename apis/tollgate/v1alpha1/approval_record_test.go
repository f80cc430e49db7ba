package v1alpha1_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

func TestAnApprovalRecordReadsBackAsWritten(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	d := tollgatev1alpha1.Decision{Allowed: true, PolicyRevision: "sha256:abc", InputDigest: "sha256:def", EvaluatedAt: &at}
	rec := tollgatev1alpha1.RecordOf("etcd", d, at)
	got, ok := tollgatev1alpha1.RecordedApproval(map[string]string{tollgatev1alpha1.ApprovalRecordAnnotation: rec.String()})
	assert.True(t, ok)
	assert.Equal(t, "etcd", got.Gate)
	assert.Equal(t, "sha256:abc", got.PolicyRevision)
	assert.Equal(t, "sha256:def", got.InputDigest)
	assert.True(t, got.ApprovedAt.Equal(&at))
}

func TestWhatIsNoApprovalRecord(t *testing.T) {
	for name, value := range map[string]string{
		"not JSON":                       "approved",
		"a gate with no name":            `{"policyRevision":"r"}`,
		"a gate no object may be called": "{\"gate\":\"\\u001b[2Jetcd\",\"policyRevision\":\"r\"}",
		"an unbounded revision":          `{"gate":"etcd","policyRevision":"` + strings.Repeat("r", 129) + `"}`,
		"an unbounded digest":            `{"gate":"etcd","policyRevision":"r","inputDigest":"` + strings.Repeat("d", 129) + `"}`,
	} {
		_, ok := tollgatev1alpha1.RecordedApproval(map[string]string{tollgatev1alpha1.ApprovalRecordAnnotation: value})
		assert.False(t, ok, name)
	}
	_, ok := tollgatev1alpha1.RecordedApproval(nil)
	assert.False(t, ok, "no annotation")
}
