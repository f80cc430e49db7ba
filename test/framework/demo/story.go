package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	operatorsv2 "github.com/tollgate-dev/tollgate/apis/operators/v2"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
	"github.com/tollgate-dev/tollgate/internal/report/explain"
)

// story plays the upgrade against a running manager, one step at a time; each step leaves
// what the next needs in the struct.
type story struct {
	*World
	n   *narrator
	out io.Writer
	mgr *manager

	oc       *operatorsv2.OperatorCondition
	plan     *v1alpha1.InstallPlan
	reported time.Time     // when the operator reported Upgradeable=True
	took     time.Duration // from then until Tollgate approved the plan
}

func (s *story) play(ctx context.Context) error {
	for _, step := range []func(context.Context) error{s.install, s.offerUpgrade, s.hold, s.becomeReady, s.approve, s.upgrade} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.out, "\nThe upgrade waited while the operator said it was not safe, and went ahead %s after it said it was.\n", s.took.Round(time.Millisecond))
	return nil
}

func (s *story) install(ctx context.Context) error {
	s.n.step("An admin installs the etcd operator with Manual approval")
	oc, err := s.Install(ctx)
	if err != nil {
		return err
	}
	s.oc = oc
	gate, err := s.waitGate(ctx, "Tollgate to gate the Subscription", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.EvaluatedAt != nil && g.Status.InstalledCSV == InstalledCSV
	})
	if err != nil {
		return err
	}
	s.n.say("Tollgate created UpgradeGate %s/%s: %s", Namespace, Subscription, gateLine(gate))
	return nil
}

func (s *story) offerUpgrade(ctx context.Context) error {
	s.n.step("A new version arrives: OLM resolves %s and waits for approval", UpgradeCSV)
	plan, err := s.OfferUpgrade(ctx)
	s.plan = plan
	return err
}

// hold checks that Tollgate decided against the upgrade and left the plan unapproved, and
// shows what `tollgate explain` says about it.
func (s *story) hold(ctx context.Context) error {
	s.n.step("Tollgate holds the upgrade")
	gate, err := s.waitGate(ctx, "Tollgate to decide on the upgrade", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.CurrentCSV == UpgradeCSV && g.Status.Decision.EvaluatedAt != nil
	})
	if err != nil {
		return err
	}
	s.n.say("UpgradeGate %s/%s: %s", Namespace, Subscription, gateLine(gate))
	if err := s.Client.Get(ctx, client.ObjectKeyFromObject(s.plan), s.plan); err != nil {
		return err
	}
	if s.plan.Spec.Approved {
		return errors.New("the InstallPlan was approved although the operator reports Upgradeable=False: Tollgate is not gating")
	}
	s.n.say("InstallPlan %s: approved=%v, it waits", InstallPlan, s.plan.Spec.Approved)
	s.n.say("")
	s.n.say("What `tollgate explain -n %s %s` says:", Namespace, Subscription)
	return s.explain(ctx)
}

// explain prints what `tollgate explain` prints, from the live API server, with the policies
// the manager runs.
func (s *story) explain(ctx context.Context) error {
	eng := s.mgr.policies.Engine()
	x := &explain.Explainer{
		Decider:    &approval.Decider{Reader: s.Client, Policies: eng, Input: s.mgr.input},
		Engine:     eng,
		Self:       "tollgate",
		WithStored: true,
	}
	report, err := x.Explain(ctx, SubscriptionKey)
	if err != nil {
		return err
	}
	return report.WriteText(&indented{w: s.out, prefix: "   | "})
}

// becomeReady plays the operator reporting Upgradeable=True, and OLM copying it to the status.
func (s *story) becomeReady(ctx context.Context) error {
	s.n.step("The operator finishes its migration and reports Upgradeable=True")
	oc := s.oc
	if err := s.Client.Get(ctx, client.ObjectKeyFromObject(oc), oc); err != nil {
		return err
	}
	oc.Spec.Conditions = []metav1.Condition{upgradeable(metav1.ConditionTrue, "MigrationComplete", "storage migrated, safe to upgrade", 0)}
	if err := s.Client.Update(ctx, oc); err != nil {
		return fmt.Errorf("update the OperatorCondition: %w", err)
	}
	s.reported = time.Now()
	s.n.say("the operator sets spec.conditions Upgradeable=True, \"storage migrated, safe to upgrade\"")
	oc.Status.Conditions = []metav1.Condition{upgradeable(metav1.ConditionTrue, "MigrationComplete", "storage migrated, safe to upgrade", oc.Generation)}
	if err := s.Client.Status().Update(ctx, oc); err != nil {
		return fmt.Errorf("update the OperatorCondition's status: %w", err)
	}
	s.n.say("(the demo plays OLM) copies it to status.conditions at generation %d", oc.Generation)
	return nil
}

func (s *story) approve(ctx context.Context) error {
	s.n.step("Tollgate approves the InstallPlan")
	plan := s.plan
	if err := s.wait(ctx, "Tollgate to approve the InstallPlan", func() (bool, error) {
		err := s.Client.Get(ctx, client.ObjectKeyFromObject(plan), plan)
		return err == nil && plan.Spec.Approved, err
	}); err != nil {
		return err
	}
	s.took = time.Since(s.reported)
	s.n.say("InstallPlan %s/%s: approved=%v, %s after the operator reported Upgradeable=True", Namespace, InstallPlan, plan.Spec.Approved, s.took.Round(time.Millisecond))
	gate, err := s.waitGate(ctx, "the gate to record the approval", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.Decision.LastApprovedInstallPlan == InstallPlan
	})
	if err != nil {
		return err
	}
	s.n.say("UpgradeGate %s/%s: %s, last approved plan %s", Namespace, Subscription, gateLine(gate), gate.Status.Decision.LastApprovedInstallPlan)
	return nil
}

// upgrade plays OLM installing the new version, and waits for the gate to see it done.
func (s *story) upgrade(ctx context.Context) error {
	s.n.step("OLM installs %s", UpgradeCSV)
	csv := newCSV(UpgradeCSV, "0.9.4")
	csv.Spec.Replaces = InstalledCSV
	if err := createWithStatus(ctx, s.Client, csv, func() { csv.Status = succeeded() }); err != nil {
		return err
	}
	s.plan.Status.Phase = v1alpha1.InstallPlanPhaseComplete
	if err := s.Client.Status().Update(ctx, s.plan); err != nil {
		return fmt.Errorf("complete the InstallPlan: %w", err)
	}
	if err := s.updateSubscription(ctx, func(sub *v1alpha1.Subscription) {
		sub.Status.InstalledCSV, sub.Status.State = UpgradeCSV, "AtLatestKnown"
	}); err != nil {
		return err
	}
	s.n.say("(the demo plays OLM) %s Succeeded, InstallPlan Complete, Subscription installedCSV %s", UpgradeCSV, UpgradeCSV)
	gate, err := s.waitGate(ctx, "the gate to see the upgrade done", func(g *tollgatev1alpha1.UpgradeGate) bool {
		return g.Status.InstalledCSV == UpgradeCSV && g.Status.UpToDate
	})
	if err != nil {
		return err
	}
	s.n.say("UpgradeGate %s/%s: %s", Namespace, Subscription, gateLine(gate))
	return nil
}
