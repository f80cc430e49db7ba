package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/open-policy-agent/opa/v1/bundle"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers/gather"
	"github.com/tollgate-dev/tollgate/engine"
)

// Options configure the controllers.
type Options struct {
	Gather gather.Config
	// DefaultMode applies to gates whose spec.mode is empty.
	DefaultMode tollgatev1alpha1.Mode
	// TakeOverApproval switches Automatic Subscriptions to Manual.
	TakeOverApproval bool
	// Reevaluate is how often every gate is re-evaluated without a change.
	Reevaluate time.Duration
	// PolicyNamespace holds the policy ConfigMaps.
	PolicyNamespace string
	// Engine is the base of every policy set: timeout and, for tests, the base policies.
	Engine engine.Options
	// Bundles returns the OPA bundles currently loaded; BundlesChanged says when that changes.
	Bundles        func() []*bundle.Bundle
	BundlesChanged <-chan event.GenericEvent
}

// CacheOptions limits the ConfigMap cache to the policy namespace: Tollgate reads no other
// ConfigMap, and a cluster may hold many.
func CacheOptions(policyNamespace string) cache.Options {
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{policyNamespace: {}}},
	}}
}

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
	gates := &GateReconciler{
		Client:           mgr.GetClient(),
		Recorder:         mgr.GetEventRecorderFor("tollgate"),
		Policies:         policies,
		Gather:           opts.Gather,
		DefaultMode:      opts.DefaultMode,
		TakeOverApproval: opts.TakeOverApproval,
		Reevaluate:       opts.Reevaluate,
	}
	if gates.DefaultMode == "" {
		gates.DefaultMode = tollgatev1alpha1.ModeEnforce
	}
	if gates.Gather.GlobalCatalogNamespace == "" {
		gates.Gather.GlobalCatalogNamespace = "olm"
	}
	gates.Gather.DefaultMode = string(gates.DefaultMode)
	if err := gates.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up the gate controller: %w", err)
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
