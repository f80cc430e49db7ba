package controllers

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	olmv1 "github.com/tollgate-dev/tollgate/apis/olm/v1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/fbc"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
)

func judged(catalog, bundle string, allowed bool) pin.Judged {
	if allowed {
		return judgedWith(catalog, bundle)
	}
	return judgedWith(catalog, bundle, "VersionNotAllowed")
}

// judgedWith is a decision on bundle with standing denials of codes (allowed without any).
func judgedWith(catalog, bundle string, codes ...string) pin.Judged {
	res := &engine.Result{Decision: engine.Decision{Allowed: len(codes) == 0}}
	for _, c := range codes {
		res.Decision.Denials = append(res.Decision.Denials, engine.Denial{Denial: tollgatev1alpha1.Denial{Code: c, Message: "no"}})
	}
	return pin.Judged{Candidate: &input.ExtensionCandidate{Catalog: catalog, Bundle: fbc.Bundle{Name: bundle}}, Result: res}
}

func extensionAt(installed, pinned, annotation string) *olmv1.ClusterExtension {
	ext := &olmv1.ClusterExtension{}
	ext.Name = "p"
	ext.Spec.Source.Catalog = &olmv1.CatalogFilter{PackageName: "p", Version: pinned}
	ext.Status.Install = &olmv1.ClusterExtensionInstallStatus{Bundle: olmv1.BundleMetadata{Name: "p.v" + installed, Version: installed}}
	if annotation != "" {
		ext.Annotations = map[string]string{tollgatev1alpha1.PinRecordAnnotation: annotation}
	}
	return ext
}

// The pin Tollgate owns is its gate's status.pin: any other is taken back, a forged record
// annotation notwithstanding; its own pin not yet installed is taken back once it is no longer
// allowed whole; and a denied bundle no pin can exclude is said as such, never as held.
func TestNextPin(t *testing.T) {
	r := &ExtensionReconciler{}
	forged := tollgatev1alpha1.PinRecord{Version: "2.0.0", Installed: "1.0.0", PinnedAt: metav1.Now()}.String()
	allowedHead := pin.Judged{Result: &engine.Result{Decision: engine.Decision{Allowed: true}}}
	for _, tc := range []struct {
		name         string
		statusPin    string
		ext          *olmv1.ClusterExtension
		out          pin.Outcome
		reason, want string
		write        bool
	}{
		{"a pin set with a matching record annotation is taken back", "1.0.0", extensionAt("1.0.0", "2.0.0", forged),
			pin.Outcome{Installed: "1.0.0", Target: "1.0.0", Head: allowedHead}, "Reclaimed", "1.0.0", true},
		{"a pin the gate's status records is Tollgate's", "1.0.0", extensionAt("1.0.0", "1.0.0", ""),
			pin.Outcome{Installed: "1.0.0", Target: "1.0.0", Head: allowedHead}, "Pinned", "1.0.0", false},
		{"a gate that records no pin owns none", "", extensionAt("1.0.0", "2.0.0", forged),
			pin.Outcome{Installed: "1.0.0", Target: "1.0.0", Head: allowedHead}, "Reclaimed", "1.0.0", true},
		{"Tollgate's pin not yet installed and now denied is withdrawn", "1.1.0", extensionAt("1.0.0", "1.1.0", ""),
			pin.Outcome{Installed: "1.0.0", Target: "1.0.0", Head: allowedHead, Pinned: &pin.Version{Version: "1.1.0", Bundles: []pin.Judged{judged("a", "p.v1.1.0", false)}}},
			"Withdrawn", "1.0.0", true},
		{"Tollgate's pin not yet installed that OLM v1 cannot resolve is withdrawn", "1.1.0", extensionAt("1.0.0", "1.1.0", ""),
			pin.Outcome{Installed: "1.0.0", Target: "1.0.0", Head: allowedHead, Pinned: &pin.Version{Version: "1.1.0", Ambiguous: []string{"a", "b"}}},
			"Withdrawn", "1.0.0", true},
		{"Tollgate's pin not yet installed and still allowed stays", "1.1.0", extensionAt("1.0.0", "1.1.0", ""),
			pin.Outcome{Installed: "1.0.0", Target: "1.1.0", Head: allowedHead, Pinned: &pin.Version{Version: "1.1.0", Allowed: true, Bundles: []pin.Judged{judged("a", "p.v1.1.0", true)}}},
			"Upgrading", "1.1.0", false},
		{"Tollgate's pin not yet installed stays while OLM v1 works on it (the move is held by its progress alone)", "1.1.0", extensionAt("1.0.0", "1.1.0", ""),
			pin.Outcome{Installed: "1.0.0", Target: "1.0.0", Head: allowedHead, Pinned: &pin.Version{Version: "1.1.0", Bundles: []pin.Judged{judgedWith("a", "p.v1.1.0", "ExtensionProgressing", "OperatorProgressing")}}},
			"Upgrading", "1.1.0", false},
		{"a pin that differs from the target by build metadata alone stays: it admits the same bundles", "1.0.0", extensionAt("1.0.0+1", "1.0.0", ""),
			pin.Outcome{Installed: "1.0.0+1", Target: "1.0.0+1", Head: allowedHead}, "Pinned", "1.0.0", false},
		{"a denied same-version bundle is unexcludable, not held", "1.0.0", extensionAt("1.0.0", "1.0.0", ""),
			pin.Outcome{Installed: "1.0.0", Target: "1.0.0", Unexcludable: []pin.Judged{judged("a", "p-rebuilt.v1.0.0", false)}, Head: judged("a", "p-rebuilt.v1.0.0", false)},
			"Unexcludable", "1.0.0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := &tollgatev1alpha1.ExtensionGate{Status: tollgatev1alpha1.ExtensionGateStatus{Pin: tc.statusPin}}
			gate.Spec.Mode = tollgatev1alpha1.ModeEnforce
			m := r.nextPin(gate, tc.ext, tc.out)
			assert.Equal(t, tc.reason, m.reason, m.message)
			assert.Equal(t, tc.want, m.pin)
			assert.Equal(t, tc.write, m.write)
			assert.NotContains(t, m.message, "held")
		})
	}
}

// A pin this manager set and has not recorded yet (its record waits for the next reconcile, or
// failed to be written) is still Tollgate's while the ClusterExtension's spec is as that write
// left it, whatever OLM v1 writes to its status meanwhile: no adoption (which would report a
// bypass of Tollgate's own move), its record written next; its spec changed since, it is
// someone else's.
func TestAPinSetButNotRecordedIsStillTollgates(t *testing.T) {
	r := &ExtensionReconciler{}
	allowed := pin.Outcome{Installed: "1.0.0", Target: "1.1.0", Head: pin.Judged{Result: &engine.Result{Decision: engine.Decision{Allowed: true}}}}
	gate := &tollgatev1alpha1.ExtensionGate{Status: tollgatev1alpha1.ExtensionGateStatus{Pin: "1.0.0"}}
	gate.Spec.Mode = tollgatev1alpha1.ModeEnforce
	ext := extensionAt("1.0.0", "1.1.0", "")
	ext.UID, ext.ResourceVersion, ext.Generation = "uid-1", "7", 3
	require.Equal(t, "Adopted", r.nextPin(gate, ext, allowed).reason, "nothing remembered: the pin is not the one the status records")

	r.unrecorded.Store(keyOf(ext.Name), unrecordedPin{pin: "1.1.0", uid: "uid-1", generation: 3})
	for _, rv := range []string{"7", "8"} { // "8": OLM v1 wrote the extension's status
		ext.ResourceVersion = rv
		m := r.nextPin(gate, ext, allowed)
		assert.Equal(t, "Upgrading", m.reason, m.message)
		assert.True(t, m.owned)
		assert.False(t, m.write)
		assert.Nil(t, r.pinBypasses(context.Background(), gate, ext, m), "Tollgate's own move is no bypass")
	}

	ext.ResourceVersion, ext.Generation = "9", 4
	assert.Equal(t, "Adopted", r.nextPin(gate, ext, allowed).reason, "its spec changed since the write: not known to be Tollgate's")
	ext.UID, ext.Generation = "uid-2", 3
	assert.Equal(t, "Adopted", r.nextPin(gate, ext, allowed).reason, "another ClusterExtension of the same name, at the same generation: not the one Tollgate pinned")
	ext.UID = "uid-1"
	ext.Generation, ext.Spec.Source.Catalog.Version = 3, "1.0.5"
	assert.Equal(t, "Reclaimed", r.nextPin(gate, ext, allowed).reason, "another pin: not the one Tollgate set")
}

// Only the move of a pin Tollgate owned already goes before its record: a pin taken back or
// adopted, and a bypass, are recorded in the reconcile that sets the pin.
func TestPinsFirst(t *testing.T) {
	other := "1.0.5"
	bypassed := []tollgatev1alpha1.Bypass{{Field: tollgatev1alpha1.BypassFieldVersion}}
	for _, tc := range []struct {
		move     pinMove
		bypassed []tollgatev1alpha1.Bypass
		want     bool
	}{
		{pinMove{reason: "Moved", write: true, owned: true}, nil, true},
		{pinMove{reason: "Withdrawn", write: true, owned: true}, nil, true},
		{pinMove{reason: "Moved", write: true, owned: true}, bypassed, false},
		{pinMove{reason: "Reclaimed", write: true, owned: true, tookBack: &other}, nil, false},
		{pinMove{reason: "Adopted", write: true, owned: true}, nil, false},
		{pinMove{reason: "Adopted", write: true, owned: true}, bypassed, false},
	} {
		assert.Equal(t, tc.want, pinsFirst(tc.move, tc.bypassed), "%s, %d bypasses", tc.move.reason, len(tc.bypassed))
	}
}

// A move of the pin Tollgate owns is announced when it ends a hold, as a Subscription's release
// is; a move the policies allowed at once is not, as an approval is not.
func TestAMoveIsAnnouncedWhenItEndsAHold(t *testing.T) {
	r := &ExtensionReconciler{}
	allowed := pin.Outcome{Installed: "1.0.0", Target: "1.1.0", Head: pin.Judged{Result: &engine.Result{Decision: engine.Decision{Allowed: true}}}}
	for reason, want := range map[string]string{"Held": "PinMoved", "Pinned": "", "": ""} {
		gate := &tollgatev1alpha1.ExtensionGate{Status: tollgatev1alpha1.ExtensionGateStatus{Pin: "1.0.0"}}
		gate.Spec.Mode = tollgatev1alpha1.ModeEnforce
		if reason != "" {
			gate.Status.Conditions = []metav1.Condition{{Type: tollgatev1alpha1.ConditionPinOwned, Status: metav1.ConditionTrue, Reason: reason}}
		}
		m := r.nextPin(gate, extensionAt("1.0.0", "1.0.0", ""), allowed)
		require.Equal(t, "Moved", m.reason, m.message)
		assert.Equal(t, want, m.event, "a move after PinOwned %q", reason)
	}
}

// The DeniedBundleAdmitted condition names each bundle and what an admin can do; False with
// none.
func TestDeniedAdmittedCondition(t *testing.T) {
	c := gatestatus.DeniedBundleAdmitted(pin.Outcome{Target: "1.0.0"}, 3)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	c = gatestatus.DeniedBundleAdmitted(pin.Outcome{Target: "1.0.0", Unexcludable: []pin.Judged{judged("vendor", "p-rebuilt.v1.0.0", false)}}, 3)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, int64(3), c.ObservedGeneration)
	for _, want := range []string{"p-rebuilt.v1.0.0 of catalog vendor (VersionNotAllowed)", "spec.availabilityMode", "spec.source.catalog.channels", "spec.overrides"} {
		assert.Contains(t, c.Message, want)
	}
}

// A pin moved behind the gate is a bypass only while Tollgate owned one: its status records a
// pin, its PinOwned condition said so, and the pin now admits other bundles.
func TestPinBypasses(t *testing.T) {
	r := &ExtensionReconciler{}
	owned := metav1.Condition{Type: tollgatev1alpha1.ConditionPinOwned, Status: metav1.ConditionTrue, Reason: "Held"}
	audit := metav1.Condition{Type: tollgatev1alpha1.ConditionPinOwned, Status: metav1.ConditionFalse, Reason: "Audit"}
	recorded := tollgatev1alpha1.Bypass{UID: "u1", Field: tollgatev1alpha1.BypassFieldVersion, To: "2.0.0"}
	for _, tc := range []struct {
		name      string
		statusPin string
		owned     metav1.Condition
		recorded  []tollgatev1alpha1.Bypass
		pinned    string
		move      pinMove
		want      bool
	}{
		{"Tollgate's pin moved and taken back", "1.0.0", owned, nil, "2.0.0", pinMove{reason: "Reclaimed", write: true}, true},
		{"Tollgate's pin moved to the version it would set itself", "1.0.0", owned, nil, "1.1.0", pinMove{reason: "Adopted", write: true}, true},
		{"a first adoption: no pin owned yet", "", owned, nil, ">=1.0.0", pinMove{reason: "Reclaimed", write: true}, false},
		{"a pin moved while the gate was in Audit mode", "1.0.0", audit, nil, "2.0.0", pinMove{reason: "Reclaimed", write: true}, false},
		{"moved in build metadata alone: the same bundles", "1.0.0", owned, nil, "1.0.0+rebuild", pinMove{reason: "Adopted", write: true}, false},
		{"Tollgate's own move", "1.0.0", owned, nil, "1.0.0", pinMove{reason: "Moved", write: true}, false},
		{"the same version set, recorded already", "1.0.0", owned, []tollgatev1alpha1.Bypass{recorded}, "2.0.0", pinMove{reason: "Reclaimed", write: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := &tollgatev1alpha1.ExtensionGate{Status: tollgatev1alpha1.ExtensionGateStatus{Pin: tc.statusPin, Conditions: []metav1.Condition{tc.owned}, Bypasses: tc.recorded}}
			ext := extensionAt("1.0.0", tc.pinned, "")
			ext.UID = "u1"
			got := r.pinBypasses(context.Background(), gate, ext, tc.move)
			if !tc.want {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, tollgatev1alpha1.Bypass{Kind: tollgatev1alpha1.BypassKindClusterExtension, Name: "p", UID: "u1", Field: tollgatev1alpha1.BypassFieldVersion,
				From: tc.statusPin, To: tc.pinned, By: tollgatev1alpha1.UnknownFieldManager, SeenAt: got[0].SeenAt}, got[0], "who is unknown without a live read")
		})
	}
}
