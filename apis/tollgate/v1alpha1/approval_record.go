package v1alpha1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ApprovalRecordAnnotation is the annotation Tollgate writes on an InstallPlan in the very
// write that approves it: its value (an ApprovalRecord as JSON) is the decision behind the
// approval. One write carries both, so no approval lands without its record and no record
// without its approval; the gate's status follows.
const ApprovalRecordAnnotation = "tollgate.dev/approval"

// ApprovalRecord is the decision behind an approval, as the approving gate records it.
//
// +kubebuilder:object:generate=false
type ApprovalRecord struct {
	// Gate is the UpgradeGate (and Subscription), in the plan's namespace, whose decision
	// approved the plan.
	Gate string `json:"gate"`
	// PolicyRevision, InputDigest and EvaluatedAt are the gate's decision's.
	PolicyRevision string       `json:"policyRevision"`
	InputDigest    string       `json:"inputDigest,omitempty"`
	EvaluatedAt    *metav1.Time `json:"evaluatedAt,omitempty"`
	// ApprovedAt is when Tollgate sent the approval.
	ApprovedAt metav1.Time `json:"approvedAt"`
}

// RecordOf is the approval record of gate's decision d, approving at now.
func RecordOf(gate string, d Decision, now metav1.Time) ApprovalRecord {
	return ApprovalRecord{Gate: gate, PolicyRevision: d.PolicyRevision, InputDigest: d.InputDigest, EvaluatedAt: d.EvaluatedAt, ApprovedAt: now}
}

// String is the record as the annotation holds it.
func (r ApprovalRecord) String() string {
	b, _ := json.Marshal(r) // strings and times: cannot fail
	return string(b)
}

// maxRecordField bounds the policy revision and input digest a record may name (Tollgate
// writes hashes far shorter).
const maxRecordField = 128

// RecordedApproval reads the approval record among annotations; ok is false when there is
// none or it cannot be read as one Tollgate writes (anyone who may patch the plan may write
// the annotation: a gate that is no object name, or a revision or digest of unbounded
// length, is no record).
func RecordedApproval(annotations map[string]string) (rec ApprovalRecord, ok bool) {
	v, found := annotations[ApprovalRecordAnnotation]
	if !found || json.Unmarshal([]byte(v), &rec) != nil || len(validation.IsDNS1123Subdomain(rec.Gate)) > 0 ||
		len(rec.PolicyRevision) > maxRecordField || len(rec.InputDigest) > maxRecordField {
		return ApprovalRecord{}, false
	}
	return rec, true
}
