package bypass

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// maxCodes is the CRD's cap on a bypass's denial codes.
const maxCodes = 16

// Recorded says whether list holds the bypass of the object uid that set field to the value
// to: each is reported once, whenever it is seen again.
func Recorded(list []tollgatev1alpha1.Bypass, uid types.UID, field, to string) bool {
	return slices.ContainsFunc(list, func(b tollgatev1alpha1.Bypass) bool {
		return b.UID == uid && b.Field == field && b.To == to
	})
}

// Add records found ahead of list (the newest first), each once (Recorded), and keeps the
// most recent MaxBypasses.
func Add(list []tollgatev1alpha1.Bypass, found ...tollgatev1alpha1.Bypass) []tollgatev1alpha1.Bypass {
	var fresh []tollgatev1alpha1.Bypass
	for _, b := range found {
		if !Recorded(list, b.UID, b.Field, b.To) && !Recorded(fresh, b.UID, b.Field, b.To) {
			fresh = append(fresh, b)
		}
	}
	if len(fresh) == 0 {
		return list
	}
	out := append(fresh, list...)
	return out[:min(len(out), tollgatev1alpha1.MaxBypasses)]
}

// Added are the bypasses next records that old does not: those to report.
func Added(old, next []tollgatev1alpha1.Bypass) []tollgatev1alpha1.Bypass {
	var out []tollgatev1alpha1.Bypass
	for _, b := range next {
		if !Recorded(old, b.UID, b.Field, b.To) {
			out = append(out, b)
		}
	}
	return out
}

// DecisionOf is what the gate decision d said: allowed, or the codes of its standing denials.
func DecisionOf(d tollgatev1alpha1.Decision) tollgatev1alpha1.BypassDecision {
	out := tollgatev1alpha1.BypassDecision{Allowed: d.Allowed, PolicyRevision: d.PolicyRevision, InputDigest: d.InputDigest}
	if d.Allowed {
		return out
	}
	for _, den := range d.Denials {
		if !den.Overridden && !slices.Contains(out.Codes, den.Code) && len(out.Codes) < maxCodes {
			out.Codes = append(out.Codes, den.Code)
		}
	}
	if len(out.Codes) == 0 && d.BlockedBy != "" {
		out.Codes = []string{d.BlockedBy}
	}
	return out
}

// PinDecision is what an ExtensionGate's status said of the pin version: its decision (on the
// highest candidate) when version is that candidate's; the verdict of another candidate of
// that version; allowed for the installed version, where Tollgate itself pins when no
// successor is allowed; and not allowed for any other version (one the gate never decided:
// outside its range or channels, lower than the installed one, or a range).
func PinDecision(status tollgatev1alpha1.ExtensionGateStatus, version string) tollgatev1alpha1.BypassDecision {
	d := status.Decision
	out := tollgatev1alpha1.BypassDecision{PolicyRevision: d.PolicyRevision}
	v := withoutBuild(version)
	for i, c := range status.Candidates {
		if withoutBuild(c.Version) != v {
			continue
		}
		if i == 0 {
			return DecisionOf(d)
		}
		out.Allowed = c.Allowed
		if !c.Allowed && c.BlockedBy != "" {
			out.Codes = []string{c.BlockedBy}
		}
		return out
	}
	out.Allowed = v != "" && v == withoutBuild(status.Installed)
	return out
}

func withoutBuild(v string) string {
	v, _, _ = strings.Cut(v, "+")
	return v
}

// Summary says in one line what b was, for a person: the change made to the object (an
// InstallPlan in namespace ns, or a ClusterExtension), by which field manager and when, and
// what the policies of the gate that recorded it (named gate) said then.
func Summary(b tollgatev1alpha1.Bypass, ns, gate string) string {
	what := fmt.Sprintf("%s %s/%s approved", b.Kind, ns, b.Name)
	switch {
	case b.Field == tollgatev1alpha1.BypassFieldPhase:
		what = fmt.Sprintf("%s %s/%s run unapproved (status.phase set to %s)", b.Kind, ns, b.Name, b.To)
	case b.Kind == tollgatev1alpha1.BypassKindClusterExtension:
		what = fmt.Sprintf("%s %s pin moved from %s to %s", b.Kind, b.Name, orNone(b.From), orNone(b.To))
	}
	by := fmt.Sprintf("by field manager %s, seen at %s", b.By, b.SeenAt.UTC().Format(time.RFC3339))
	switch {
	case b.By == "" || b.By == tollgatev1alpha1.UnknownFieldManager:
		by = "by an unknown field manager, seen at " + b.SeenAt.UTC().Format(time.RFC3339)
	case b.At != nil:
		by = fmt.Sprintf("by field manager %s at %s", b.By, b.At.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s %s, without Tollgate's approval (%s)", what, by, said(gate, b.Decision))
}

// said is what the gate said, in words.
func said(gate string, d tollgatev1alpha1.BypassDecision) string {
	out := "gate " + gate + " did not allow it"
	switch {
	case d.Allowed:
		out = "gate " + gate + " allowed it"
	case len(d.Codes) > 0:
		out = "gate " + gate + " held it: " + strings.Join(d.Codes, ", ")
	}
	if d.PolicyRevision != "" {
		out += "; policy revision " + d.PolicyRevision
	}
	return out
}

func orNone(v string) string {
	if v == "" {
		return `""`
	}
	return v
}
