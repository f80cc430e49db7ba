package approval

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
	"github.com/tollgate-dev/tollgate/policies"
)

// MaxChain is the most CSVs of a replacement chain Tollgate follows behind one CSV a plan
// creates; a longer chain holds the plan.
const MaxChain = 16

// chain are the CSVs of plan's namespace that each of starts leads to: that CSV, the one its
// spec.replaces names, and so on while they exist. OLM replaces the first and, once the new CSV succeeds, deletes the
// whole chain behind it; each is a move the plan makes. A copy OLM made of an operator of
// another namespace (whose gate is elsewhere) or a chain longer than MaxChain is a blocker.
func (s *session) chain(ctx context.Context, plan *v1alpha1.InstallPlan, csv string, starts []string) ([]*v1alpha1.ClusterServiceVersion, *Blocker, error) {
	var out []*v1alpha1.ClusterServiceVersion
	seen := map[string]bool{}
	for _, start := range starts {
		more, b, err := s.walk(ctx, plan, csv, start, seen)
		if b != nil || err != nil {
			return nil, b, err
		}
		out = append(out, more...)
	}
	return out, nil, nil
}

// starts are where the replacement chains behind csv start: the CSV the plan says it replaces,
// and, whatever the plan says, the CSV each decider's Subscription reports installed (or, for
// a recreated one, replaces): the plan may not say what the new CSV replaces, and the move
// from what runs must be judged then too.
func starts(replaces []string, deciders []decider) []string {
	out := slices.Clone(replaces)
	for _, d := range deciders {
		name := installedOf(d.m)
		if name == "" && d.m.doc.ReplacedCSV != nil {
			name = d.m.doc.ReplacedCSV.Name
		}
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// walk follows one chain from start, skipping CSVs already seen.
func (s *session) walk(ctx context.Context, plan *v1alpha1.InstallPlan, csv, start string, seen map[string]bool) ([]*v1alpha1.ClusterServiceVersion, *Blocker, error) {
	var out []*v1alpha1.ClusterServiceVersion
	for r := start; r != "" && !seen[r]; {
		seen[r] = true
		c, err := s.csv(ctx, plan.Namespace, r)
		if c == nil || err != nil {
			return out, nil, err
		}
		if from := c.Labels[v1alpha1.CopiedFromLabel]; from != "" {
			return nil, &Blocker{CSV: csv, Replaces: r, Reason: BlockReplacesUnjudged, Detail: "a copy of the operator installed in namespace " + from}, nil
		}
		if len(out) == MaxChain {
			return nil, &Blocker{CSV: csv, Replaces: r, Reason: BlockReplacesUnjudged, Detail: fmt.Sprintf("its replacement chain is longer than %d CSVs", MaxChain)}, nil
		}
		out = append(out, c)
		r = c.Spec.Replaces
	}
	return out, nil, nil
}

// to is the to end of the moves plan makes for csv, as decider's document (its Subscription's
// package, channel and catalog) and the plan say it: the version from this plan only (its
// bundle lookups' and CSV step's olm.package properties, its CSV step's spec.version), else
// the PackageManifest's, else the name's. Sources of this plan that disagree, or one that does
// not parse, are a VersionConflict blocker.
func to(plan *v1alpha1.InstallPlan, csv string, facts *v1alpha1.BundleFacts, decider map[string]any) (policies.End, *Blocker) {
	sub, _ := decider["subscription"].(map[string]any)
	spec, _ := sub["spec"].(map[string]any)
	get := func(k string) string { s, _ := spec[k].(string); return s }
	e := policies.End{Name: csv, Package: get("name"), Channel: get("channel"), CatalogNamespace: get("sourceNamespace"), CatalogName: get("source")}
	if len(facts.Packages) == 1 {
		e.Package = facts.Packages[0]
	}
	parsed := map[string][]string{}
	var sources [][2]string
	for _, v := range facts.Versions {
		p, ok := policies.BundleVersion(v.Version)
		if !ok {
			return e, &Blocker{CSV: csv, Reason: BlockVersionConflict, Detail: fmt.Sprintf("%q from %s is not a version", v.Version, v.From)}
		}
		parsed[p] = append(parsed[p], fmt.Sprintf("%s from %s", p, v.From))
		sources = append(sources, [2]string{v.Version, v.From})
	}
	if len(parsed) > 1 {
		var says []string
		for _, k := range slices.Sorted(maps.Keys(parsed)) {
			says = append(says, parsed[k]...)
		}
		return e, &Blocker{CSV: csv, Reason: BlockVersionConflict, Detail: strings.Join(says, "; ")}
	}
	e.SetVersion(append(sources, policies.PackageManifestVersions(decider, csv)...)...)
	return e, nil
}

// moveDoc is doc judging the move from (nil: a first install) to, made by plan, with peers as
// its installPlanPeers (nil: doc's own).
func moveDoc(doc map[string]any, plan *v1alpha1.InstallPlan, from *policies.End, to policies.End, peers []any) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	m := &policies.Move{Namespace: plan.Namespace, InstallPlan: plan.Name, From: from, To: to}
	out["move"] = m.Data()
	if peers != nil {
		out["installPlanPeers"] = peers
	}
	return out
}

// judgeMoves evaluates every move (to, from each of froms, or a first install without one) on
// the documents of deciders, and returns a blocker for each move one of them does not allow.
func (s *session) judgeMoves(ctx context.Context, plan *v1alpha1.InstallPlan, to policies.End, froms []*policies.End, deciders []decider) []Blocker {
	if len(froms) == 0 {
		froms = []*policies.End{nil}
	}
	var out []Blocker
	for _, d := range deciders {
		denied := len(out)
		for _, from := range froms {
			doc := moveDoc(d.m.doc.Doc, plan, d.sameRead(from), to, d.peers)
			res := s.evaluateMove(ctx, d.m, doc)
			if res.Decision.Allowed {
				continue
			}
			if _, ok := s.denied[d.key]; !ok {
				s.denied[d.key] = &member{doc: &input.Document{Doc: doc}, result: res}
			}
			b := Blocker{CSV: to.Name, Subscription: d.key.String(), Reason: BlockDenied, Codes: Standing(res.Decision), Dependency: d.dependency}
			switch {
			case from != nil && d.owns:
				b.Replaces = from.Name
			case from != nil && from.Name != installedOf(d.m):
				b.From = from.Name
			}
			out = append(out, b)
		}
		if len(out) == denied && d.unfit != nil {
			out = append(out, *d.unfit)
		}
	}
	return out
}

// evaluateMove is the decision on doc, a move document made from m's: m's own decision when
// doc is m's document unchanged (the move it judges and its peers are those m's document
// carries, as for an ordinary upgrade: the Subscription's pending one), an evaluation of doc
// otherwise. The same document has the same decision; it is not evaluated twice.
func (s *session) evaluateMove(ctx context.Context, m *member, doc map[string]any) *engine.Result {
	if reflect.DeepEqual(m.doc.Doc, doc) {
		return m.result
	}
	return s.d.Policies.Evaluate(ctx, doc)
}

// decider is a Subscription whose document judges a move: a claimant of the CSV created, the
// dependency the plan creates for it, or the owner of a CSV replaced.
type decider struct {
	key        types.NamespacedName
	m          *member
	peers      []any // the plan's other operators, for a claimant; nil otherwise
	dependency bool
	owns       bool // an owner of the CSV replaced, not a claimant
	// unfit says why it cannot let a plan through whatever its decision (no gate, Audit,
	// Automatic); reported when its decisions do not hold the plan already.
	unfit *Blocker
}

func installedOf(m *member) string { return m.doc.Subscription.Status.InstalledCSV }

// sameRead is from with, when it is the CSV d's document checks (its installed or replaced
// CSV), that document's OperatorCondition: one read for both, so that the move is judged on
// the facts the gate's own decision saw, never a later read of them.
func (d decider) sameRead(from *policies.End) *policies.End {
	doc := d.m.doc
	checked := installedOf(d.m)
	if checked == "" && doc.ReplacedCSV != nil {
		checked = doc.ReplacedCSV.Name
	}
	if from == nil || from.Name != checked {
		return from
	}
	e := *from
	e.OperatorCondition = doc.Doc["operatorCondition"]
	return &e
}

// planPeers are installPlanPeers of a document judging plan's move to csv: the plan's other
// operators only (never another pending plan's), each with its own decision.
func (s *session) planPeers(ctx context.Context, plan *v1alpha1.InstallPlan, csv string) ([]any, error) {
	var peers []Peer
	for _, c := range slices.Compact(slices.Sorted(slices.Values(plan.Spec.ClusterServiceVersionNames))) {
		if c == csv {
			continue
		}
		p, err := s.peer(ctx, plan, c)
		if err != nil {
			return nil, err
		}
		peers = append(peers, p)
	}
	return peerData(peers), nil
}

// fromEnds are the from ends of chain, each with the first Subscription that owns it.
func (s *session) fromEnds(ctx context.Context, ns string, chain []*v1alpha1.ClusterServiceVersion) ([]*policies.End, error) {
	out := make([]*policies.End, 0, len(chain))
	for _, c := range chain {
		owners, err := s.owners(ctx, ns, c.Name)
		if err != nil {
			return nil, err
		}
		var owner *v1alpha1.Subscription
		if len(owners) > 0 {
			owner = owners[0]
		}
		e, err := s.b.From(ctx, c, owner)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// ownerDeciders are the Subscriptions that own a CSV of chain and are not among judged, each
// with why it cannot let a plan through whatever its decision (unfit), and a blocker for one
// that does not exist.
func (s *session) ownerDeciders(ctx context.Context, plan *v1alpha1.InstallPlan, csv string, chain []*v1alpha1.ClusterServiceVersion, judged map[types.NamespacedName]bool) ([]decider, []Blocker, error) {
	var out []decider
	var blockers []Blocker
	for _, c := range chain {
		owners, err := s.owners(ctx, plan.Namespace, c.Name)
		if err != nil {
			return nil, nil, err
		}
		for _, o := range owners {
			key := client.ObjectKeyFromObject(o)
			if judged[key] {
				continue
			}
			judged[key] = true
			m, b, err := s.standing(ctx, csv, key)
			if err != nil {
				return nil, nil, err
			}
			if b != nil {
				b.Replaces = c.Name
			}
			if m == nil {
				blockers = append(blockers, *b)
				continue
			}
			out = append(out, decider{key: key, m: m, owns: true, unfit: b})
		}
	}
	return out, blockers, nil
}
