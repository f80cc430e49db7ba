package evaluation

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/decide/gatestatus"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/internal/decide/pin"
	"github.com/tollgate-dev/tollgate/internal/report/snapshot"
)

// Evaluator decides with one policy set on what a reader reads (a snapshot, or a live cluster),
// at one instant. Make one with New.
type Evaluator struct {
	// Decider is the manager's decision path: its reader, policies, input settings and clock.
	Decider *approval.Decider
	// Engine is the policy set (the Decider's policies), for the catalogs and the revision.
	Engine *engine.Engine
	// Namespace narrows Each to one namespace; "" is every namespace.
	Namespace string
	// Warn receives what keeps a gate status from being built as the manager would.
	Warn io.Writer
	// Content reads OLM v1 catalogs' content; nil: the reader's, when it carries some.
	Content pin.Content
	now     time.Time
}

// New is an Evaluator of eng on what r reads, at now.
func New(r client.Reader, eng *engine.Engine, cfg input.Config, now time.Time, warn io.Writer) *Evaluator {
	d := &approval.Decider{Reader: r, Policies: eng, Input: cfg, Now: func() time.Time { return now }}
	return &Evaluator{Decider: d, Engine: eng, Warn: warn, now: now}
}

// Each decides every Subscription (of e.Namespace, or all) in the reader's order, and hands
// each decision to fn; an error of either stops it.
func (e *Evaluator) Each(ctx context.Context, fn func(*approval.Decision) error) error {
	var subs v1alpha1.SubscriptionList
	if err := e.Decider.Reader.List(ctx, &subs, client.InNamespace(e.Namespace)); err != nil {
		return fmt.Errorf("list subscriptions: %w", err)
	}
	for i := range subs.Items {
		key := client.ObjectKeyFromObject(&subs.Items[i])
		dec, err := e.Decider.Decide(ctx, key)
		if err != nil || dec == nil {
			return fmt.Errorf("decide %s: %w", key, err)
		}
		if err := fn(dec); err != nil {
			return err
		}
	}
	return nil
}

// Report decides every Subscription, judges every InstallPlan and validates every
// CatalogSource.
func (e *Evaluator) Report(ctx context.Context) (*Report, error) {
	r := &Report{Now: e.now.UTC().Format(time.RFC3339), PolicyRevision: e.Engine.Revision(), Subscriptions: []Subscription{}}
	err := e.Each(ctx, func(dec *approval.Decision) error {
		r.Subscriptions = append(r.Subscriptions, e.subscription(dec))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.InstallPlans, err = e.installPlans(ctx); err != nil {
		return nil, err
	}
	if r.CatalogSources, err = e.catalogSources(ctx); err != nil {
		return nil, err
	}
	if r.Extensions, err = e.Extensions(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// subscription is one decision and the status the manager would write for it.
func (e *Evaluator) subscription(dec *approval.Decision) Subscription {
	sub, res := dec.Subscription, dec.Result
	gate := dec.Gate
	if gate == nil {
		gate = gatestatus.New(sub)
	}
	approvalMode := approval.ApprovalOf(sub)
	status, problems := gatestatus.Next(gate.Status, gatestatus.Observation{
		Generation: gate.Generation, Subscription: sub, Result: res,
		Digest: func() string { return engine.Digest(dec.Doc) },
		Extra:  []metav1.Condition{gatestatus.AutomaticApproval(sub, approvalMode, false)},
		Now:    metav1.NewTime(e.now.Truncate(time.Second)),
	})
	for _, p := range problems {
		fmt.Fprintf(e.Warn, "warning: %s/%s: %s\n", sub.Namespace, sub.Name, p)
	}
	s := Subscription{
		Namespace: sub.Namespace, Name: sub.Name,
		InstalledCSV: sub.Status.InstalledCSV, CurrentCSV: sub.Status.CurrentCSV,
		Approval: string(approvalMode), Mode: string(e.Decider.Mode(gate)),
		State: res.State, UpToDate: res.UpToDate,
		Decision:   Decision{Allowed: res.Decision.Allowed, Denials: orEmpty(gatestatus.Denials(res.Decision))},
		Conditions: orEmpty(res.Conditions), Health: orEmpty(res.Health),
		Status: status,
	}
	if sub.Spec != nil {
		s.Package = sub.Spec.Package
	}
	return s
}

// installPlans judges every plan.
func (e *Evaluator) installPlans(ctx context.Context) ([]approval.Verdict, error) {
	var plans v1alpha1.InstallPlanList
	if err := e.Decider.Reader.List(ctx, &plans, client.InNamespace(e.Namespace)); err != nil {
		return nil, fmt.Errorf("list install plans: %w", err)
	}
	out := []approval.Verdict{}
	for i := range plans.Items {
		v, err := e.Decider.Judge(ctx, &plans.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// catalogSources reports every CatalogSource, visible to a Subscription or not: their
// validity comes from the policies (one evaluation of a document that sees them all), their
// health from status.connectionState as the policies define it.
func (e *Evaluator) catalogSources(ctx context.Context) ([]CatalogSource, error) {
	var list v1alpha1.CatalogSourceList
	if err := e.Decider.Reader.List(ctx, &list, client.InNamespace(e.Namespace)); err != nil {
		return nil, fmt.Errorf("list catalog sources: %w", err)
	}
	out := []CatalogSource{}
	if len(list.Items) == 0 {
		return out, nil
	}
	res := e.Engine.Evaluate(ctx, input.CatalogDocument(list.Items, e.Decider.Input, e.now))
	if res.Err != nil {
		return nil, fmt.Errorf("validate catalog sources: %w", res.Err)
	}
	for _, cs := range list.Items {
		i := slices.IndexFunc(res.CatalogValidation, func(v engine.CatalogValidation) bool { return v.Namespace == cs.Namespace && v.Name == cs.Name })
		if i < 0 {
			return nil, fmt.Errorf("the policies returned no validation for CatalogSource %s/%s", cs.Namespace, cs.Name)
		}
		c := catalogHealth(&cs)
		c.Valid, c.Violations = res.CatalogValidation[i].Valid, orEmpty(res.CatalogValidation[i].Violations)
		out = append(out, c)
	}
	return out, nil
}

// catalogHealth is a CatalogSource's health from its last observed connection state: True
// when READY, False when another state, Unknown without one.
func catalogHealth(cs *v1alpha1.CatalogSource) CatalogSource {
	c := CatalogSource{Namespace: cs.Namespace, Name: cs.Name, Healthy: string(metav1.ConditionUnknown), Violations: []engine.Violation{}}
	if st := cs.Status.GRPCConnectionState; st != nil && st.LastObservedState != "" {
		c.LastObservedState = st.LastObservedState
		c.Healthy = string(metav1.ConditionFalse)
		if st.LastObservedState == "READY" {
			c.Healthy = string(metav1.ConditionTrue)
		}
	}
	return c
}

// EnsureGates adds to snap the gate the manager creates for every Subscription that has none.
func EnsureGates(ctx context.Context, snap *snapshot.Snapshot) error {
	var subs v1alpha1.SubscriptionList
	if err := snap.List(ctx, &subs); err != nil {
		return fmt.Errorf("list subscriptions in the snapshot: %w", err)
	}
	for i := range subs.Items {
		sub := &subs.Items[i]
		err := snap.Get(ctx, client.ObjectKeyFromObject(sub), &tollgatev1alpha1.UpgradeGate{})
		if err := client.IgnoreNotFound(err); err != nil {
			return err
		}
		if err == nil {
			continue
		}
		if err := snap.Add(gatestatus.New(sub)); err != nil {
			return fmt.Errorf("add the gate of %s/%s: %w", sub.Namespace, sub.Name, err)
		}
	}
	return nil
}
