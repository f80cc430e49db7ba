package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/tollgate-dev/tollgate/internal/decide/pin"
)

var (
	// heldExtensions has a series only for the ClusterExtensions whose highest successor is held
	// now (always 1), by the code that holds it: the series count follows what is held.
	heldExtensions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tollgate_held_extensions",
		Help: "1 for each gated ClusterExtension whose highest successor is currently held, by name and first standing denial code; one whose pin is at its highest successor, or has none, has no series.",
	}, []string{"name", "code"})
	pinsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tollgate_extension_pins_total",
		Help: "ClusterExtension pins Tollgate set, by reason (Moved: to an allowed successor; Reclaimed: taken back from someone else's; Withdrawn: its own, not yet installed, no longer allowed; Adopted: its record written).",
	}, []string{"reason"})
	// deniedAdmittedBundles has a series for each denied bundle a gated ClusterExtension's pin
	// admits that no exact pin can exclude (always 1).
	deniedAdmittedBundles = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tollgate_extension_denied_bundles_admitted",
		Help: "1 for each bundle the policies denied that a gated ClusterExtension's pin admits and no exact pin can exclude (a bundle of the installed version OLM v1 could install), by name, catalog, bundle and first standing denial code.",
	}, []string{"name", "catalog", "bundle", "code"})
)

func init() {
	metrics.Registry.MustRegister(heldExtensions, pinsTotal, deniedAdmittedBundles)
}

// reportHeld sets the extension's held series from the outcome: held while a successor exists
// above the pin Tollgate would set, or nothing could be judged. A denied bundle the pin admits
// and cannot exclude is no hold: it has its own series (reportDeniedAdmitted).
func reportHeld(name string, out pin.Outcome) {
	forgetExtension(name)
	held := len(out.Versions) > 0 && out.Versions[0].Version != out.Target
	judged := len(out.Versions) > 0 || len(out.Unexcludable) == 0
	if held || (out.Installed != "" && judged && !out.Head.Result.Decision.Allowed) {
		heldExtensions.WithLabelValues(name, blockedBy(out.Head.Result)).Set(1)
	}
}

// forgetExtension deletes a gate's series when it goes.
func forgetExtension(name string) {
	heldExtensions.DeletePartialMatch(prometheus.Labels{"name": name})
	deniedAdmittedBundles.DeletePartialMatch(prometheus.Labels{"name": name})
}
