package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers/gather"
	"github.com/tollgate-dev/tollgate/engine"
)

// offline evaluates a Snapshot as the manager would evaluate the cluster it was taken from.
type offline struct {
	snap        *gather.Snapshot
	engine      *engine.Engine
	config      gather.Config
	defaultMode tollgatev1alpha1.Mode
	now         time.Time
}

// evaluated is one Subscription's input and result after the snapshot has settled.
type evaluated struct {
	key    types.NamespacedName
	input  *gather.Input
	result *engine.Result
}

// settle evaluates every Subscription twice, writing each decision into its UpgradeGate's
// status in the snapshot in between, as the manager does. The second pass is what bundled
// InstallPlans need: a Subscription sees its peers' decisions (installPlanPeers) only once
// their gates carry one. Peers ignore each other's InstallPlanIncludesBlockedOperator, so two
// passes reach the state the manager converges to.
func (o *offline) settle(ctx context.Context) ([]evaluated, error) {
	var subs v1alpha1.SubscriptionList
	if err := o.snap.List(ctx, &subs); err != nil {
		return nil, fmt.Errorf("list subscriptions in the snapshot: %w", err)
	}
	var out []evaluated
	for pass := 0; pass < 2; pass++ {
		out = out[:0]
		for i := range subs.Items {
			key := client.ObjectKeyFromObject(&subs.Items[i])
			in, err := o.builder().Build(ctx, key)
			if err != nil {
				return nil, fmt.Errorf("gather %s: %w", key, err)
			}
			if in == nil {
				continue
			}
			out = append(out, evaluated{key: key, input: in, result: o.engine.Evaluate(ctx, in.Doc)})
		}
		for _, ev := range out {
			if err := o.snap.Upsert(o.gateWithDecision(ev)); err != nil {
				return nil, fmt.Errorf("store the decision of %s: %w", ev.key, err)
			}
		}
	}
	return out, nil
}

func (o *offline) builder() *gather.Builder {
	now := o.now
	return &gather.Builder{Reader: o.snap, Config: o.config, Now: func() time.Time { return now }}
}

// gateWithDecision is the Subscription's UpgradeGate (a new one when the snapshot has none)
// with the status the manager would write for this evaluation. The spec is kept: it holds the
// admin's mode and overrides.
func (o *offline) gateWithDecision(ev evaluated) *tollgatev1alpha1.UpgradeGate {
	gate := &tollgatev1alpha1.UpgradeGate{ObjectMeta: metav1.ObjectMeta{Namespace: ev.key.Namespace, Name: ev.key.Name}}
	if ev.input.Gate != nil {
		gate = ev.input.Gate.DeepCopy()
	}
	sub, res := ev.input.Subscription, ev.result
	now := metav1.NewTime(o.now.Truncate(time.Second))
	st := &gate.Status
	st.ObservedGeneration = gate.Generation
	st.InstalledCSV, st.CurrentCSV = sub.Status.InstalledCSV, sub.Status.CurrentCSV
	st.InstallPlanRef = sub.Status.InstallPlanRef
	if sub.Spec != nil {
		st.Package = sub.Spec.Package
	}
	st.State, st.UpToDate, st.CatalogStatus = res.State, res.UpToDate, res.CatalogStatus
	st.Conditions = toMetaConditions(st.Conditions, res.Conditions, gate.Generation, now)
	st.Health = toMetaConditions(st.Health, res.Health, gate.Generation, now)
	st.Decision = tollgatev1alpha1.Decision{
		Allowed:                 res.Decision.Allowed,
		BlockedBy:               res.Decision.BlockedBy(),
		Denials:                 res.Decision.Denials,
		PolicyRevision:          res.Revision,
		InputDigest:             engine.Digest(ev.input.Doc),
		EvaluatedAt:             &now,
		LastApprovedInstallPlan: st.Decision.LastApprovedInstallPlan,
	}
	return gate
}

func toMetaConditions(old []metav1.Condition, in []engine.Condition, generation int64, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(in))
	for _, c := range in {
		mc := metav1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, ObservedGeneration: generation, LastTransitionTime: now}
		if prev := meta.FindStatusCondition(old, c.Type); prev != nil && prev.Status == c.Status {
			mc.LastTransitionTime = prev.LastTransitionTime
		}
		out = append(out, mc)
	}
	return out
}
