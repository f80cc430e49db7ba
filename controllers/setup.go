package controllers

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/catalogd"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/manager/metricsauth"
)

// Options configure the controllers.
type Options struct {
	// Input is what the policies see as input.config (global catalog namespace, default mode).
	// Its OperandKinds, when nil, becomes the manager's check: served by a CRD and readable.
	Input input.Config
	// TakeOverApproval switches Automatic Subscriptions to Manual.
	TakeOverApproval bool
	// LeaveDependenciesAutomatic leaves dependency Subscriptions Automatic (GateReconciler).
	LeaveDependenciesAutomatic bool
	// Reevaluate is how often every gate is re-evaluated without a change: a safety net, since
	// time-based rules say when to look again (recheckAt).
	Reevaluate time.Duration
	// Workers is how many Subscriptions are evaluated at once.
	Workers int
	// PolicyNamespace holds the policy ConfigMaps.
	PolicyNamespace string
	// Engine is the base of every policy set: timeout and, for tests, the base policies.
	Engine engine.Options
	// Bundles returns the OPA bundles currently loaded; BundlesChanged says when that changes.
	Bundles        func() []*bundle.Bundle
	BundlesChanged <-chan event.GenericEvent
	// DecisionLog logs changed decisions and approvals (Setup adds it to the manager, which
	// runs and flushes it); nil logs nothing.
	DecisionLog *decisionlog.Logger
	// SkipSubscriptions leaves OLM v0 alone (a cluster without it): no UpgradeGate is kept.
	SkipSubscriptions bool
	// Extensions, when set, gates OLM v1 ClusterExtensions (ExtensionGates) and reads catalog
	// content through it; nil leaves OLM v1 alone (a cluster without it).
	Extensions *catalogd.Client
	// HeldRecheck is how often an ExtensionGate holding a successor is decided again without a
	// change it watches (a catalog whose content could not be read is read again then); zero
	// means DefaultHeldRecheck.
	HeldRecheck time.Duration
}

// The metrics endpoint asks the API server who calls it (TokenReview) and whether they may
// get /metrics (SubjectAccessReview); see ServingOptions.MetricsSecure and package metricsauth.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// DefaultReevaluate is the safety-net period of re-evaluation without a change.
const DefaultReevaluate = 30 * time.Minute

// DefaultWorkers is how many Subscriptions the manager reconciles at once by default. A
// reconcile mostly waits on the API server (a status write, an approval), so many overlap;
// evaluations take a few milliseconds of CPU each.
const DefaultWorkers = 16

// LeaderElectionID names the Lease the replicas compete for; it is also the name label of
// controller-runtime's leader_election_master_status metric.
const LeaderElectionID = "tollgate.tollgate.dev"

// ServingOptions say where the manager serves metrics and probes, and whether it elects a leader.
type ServingOptions struct {
	// MetricsAddr is the metrics endpoint's address; "0" disables it.
	MetricsAddr string
	// MetricsSecure serves metrics over HTTPS (a self-signed certificate) to callers that
	// authenticate with a bearer token and may get the non-resource URL /metrics (RBAC, e.g.
	// the tollgate-metrics-reader ClusterRole). False serves plain HTTP to anyone who reaches it.
	MetricsSecure bool
	// ProbeAddr serves /healthz and /readyz.
	ProbeAddr string
	// LeaderElect lets only one replica act.
	LeaderElect bool
	// PprofAddr serves Go's profiles (/debug/pprof/); empty or "0" disables it.
	PprofAddr string
}

// ManagerOptions are the manager's options for s, without scheme or cache.
func (s ServingOptions) ManagerOptions() ctrl.Options {
	metrics := metricsserver.Options{BindAddress: s.MetricsAddr}
	if s.MetricsSecure {
		metrics.SecureServing = true
		metrics.FilterProvider = metricsauth.FilterProvider
		// HTTP/1.1 only: HTTP/2 stream resets (CVE-2023-44487) are not worth the risk here.
		metrics.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	return ctrl.Options{
		Metrics:                metrics,
		HealthProbeBindAddress: s.ProbeAddr,
		LeaderElection:         s.LeaderElect,
		LeaderElectionID:       LeaderElectionID,
		PprofBindAddress:       s.PprofAddr,
	}
}

// AddHealthChecks adds the manager's probes: /healthz answers while the process runs; /readyz
// fails on the leader until the admin policy sources were loaded (Policies.Ready).
func AddHealthChecks(mgr ctrl.Manager, policies *Policies) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add the liveness check: %w", err)
	}
	if err := mgr.AddReadyzCheck("policies-loaded", leaderReady(mgr.Elected(), policies.Ready)); err != nil {
		return fmt.Errorf("add the readiness check: %w", err)
	}
	return nil
}

// leaderReady applies check once elected is closed (at once without leader election). A standby
// replica is ready: it loads no policy, since the policy controller runs on the leader only,
// and were it never ready a rolling update or a node drain (PodDisruptionBudget) would wait
// for it forever.
func leaderReady(elected <-chan struct{}, check healthz.Checker) healthz.Checker {
	return func(req *http.Request) error {
		select {
		case <-elected:
			return check(req)
		default:
			return nil
		}
	}
}

// CacheOptions limits the ConfigMap cache to the policy namespace: Tollgate reads no other
// ConfigMap, and a cluster may hold many. It leaves out the copies of a CSV OLM writes into
// every target namespace of an operator installed for all namespaces (a thousand namespaces,
// a thousand copies of each such CSV): a Subscription installs the original, in its own
// namespace. Every cached object is trimmed of what the input never carries (input.Trim:
// managed fields, a CSV's install strategy...).
func CacheOptions(policyNamespace string) cache.Options {
	return CacheOptionsFor(policyNamespace, true)
}

// CacheOptionsFor is CacheOptions for a cluster with OLM v0 (subscriptions), or without it:
// there, no CSV is cached.
func CacheOptionsFor(policyNamespace string, subscriptions bool) cache.Options {
	byObject := map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{policyNamespace: {}}},
	}
	if subscriptions {
		byObject[&v1alpha1.ClusterServiceVersion{}] = cache.ByObject{Label: notCopied}
	}
	return cache.Options{ByObject: byObject, DefaultTransform: input.Trim}
}

// notCopied selects the CSVs that are not OLM's copies.
var notCopied = func() labels.Selector {
	req, err := labels.NewRequirement(v1alpha1.CopiedFromLabel, selection.DoesNotExist, nil)
	if err != nil {
		panic(err) // a constant requirement
	}
	return labels.NewSelector().Add(*req)
}()

// Setup compiles the embedded policies (and bundles) and registers both reconcilers with mgr.
// It fails when the base policy set does not compile: there is nothing to fall back to.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) (*Policies, error) {
	base := opts.Engine
	if opts.Bundles != nil {
		base.Bundles = opts.Bundles()
	}
	e, err := engine.New(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("compile the policies: %w", err)
	}
	policies := NewPolicies(e)
	in := opts.Input.WithDefaults()
	if in.OperandKinds == nil { // the manager reads operands only of kinds it may read, served by a CRD
		in.OperandKinds = newOperandAccess(mgr.GetAPIReader(), mgr.GetClient())
	}
	gates := &GateReconciler{
		Client:                     mgr.GetClient(),
		APIReader:                  mgr.GetAPIReader(),
		Recorder:                   mgr.GetEventRecorderFor("tollgate"),
		Policies:                   policies,
		Input:                      in,
		TakeOverApproval:           opts.TakeOverApproval,
		LeaveDependenciesAutomatic: opts.LeaveDependenciesAutomatic,
		Reevaluate:                 opts.Reevaluate,
		Workers:                    opts.Workers,
		DecisionLog:                opts.DecisionLog,
	}
	if opts.DecisionLog != nil {
		if err := mgr.Add(opts.DecisionLog); err != nil {
			return nil, fmt.Errorf("add the decision log: %w", err)
		}
	}
	if !opts.SkipSubscriptions {
		if err := gates.SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("set up the gate controller: %w", err)
		}
	}
	if err := setupExtensions(mgr, policies, in, opts); err != nil {
		return nil, err
	}
	loader := &PolicyReconciler{
		Client:         mgr.GetClient(),
		Recorder:       mgr.GetEventRecorderFor("tollgate"),
		Namespace:      opts.PolicyNamespace,
		Policies:       policies,
		Base:           opts.Engine,
		Bundles:        opts.Bundles,
		BundlesChanged: opts.BundlesChanged,
	}
	if err := loader.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up the policy controller: %w", err)
	}
	return policies, nil
}

// setupExtensions registers the ExtensionGate reconciler when opts.Extensions is set.
func setupExtensions(mgr ctrl.Manager, policies *Policies, in input.Config, opts Options) error {
	if opts.Extensions == nil {
		return nil
	}
	r := &ExtensionReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorderFor("tollgate"),
		Policies: policies, Input: in, Catalogs: opts.Extensions,
		Reevaluate: opts.Reevaluate, HeldRecheck: opts.HeldRecheck, DecisionLog: opts.DecisionLog,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the extension gate controller: %w", err)
	}
	return nil
}
