package explain

import (
	"fmt"
	"strings"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/policysource"
)

// Which decision a report with a PolicyMismatch leads with (PolicyMismatch.Decision).
const (
	DecisionOfManager = "manager" // the one the manager recorded in the UpgradeGate (Report.Stored)
	DecisionOfExplain = "explain" // explain's own evaluation (Report.Allowed and Denials)
)

// PolicyView is what explain knows of the policy set it built, to compare it with the one the
// manager runs.
type PolicyView struct {
	// ConfigMaps are the policy ConfigMaps read, with what the manager says of each.
	ConfigMaps []PolicySource
	// Bundles are the --bundle sources given; PolicyDir the --policy-dir.
	Bundles   []string
	PolicyDir string
}

// PolicySource is one policy ConfigMap as explain read it.
type PolicySource struct {
	Namespace, Name string
	// Digest is policysource.Digest of the version read.
	Digest string
	// Used says whether explain's policy set includes it (explain leaves every policy
	// ConfigMap out when one does not compile).
	Used bool
	// Manager is the manager's status annotation; nil when there is none.
	Manager *policysource.Status
	// Unreadable says why the annotation could not be read, when it could not.
	Unreadable string
}

// PolicyMismatch says how explain's policy set differs from the one the manager runs, when it
// does: explain's evaluation then need not be the manager's decision.
type PolicyMismatch struct {
	ExplainRevision string `json:"explainRevision"`
	// ManagerRevision is the policy revision of the decision recorded in the UpgradeGate.
	ManagerRevision string `json:"managerRevision,omitempty"`
	// Decision is the decision the report leads with: DecisionOfManager when the gate records
	// one (and no --policy-dir asked for a different set), else DecisionOfExplain.
	Decision    string             `json:"decision"`
	Differences []PolicyDifference `json:"differences"`
}

// PolicyDifference is one difference between the two policy sets.
type PolicyDifference struct {
	// Source is "ConfigMap NAMESPACE/NAME" or "policy revision".
	Source string `json:"source"`
	// Manager and Explain are the version each uses: a digest (of a ConfigMap) or revision,
	// "none" (left out), or "previous" (a last good version of unknown digest).
	Manager string `json:"manager"`
	Explain string `json:"explain"`
	Message string `json:"message"`
}

// mismatch compares explain's policy set with the manager's: each ConfigMap's version with the
// one its status annotation says the manager serves, and the revision with the gate's. Equal
// revisions mean equal sets; a different revision no ConfigMap accounts for is reported as
// such. Nil when nothing differs, or when x has no PolicyView.
func (x *Explainer) mismatch(gate *tollgatev1alpha1.UpgradeGate, res *engine.Result) *PolicyMismatch {
	if x.Policy == nil {
		return nil
	}
	managerRev := ""
	if x.WithStored && gate != nil && gate.Status.Decision.EvaluatedAt != nil {
		managerRev = gate.Status.Decision.PolicyRevision
	}
	if managerRev != "" && managerRev == res.Revision {
		return nil
	}
	m := &PolicyMismatch{ExplainRevision: res.Revision, ManagerRevision: managerRev, Decision: DecisionOfExplain, Differences: []PolicyDifference{}}
	for _, s := range x.Policy.ConfigMaps {
		if d, ok := s.difference(); ok {
			m.Differences = append(m.Differences, d)
		}
	}
	if managerRev != "" && len(m.Differences) == 0 {
		m.Differences = append(m.Differences, PolicyDifference{Source: "policy revision", Manager: managerRev, Explain: res.Revision,
			Message: fmt.Sprintf("explain's policy revision %s differs from the manager's %s, and no policy ConfigMap accounts for it: %s",
				res.Revision, managerRev, x.Policy.revisionHint())})
	}
	if len(m.Differences) == 0 {
		return nil
	}
	if managerRev != "" && x.Policy.PolicyDir == "" {
		m.Decision = DecisionOfManager
	}
	return m
}

// revisionHint is what can make the revisions differ beyond the ConfigMaps.
func (v *PolicyView) revisionHint() string {
	var hints []string
	if v.PolicyDir != "" {
		hints = append(hints, "--policy-dir "+v.PolicyDir+" adds modules the manager does not have")
	}
	if len(v.Bundles) == 0 {
		hints = append(hints, "the manager may load OPA bundles (pass the same --bundle)")
	} else {
		hints = append(hints, "the manager may load other OPA bundles, or other revisions of them, than --bundle "+strings.Join(v.Bundles, ","))
	}
	return strings.Join(hints, "; ") + "; or the manager has not evaluated the gate since the policies changed (is it running?)"
}

// difference compares the version of s explain used with the one the manager serves.
func (s PolicySource) difference() (PolicyDifference, bool) {
	d := PolicyDifference{Source: "ConfigMap " + s.Namespace + "/" + s.Name, Explain: "none"}
	if s.Used {
		d.Explain = s.Digest
	}
	st := s.Manager
	if st == nil {
		if s.Unreadable == "" {
			return d, false // the manager has not reported on it: the revisions tell
		}
		d.Manager, d.Message = "unknown", d.Source+": "+s.Unreadable
		return d, true
	}
	rejected := ""
	if len(st.Errors) > 0 {
		rejected = ", which the manager rejected: " + (&engine.CompileError{Items: st.Errors}).Error()
	}
	var manager string
	switch st.Serving {
	case policysource.ServingPrevious:
		d.Manager = orDefault(st.ServingDigest, "previous")
		manager = fmt.Sprintf("the manager serves its previous good version (digest %s)", d.Manager)
	case policysource.ServingNone:
		d.Manager, manager = "none", "the manager leaves it out (it has never compiled with the manager's policy sources)"
	case policysource.ServingCurrent, "":
		if st.Serving == "" && st.Status != "ok" {
			return d, false // an annotation too old to say what is served
		}
		d.Manager, rejected = orDefault(st.ServingDigest, s.Digest), ""
		manager = fmt.Sprintf("the manager serves the version of digest %s, not the current one (it has not loaded this change yet: is it running?)", d.Manager)
		if d.Manager == s.Digest {
			manager = fmt.Sprintf("the manager serves its current version (digest %s)", d.Manager)
		}
	default:
		return d, false
	}
	if d.Manager == d.Explain {
		return d, false
	}
	explained := fmt.Sprintf("explain read the current one (digest %s)%s", s.Digest, rejected)
	if !s.Used {
		explained = "explain left it out (it leaves every policy ConfigMap out when one does not compile)"
		if rejected != "" {
			explained += fmt.Sprintf("; the current version (digest %s) is the one the manager rejected: %s", s.Digest, strings.TrimPrefix(rejected, ", which the manager rejected: "))
		}
	}
	d.Message = d.Source + ": " + manager + ", " + explained
	return d, true
}
