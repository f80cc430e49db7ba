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

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/input"
)

// Options configure the controllers.
type Options struct {
	// Input is what the policies see as input.config (global catalog namespace, default mode).
	// Its OperandKinds, when nil, becomes the manager's check: served by a CRD and readable.
	Input input.Config
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
	in := opts.Input.WithDefaults()
	if in.OperandKinds == nil { // the manager reads operands only of kinds it may read, served by a CRD
		in.OperandKinds = newOperandAccess(mgr.GetAPIReader(), mgr.GetClient())
	}
	gates := &GateReconciler{
		Client:           mgr.GetClient(),
		Recorder:         mgr.GetEventRecorderFor("tollgate"),
		Policies:         policies,
		Input:            in,
		TakeOverApproval: opts.TakeOverApproval,
		Reevaluate:       opts.Reevaluate,
	}
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
