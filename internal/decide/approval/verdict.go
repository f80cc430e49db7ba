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

// verdict judges plan. The invariant it keeps: Tollgate approves a plan only when every CSV
// the plan would create, and every CSV of the namespace one of them would replace, has a
// decision that allows it, on facts the policies saw. So a plan is approvable only when it
// is eligible and
//
//   - a Subscription of its namespace waits on it (lists one of its CSVs as status.currentCSV):
//     the manager acts on a plan only through such a Subscription, and eval judges as it does;
//   - every CSV it lists is read whole and belongs to one package, and is decided: by every
//     Subscription that claims it (each with an Enforce gate, Manual, and allowed), or, with
//     none, as the dependency the plan subscribes to (its own decision allowed, Enforce);
//   - every CSV of the namespace that one of them replaces (spec.replaces, wherever the plan
//     says it) lets it through: each Subscription that owns that CSV does, or, with none, the
//     decision on the replacing CSV was made on it (its installed or replaced CSV).
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
// to one operator; no decision covers it; a decision that covers it does not let it through;
// or a CSV it replaces does not.
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
	out, deciders, err := s.decided(ctx, plan, csv, subs, &facts)
	if err != nil {
		return nil, err
	}
	judged := map[types.NamespacedName]bool{}
	for _, sub := range subs {
		judged[client.ObjectKeyFromObject(sub)] = true
	}
	rb, err := s.replaceBlockers(ctx, plan, csv, facts.Replaces, deciders, judged)
	return append(out, rb...), err
}

// decided are the blockers of the decisions that cover csv, and those decisions: every
// claimant's, or, with none, the dependency's the plan subscribes to.
func (s *session) decided(ctx context.Context, plan *v1alpha1.InstallPlan, csv string, subs []*v1alpha1.Subscription, facts *v1alpha1.BundleFacts) ([]Blocker, []*member, error) {
	if len(subs) == 0 {
		if len(facts.Dependencies) == 0 {
			return []Blocker{{CSV: csv, Reason: BlockNoSubscription}}, nil, nil
		}
		dep := &facts.Dependencies[0]
		m, err := s.dependency(ctx, plan, csv, dep)
		if err != nil {
			return nil, nil, err
		}
		return s.dependencyBlockers(csv, m), []*member{m}, nil
	}
	var out []Blocker
	var deciders []*member
	for _, sub := range subs {
		m, b, err := s.blocker(ctx, csv, client.ObjectKeyFromObject(sub))
		if err != nil {
			return nil, nil, err
		}
		if m != nil {
			deciders = append(deciders, m)
		}
		if b != nil {
			out = append(out, *b)
		}
	}
	return out, deciders, nil
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

// dependencyBlockers are why m, the decision on the dependency the plan subscribes to for
// csv, holds it: its decision does not allow it, or its mode (its gate's, when an admin made
// one for the Subscription to come, else the default) is not Enforce.
func (s *session) dependencyBlockers(csv string, m *member) []Blocker {
	b := Blocker{CSV: csv, Subscription: client.ObjectKeyFromObject(m.doc.Subscription).String(), Dependency: true}
	switch {
	case !m.result.Decision.Allowed:
		b.Reason, b.Codes = BlockDenied, Standing(m.result.Decision)
	case s.d.Mode(m.doc.Gate) != tollgatev1alpha1.ModeEnforce:
		b.Reason = BlockAudit
	default:
		return nil
	}
	return []Blocker{b}
}

// replaceBlockers are why the CSVs csv replaces (at most one: attribution holds several) hold
// the plan: one is a copy OLM made of an operator of another namespace (OLM replaces copies
// too, and that operator's gate is elsewhere); or one exists and a Subscription that owns it
// does not let the plan through (judged: claimants of csv already judged, not repeated); or
// one exists, no Subscription owns it, and none of deciders (the decisions on csv) was made
// on it.
func (s *session) replaceBlockers(ctx context.Context, plan *v1alpha1.InstallPlan, csv string, replaces []string, deciders []*member, judged map[types.NamespacedName]bool) ([]Blocker, error) {
	var out []Blocker
	for _, r := range replaces {
		replaced, err := s.csv(ctx, plan.Namespace, r)
		if err != nil {
			return nil, err
		}
		if replaced == nil { // nothing to replace: a first install
			continue
		}
		owners, err := s.owners(ctx, plan.Namespace, r)
		if err != nil {
			return nil, err
		}
		if from := replaced.Labels[v1alpha1.CopiedFromLabel]; from != "" {
			out = append(out, Blocker{CSV: csv, Replaces: r, Reason: BlockReplacesUnjudged, Detail: "a copy of the operator installed in namespace " + from})
			continue
		}
		if len(owners) == 0 && !madeOn(deciders, r) {
			out = append(out, Blocker{CSV: csv, Replaces: r, Reason: BlockReplacesUnjudged})
		}
		for _, o := range owners {
			key := client.ObjectKeyFromObject(o)
			if judged[key] {
				continue
			}
			_, b, err := s.blocker(ctx, csv, key)
			if err != nil {
				return nil, err
			}
			if b != nil {
				b.Replaces = r
				out = append(out, *b)
			}
		}
	}
	return out, nil
}

// madeOn says whether one of deciders was made on the CSV name as the one it replaces: its
// Subscription's installed CSV, or the replaced CSV its document holds.
func madeOn(deciders []*member, name string) bool {
	for _, m := range deciders {
		if m.doc.Subscription.Status.InstalledCSV == name || (m.doc.ReplacedCSV != nil && m.doc.ReplacedCSV.Name == name) {
			return true
		}
	}
	return false
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

// blocker is the full decision of the Subscription key and why it holds a plan that installs
// csv (nil when it does not).
func (s *session) blocker(ctx context.Context, csv string, key types.NamespacedName) (*member, *Blocker, error) {
	m, err := s.full(ctx, key)
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate %s, whose %s the plan installs: %w", key, csv, err)
	}
	b := &Blocker{CSV: csv, Subscription: key.String()}
	switch {
	case m == nil:
		b.Reason = BlockNoSubscription
	case !m.result.Decision.Allowed:
		b.Reason, b.Codes = BlockDenied, Standing(m.result.Decision)
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
