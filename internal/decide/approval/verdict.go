package approval

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// verdict judges plan. The invariant it keeps: Tollgate approves a plan only when every move
// the plan would make has a decision that allows it, on a document whose move states both real
// ends. A move is a CSV the plan creates (to) and a CSV of the namespace it replaces (from): the
// one the plan names and each one up the replacement chain behind it, which OLM deletes once
// the new CSV succeeds; or nothing, for a first install. So a plan is approvable only when it is
// eligible and
//
//   - a Subscription of its namespace waits on it (lists one of its CSVs as status.currentCSV):
//     the manager acts on a plan only through such a Subscription, and eval judges as it does;
//   - every CSV step creates the CSV it is listed for (StepProblems);
//   - every CSV it lists is read whole, belongs to one package and has one version in this plan;
//   - every move to such a CSV is allowed by the document of every Subscription that claims it
//     (each Manual, with an Enforce gate), or, with none, of the dependency the plan subscribes
//     to (Enforce), with only this plan's other operators as peers; and by the document of
//     every Subscription that owns a CSV of the chain (Manual, Enforce): its gate, overrides
//     and packs judge the move that replaces its operator.
func (s *session) verdict(ctx context.Context, plan *v1alpha1.InstallPlan) (Verdict, error) {
	v := Verdict{Namespace: plan.Namespace, Name: plan.Name, CSVs: plan.Spec.ClusterServiceVersionNames, Blockers: []Blocker{}}
	if v.CSVs == nil {
		v.CSVs = []string{}
	}
	if v.Ineligible = ineligible(plan); v.Ineligible != "" {
		return v, nil
	}
	csvs := slices.Compact(slices.Sorted(slices.Values(plan.Spec.ClusterServiceVersionNames)))
	if len(csvs) > MaxBundle {
		v.Blockers = append(v.Blockers, Blocker{Reason: BlockTooManyOperators})
		return v, nil
	}
	waited, err := s.waitedOn(ctx, plan.Namespace, csvs)
	if err != nil {
		return v, err
	}
	if !waited {
		v.Blockers = append(v.Blockers, Blocker{Reason: BlockNotWaitedOn})
	}
	for _, p := range plan.StepProblems() {
		v.Blockers = append(v.Blockers, Blocker{Reason: BlockStep, Detail: p})
	}
	for _, csv := range csvs {
		bs, err := s.csvBlockers(ctx, plan, csv)
		if err != nil {
			return v, err
		}
		v.Blockers = append(v.Blockers, bs...)
	}
	v.Approvable = len(v.Blockers) == 0
	return v, nil
}

// waitedOn says whether a Subscription of ns has one of csvs as its status.currentCSV.
func (s *session) waitedOn(ctx context.Context, ns string, csvs []string) (bool, error) {
	subs, err := s.subscriptions(ctx, ns)
	if err != nil {
		return false, err
	}
	for i := range subs {
		if slices.Contains(csvs, subs[i].Status.CurrentCSV) {
			return true, nil
		}
	}
	return false, nil
}

// csvBlockers are why csv holds plan: what the plan says of it cannot be read or attributed
// to one operator, or gives it several versions; no decision covers it; or one of the moves
// the plan makes for it (from each CSV up its replacement chain, or from nothing) is not
// allowed by a Subscription that claims it (or the dependency the plan creates for it) or one
// that owns the CSV replaced.
func (s *session) csvBlockers(ctx context.Context, plan *v1alpha1.InstallPlan, csv string) ([]Blocker, error) {
	facts := plan.FactsOf(csv)
	subs, err := s.claimants(ctx, plan.Namespace, csv)
	if err != nil {
		return nil, err
	}
	b, err := s.attribution(ctx, plan.Namespace, subs, &facts)
	if b != nil || err != nil {
		return attributed(b, csv), err
	}
	deciders, out, err := s.deciders(ctx, plan, csv, subs, &facts)
	if len(deciders) == 0 || err != nil {
		return out, err
	}
	end, vb := to(plan, csv, &facts, deciders[0].m.doc.Doc)
	chain, cb, err := s.chain(ctx, plan, csv, starts(facts.Replaces, deciders))
	switch {
	case err != nil:
		return nil, err
	case vb != nil || cb != nil:
		return append(out, nonNil(vb, cb)...), nil
	}
	froms, err := s.fromEnds(ctx, plan.Namespace, chain)
	if err != nil {
		return nil, err
	}
	judged := map[types.NamespacedName]bool{}
	for _, sub := range subs {
		judged[client.ObjectKeyFromObject(sub)] = true
	}
	owners, ob, err := s.ownerDeciders(ctx, plan, csv, chain, judged)
	if err != nil {
		return nil, err
	}
	out = append(out, ob...)
	return append(out, s.judgeMoves(ctx, plan, end, froms, append(deciders, owners...))...), nil
}

func nonNil(bs ...*Blocker) []Blocker {
	var out []Blocker
	for _, b := range bs {
		if b != nil {
			out = append(out, *b)
		}
	}
	return out
}

// deciders are the Subscriptions whose documents judge the moves to csv, each with why it
// cannot let a plan through whatever its decision (unfit): every claimant (it must be Manual,
// with a gate in Enforce mode), or, with none, the dependency the plan subscribes to (Enforce).
// A claimant that does not exist, or whose own decision does not allow, is a blocker.
func (s *session) deciders(ctx context.Context, plan *v1alpha1.InstallPlan, csv string, subs []*v1alpha1.Subscription, facts *v1alpha1.BundleFacts) ([]decider, []Blocker, error) {
	if len(subs) == 0 {
		if len(facts.Dependencies) == 0 {
			return nil, []Blocker{{CSV: csv, Reason: BlockNoSubscription}}, nil
		}
		m, err := s.dependency(ctx, plan, csv, &facts.Dependencies[0])
		if err != nil {
			return nil, nil, err
		}
		d := decider{key: client.ObjectKeyFromObject(m.doc.Subscription), m: m, dependency: true}
		if s.d.Mode(m.doc.Gate) != tollgatev1alpha1.ModeEnforce {
			d.unfit = &Blocker{CSV: csv, Subscription: d.key.String(), Dependency: true, Reason: BlockAudit}
		}
		return []decider{d}, nil, nil
	}
	peers, err := s.planPeers(ctx, plan, csv)
	if err != nil {
		return nil, nil, err
	}
	var out []decider
	var blockers []Blocker
	for _, sub := range subs {
		key := client.ObjectKeyFromObject(sub)
		m, b, err := s.standing(ctx, csv, key)
		if err != nil {
			return nil, nil, err
		}
		if m == nil {
			blockers = append(blockers, *b)
			continue
		}
		if !m.result.Decision.Allowed { // its own decision, as its gate records it, holds
			blockers = append(blockers, Blocker{CSV: csv, Subscription: key.String(), Reason: BlockDenied, Codes: Standing(m.result.Decision)})
			continue
		}
		out = append(out, decider{key: key, m: m, peers: peers, unfit: b})
	}
	return out, blockers, nil
}

// attribution is the blocker (naming no CSV yet) of a CSV, claimed by subs in ns, that facts
// do not attribute to one operator: what the plan says of it cannot be read (BlockUnreadable),
// or it names several replaced CSVs, or unattributed says why (BlockUnattributed); nil when
// they do. The verdict and the peers (their unattributed) both ask it.
func (s *session) attribution(ctx context.Context, ns string, subs []*v1alpha1.Subscription, facts *v1alpha1.BundleFacts) (*Blocker, error) {
	switch {
	case len(facts.Unreadable) > 0:
		return &Blocker{Reason: BlockUnreadable, Detail: strings.Join(facts.Unreadable, "; ")}, nil
	case len(facts.Replaces) > 1:
		return &Blocker{Reason: BlockUnattributed, Detail: fmt.Sprintf("the plan says it replaces several CSVs: %s", strings.Join(facts.Replaces, ", "))}, nil
	}
	why, err := s.unattributed(ctx, ns, subs, facts)
	if why == "" || err != nil {
		return nil, err
	}
	return &Blocker{Reason: BlockUnattributed, Detail: why}, nil
}

// attributed is b, the blocker attribution found, for csv.
func attributed(b *Blocker, csv string) []Blocker {
	if b == nil {
		return nil
	}
	b.CSV = csv
	return []Blocker{*b}
}

// unattributed says why a CSV cannot be attributed to one operator, or "" when it can: the
// plan has several Subscription steps for it; the plan and the namespace's claimants name
// several packages for it; or, without a claimant, the package or the name of the
// Subscription the plan would create is already the namespace's.
func (s *session) unattributed(ctx context.Context, ns string, subs []*v1alpha1.Subscription, facts *v1alpha1.BundleFacts) (string, error) {
	if n := len(facts.Dependencies); n > 1 {
		return fmt.Sprintf("the plan has %d Subscription steps for it", n), nil
	}
	packages := slices.Clone(facts.Packages)
	for _, sub := range subs {
		if p := packageOf(sub); p != "" {
			packages = append(packages, p)
		}
	}
	if packages = slices.Compact(slices.Sorted(slices.Values(packages))); len(packages) > 1 {
		return fmt.Sprintf("the plan and the namespace's Subscriptions name several packages for it: %s", strings.Join(packages, ", ")), nil
	}
	if len(subs) > 0 || len(facts.Dependencies) == 0 {
		return "", nil
	}
	return s.takenDependency(ctx, ns, &facts.Dependencies[0])
}

// takenDependency says why the Subscription dep the plan would create is not new in ns: a
// Subscription of that name exists, or one already follows its package (it would then
// claim the CSV, which it does not); "" when it is new.
func (s *session) takenDependency(ctx context.Context, ns string, dep *v1alpha1.Dependency) (string, error) {
	all, err := s.subscriptions(ctx, ns)
	if err != nil {
		return "", err
	}
	for i := range all {
		switch {
		case all[i].Name == dep.Subscription:
			return fmt.Sprintf("the plan would create Subscription %s, which exists already and does not want it", dep.Subscription), nil
		case packageOf(&all[i]) == dep.Package:
			return fmt.Sprintf("the plan subscribes to package %s for it, which Subscription %s already follows to another CSV (%q)", dep.Package, all[i].Name, all[i].Status.CurrentCSV), nil
		}
	}
	return "", nil
}

// csv is the CSV name of ns; nil when it does not exist.
func (s *session) csv(ctx context.Context, ns, name string) (*v1alpha1.ClusterServiceVersion, error) {
	csv := &v1alpha1.ClusterServiceVersion{}
	err := s.d.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, csv)
	switch {
	case err == nil:
		return csv, nil
	case apierrors.IsNotFound(err):
		return nil, nil
	}
	return nil, fmt.Errorf("get ClusterServiceVersion %s/%s: %w", ns, name, err)
}

// standing is the Subscription key's own document, and why it cannot let a plan that installs
// csv through whatever its decision (nil when it can): it does not exist, has no gate, is in
// Audit mode or approves automatically.
func (s *session) standing(ctx context.Context, csv string, key types.NamespacedName) (*member, *Blocker, error) {
	m, err := s.own(ctx, key)
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate %s, whose %s the plan installs: %w", key, csv, err)
	}
	b := &Blocker{CSV: csv, Subscription: key.String()}
	switch {
	case m == nil:
		b.Reason = BlockNoSubscription
	case m.doc.Gate == nil:
		b.Reason = BlockNoGate
	case s.d.Mode(m.doc.Gate) != tollgatev1alpha1.ModeEnforce:
		b.Reason = BlockAudit
	case ApprovalOf(m.doc.Subscription) != v1alpha1.ApprovalManual:
		b.Reason = BlockAutomatic
	default:
		return m, nil, nil
	}
	return m, b, nil
}
