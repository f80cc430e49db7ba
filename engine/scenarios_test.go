package engine_test

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/tollgate-dev/tollgate/apis/operators/v1"
	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policies"
)

// scenario is one state of the world and what the embedded policies must conclude from it.
// Only the conditions and health types listed are checked; denials are the standing codes,
// sorted, and allowed must be true exactly when none stands.
type scenario struct {
	name       string
	world      func() *world // default upgradeWaiting
	mutate     func(w *world)
	doc        func(doc map[string]any) // edits the gathered document (what gather cannot produce)
	data       map[string]any
	conditions map[string]string // type → "Status" or "Status/Reason"
	health     map[string]string // type → "Status" or "Status/Reason"
	state      string
	upToDate   *bool
	denials    []string
	overridden []string
	check      func(t *testing.T, r *engine.Result)
}

// benchPolicies is the policy tree the scenarios and benchmarks evaluate: the embedded one.
var benchPolicies fs.FS = policies.FS

var (
	enginesMu sync.Mutex
	engines   = map[string]*engine.Engine{}
)

// embedded returns an engine over the embedded policies (with data), compiled once per data.
func embedded(t testing.TB, data map[string]any) *engine.Engine {
	t.Helper()
	enginesMu.Lock()
	defer enginesMu.Unlock()
	key := fmt.Sprint(data)
	if e, ok := engines[key]; ok {
		return e
	}
	e, err := engine.New(context.Background(), engine.Options{Data: data}) // nil Policies: the embedded set
	require.NoError(t, err)
	engines[key] = e
	return e
}

func ptr[T any](v T) *T { return &v }

func run(t *testing.T, tests []scenario) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			build := tt.world
			if build == nil {
				build = upgradeWaiting
			}
			w := build()
			if tt.mutate != nil {
				tt.mutate(w)
			}
			doc := w.input(t)
			if tt.doc != nil {
				tt.doc(doc)
			}
			r := embedded(t, tt.data).Evaluate(context.Background(), doc)
			require.NoError(t, r.Err)
			assert.Empty(t, r.Warnings, "built-in errors")

			assertConditions(t, "condition", tt.conditions, r.Conditions)
			assertConditions(t, "health", tt.health, r.Health)
			if tt.state != "" {
				assert.Equal(t, tt.state, r.State, "state")
			}
			if tt.upToDate != nil {
				assert.Equal(t, *tt.upToDate, r.UpToDate, "upToDate")
			}
			var standing, overridden []string
			for _, d := range r.Decision.Denials {
				assert.NotEmpty(t, d.Message, "denial %s has a message", d.Code)
				if d.Overridden {
					overridden = append(overridden, d.Code)
				} else {
					standing = append(standing, d.Code)
				}
				if d.Code != tollgatev1alpha1.CodePolicyError {
					assert.Regexp(t, `^[a-z]+/[a-z]+\.rego:\d+ \(deny: .+\)$`, d.Source, "denial %s names its rule", d.Code)
				}
			}
			slices.Sort(standing)
			assert.Equal(t, tt.denials, standing, "standing denials: %v", r.Decision.Denials)
			assert.Equal(t, tt.overridden, overridden, "overridden denials")
			assert.Equal(t, len(tt.denials) == 0, r.Decision.Allowed, "allowed")

			// Always: the ten Subscription types plus UpgradeBlocked, and the three health types.
			assert.Len(t, r.Conditions, 11)
			assert.Len(t, r.Health, 3)
			blocked := conditionOf(r, tollgatev1alpha1.ConditionUpgradeBlocked)
			require.NotNil(t, blocked)
			if blocked.Status == metav1.ConditionTrue {
				assert.Equal(t, r.Decision.BlockedBy(), blocked.Reason)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func assertConditions(t *testing.T, what string, want map[string]string, got []engine.Condition) {
	t.Helper()
	for typ, w := range want {
		i := slices.IndexFunc(got, func(c engine.Condition) bool { return c.Type == typ })
		if !assert.GreaterOrEqual(t, i, 0, "%s %s present", what, typ) {
			continue
		}
		c := got[i]
		assert.NotEmpty(t, c.Message, "%s %s has a message", what, typ)
		assert.NotEmpty(t, c.Reason, "%s %s has a reason", what, typ)
		gotS := string(c.Status)
		if slices.Contains([]rune(w), '/') {
			gotS += "/" + c.Reason
		}
		assert.Equal(t, w, gotS, "%s %s: %s", what, typ, c.Message)
	}
}

// The HCO condition matrix (reference/hco-conditions.md): every column, as operand statuses,
// aggregates to itself, and Degraded=True / Progressing=True deny.
func TestScenariosHCOConditionMatrix(t *testing.T) { run(t, hcoConditionMatrixScenarios()) }

func hcoConditionMatrixScenarios() []scenario {
	rows := []struct {
		meaning                          string
		available, progressing, degraded string
		denials                          []string
	}{
		{"component is 100% healthy and the operator is idle", "True", "False", "False", nil},
		{"component is functional but upgrading or healing", "True", "True", "False", []string{"OperatorProgressing"}},
		{"component is functioning below capacity while an upgrade or heal is in progress", "True", "True", "True", []string{"OperatorDegraded", "OperatorProgressing"}},
		{"component and operator failed and need a human", "False", "False", "True", []string{"OperatorDegraded"}},
		{"component failed and the operator is healing", "False", "True", "True", []string{"OperatorDegraded", "OperatorProgressing"}},
		{"operator is deploying the component", "False", "True", "False", []string{"OperatorProgressing"}},
	}
	var tests []scenario
	for _, row := range rows {
		tests = append(tests, scenario{
			name:    fmt.Sprintf("%s (Available=%s Progressing=%s Degraded=%s)", row.meaning, row.available, row.progressing, row.degraded),
			mutate:  func(w *world) { w.health(row.available, row.progressing, row.degraded) },
			health:  map[string]string{"Available": row.available, "Progressing": row.progressing, "Degraded": row.degraded},
			denials: row.denials,
		})
	}
	return tests
}

// HCO's aggregation rules: worst status wins, absent conditions default, the most recent
// reason among the worst is reported.
func TestScenariosHealthAggregation(t *testing.T) { run(t, healthAggregationScenarios()) }

func healthAggregationScenarios() []scenario {
	return []scenario{{
		name: "one degraded operand makes the operator degraded and the message names it",
		mutate: func(w *world) {
			*w.operands[1] = *etcdCluster("side", cond("Available", "True", "HealInProgress", earlier),
				cond("Progressing", "False", "HealFailed", earlier), cond("Degraded", "True", "HealFailed", earlier))
		},
		health:  map[string]string{"Available": "True", "Progressing": "False", "Degraded": "True/HealFailed"},
		denials: []string{"OperatorDegraded"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, conditionOf(r, "Degraded").Message, "EtcdCluster operators/side")
			assert.Contains(t, conditionOf(r, tollgatev1alpha1.ConditionUpgradeBlocked).Message, "OperatorDegraded")
		},
	}, {
		name: "an operand without conditions counts as Available=False, Progressing and Degraded Unknown, reason InstallInvalid",
		mutate: func(w *world) {
			w.operands = append(w.operands, etcdCluster("fresh"))
		},
		health: map[string]string{"Available": "False/InstallInvalid", "Progressing": "Unknown/InstallInvalid", "Degraded": "Unknown/InstallInvalid"},
	}, {
		name: "a condition without a reason is reported with reason InstallInvalid",
		mutate: func(w *world) {
			*w.operands[0] = *etcdCluster("main", cond("Available", "True", "InstallSucceeded", earliest),
				cond("Progressing", "False", "InstallSucceeded", earliest), cond("Degraded", "True", "", earlier))
		},
		health:  map[string]string{"Degraded": "True/InstallInvalid"},
		denials: []string{"OperatorDegraded"},
	}, {
		name: "among operands with the worst status the most recently transitioned reason wins",
		mutate: func(w *world) {
			*w.operands[0] = *etcdCluster("main", cond("Available", "True", "InstallSucceeded", earliest),
				cond("Progressing", "False", "InstallSucceeded", earliest), cond("Degraded", "True", "HealFailed", earliest))
			*w.operands[1] = *etcdCluster("side", cond("Available", "True", "InstallSucceeded", earliest),
				cond("Progressing", "False", "InstallSucceeded", earliest), cond("Degraded", "True", "UpgradeFailed", earlier))
		},
		health:  map[string]string{"Degraded": "True/UpgradeFailed"},
		denials: []string{"OperatorDegraded"},
	}, {
		name:   "an operator without operands is available when its CSV succeeded, and idle",
		mutate: func(w *world) { w.operands = nil },
		health: map[string]string{"Available": "True/NoOperands", "Progressing": "False/NoOperands", "Degraded": "False/NoOperands"},
	}, {
		name: "operands outside the OperatorGroup's target namespaces are not counted",
		mutate: func(w *world) {
			other := etcdCluster("elsewhere", cond("Degraded", "True", "HealFailed", earlier))
			other.SetNamespace("team-b")
			w.operands = append(w.operands, other)
		},
		health: map[string]string{"Available": "True", "Progressing": "False", "Degraded": "False"},
	}, {
		name: "an OperatorGroup for all namespaces counts operands everywhere",
		mutate: func(w *world) {
			w.group = operatorGroup("")
			other := etcdCluster("elsewhere", cond("Available", "True", "HealFailed", earlier),
				cond("Progressing", "False", "HealFailed", earlier), cond("Degraded", "True", "HealFailed", earlier))
			other.SetNamespace("team-b")
			w.operands = append(w.operands, other)
		},
		health:  map[string]string{"Degraded": "True/HealFailed"},
		denials: []string{"OperatorDegraded"},
	}, {
		name:    "an operator's admin can disable a health denial through policy data",
		mutate:  func(w *world) { w.health("True", "True", "False") },
		data:    map[string]any{"disabledCodes": []string{"OperatorProgressing"}},
		health:  map[string]string{"Progressing": "True"},
		denials: nil,
	}}
}

// OLM's Upgradeable rule (reference/operator-conditions.md and DESIGN.md), applied before
// approval: no OperatorCondition or no Upgradeable allows, only False blocks, overrides win,
// a stale condition blocks, Upgrading=True blocks.
func TestScenariosOperatorConditions(t *testing.T) { run(t, operatorConditionScenarios()) }

func operatorConditionScenarios() []scenario {
	return slices.Concat(upgradeableStatusScenarios(), operatorConditionFreshnessScenarios(), upgradeGateOverrideScenarios())
}

// upgradeable is the operator's Upgradeable condition with status, observed at generation observed.
func upgradeable(status metav1.ConditionStatus, observed int64) metav1.Condition {
	return metav1.Condition{Type: "Upgradeable", Status: status, Reason: "Migrating", Message: "the operator is migrating its CRs",
		ObservedGeneration: observed, LastTransitionTime: earlier}
}

// upgradeGateOverride sets Upgradeable=False and an UpgradeGate override of code expiring at expires.
func upgradeGateOverride(code string, expires *metav1.Time) func(w *world) {
	return func(w *world) {
		w.opCond.Status.Conditions = []metav1.Condition{upgradeable(metav1.ConditionFalse, 1)}
		w.opCond.Spec.Conditions = w.opCond.Status.Conditions
		w.gate.Spec.Overrides = []tollgatev1alpha1.Override{{Code: code, Reason: "CHG-1234: migration verified by the vendor", Expires: expires}}
	}
}

// upgradeableStatusScenarios: what each Upgradeable status, and OLM's own overrides of it, decide.
func upgradeableStatusScenarios() []scenario {
	return []scenario{{
		name:   "no OperatorCondition: OLM reverts to existing behaviour and allows",
		mutate: func(w *world) { w.opCond = nil },
	}, {
		name: "an OperatorCondition without Upgradeable allows; other condition types pass through",
		mutate: func(w *world) {
			w.opCond = operatorCondition("etcd.v1", metav1.Condition{Type: "Foo", Status: metav1.ConditionFalse, Reason: "Foo", Message: "foo", ObservedGeneration: 1, LastTransitionTime: earlier})
		},
	}, {
		name: "Upgradeable=True allows",
	}, {
		name: "Upgradeable=Unknown allows (only False blocks)",
		mutate: func(w *world) {
			w.opCond = operatorCondition("etcd.v1", upgradeable(metav1.ConditionUnknown, 1))
		},
	}, {
		name: "Upgradeable=False blocks with the operator's own message",
		mutate: func(w *world) {
			w.opCond = operatorCondition("etcd.v1", upgradeable(metav1.ConditionFalse, 1))
		},
		denials:    []string{"OperatorNotUpgradeable"},
		conditions: map[string]string{"UpgradeBlocked": "True/OperatorNotUpgradeable"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, r.Decision.Denials[0].Message, "the operator is migrating its CRs")
			assert.Contains(t, r.Decision.Denials[0].Message, "etcd.v1")
		},
	}, {
		name: "an Upgradeable=True override in spec.overrides wins over status False",
		mutate: func(w *world) {
			w.opCond = operatorCondition("etcd.v1", upgradeable(metav1.ConditionFalse, 1))
			w.opCond.Spec.Overrides = []operatorsv1.ConditionOverride{{Type: "Upgradeable", Status: metav1.ConditionTrue, Reason: "Override", Message: "admin says go"}}
		},
	}, {
		name: "an Upgradeable=False override in spec.overrides wins over status True",
		mutate: func(w *world) {
			w.opCond.Spec.Overrides = []operatorsv1.ConditionOverride{{Type: "Upgradeable", Status: metav1.ConditionFalse, Reason: "Hold", Message: "admin says wait"}}
		},
		denials: []string{"OperatorNotUpgradeable"},
	}}
}

// operatorConditionFreshnessScenarios: stale conditions, an operator upgrading, and whose
// OperatorCondition counts.
func operatorConditionFreshnessScenarios() []scenario {
	return []scenario{{
		name: "an Upgradeable condition observed at an older generation is stale, whatever its status",
		mutate: func(w *world) {
			w.opCond = operatorCondition("etcd.v1", upgradeable(metav1.ConditionFalse, 1))
			w.opCond.Generation = 2
		},
		denials: []string{"OperatorConditionStale"},
	}, {
		name: "a stale Upgradeable=True also blocks until OLM catches up",
		mutate: func(w *world) {
			w.opCond.Generation = 3
		},
		denials: []string{"OperatorConditionStale"},
	}, {
		name: "Upgradeable set in spec but not yet copied to status is stale",
		mutate: func(w *world) {
			w.opCond.Spec.Conditions = []metav1.Condition{upgradeable(metav1.ConditionTrue, 1)}
			w.opCond.Status.Conditions = nil
		},
		denials: []string{"OperatorConditionStale"},
	}, {
		name: "Upgrading=True blocks",
		mutate: func(w *world) {
			w.opCond.Status.Conditions = append(w.opCond.Status.Conditions, metav1.Condition{Type: "Upgrading", Status: metav1.ConditionTrue, Reason: "Migrating", Message: "moving to v2 storage", ObservedGeneration: 1, LastTransitionTime: earlier})
		},
		denials: []string{"OperatorUpgrading"},
	}, {
		name: "Upgrading=False allows",
		mutate: func(w *world) {
			w.opCond.Status.Conditions = append(w.opCond.Status.Conditions, metav1.Condition{Type: "Upgrading", Status: metav1.ConditionFalse, Reason: "Done", Message: "upgrade done", ObservedGeneration: 1, LastTransitionTime: earlier})
		},
	}, {
		name: "the OperatorCondition of another CSV is not consulted",
		mutate: func(w *world) {
			w.opCond = operatorCondition("etcd.v0", upgradeable(metav1.ConditionFalse, 1))
		},
	}}
}

// upgradeGateOverrideScenarios: UpgradeGate overrides of the denial, and a first install.
func upgradeGateOverrideScenarios() []scenario {
	return []scenario{{
		name:       "an UpgradeGate override waives the denial and keeps it visible with the admin's reason",
		mutate:     upgradeGateOverride("OperatorNotUpgradeable", nil),
		overridden: []string{"OperatorNotUpgradeable"},
		conditions: map[string]string{"UpgradeBlocked": "False/UpgradeAllowed"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Equal(t, "CHG-1234: migration verified by the vendor", r.Decision.Denials[0].OverrideReason)
		},
	}, {
		name:       "an UpgradeGate override that has not expired yet waives the denial",
		mutate:     upgradeGateOverride("OperatorNotUpgradeable", &metav1.Time{Time: now.Add(24 * 60 * 60 * 1e9)}),
		overridden: []string{"OperatorNotUpgradeable"},
	}, {
		name:    "an expired UpgradeGate override is ignored and reported as expired",
		mutate:  upgradeGateOverride("OperatorNotUpgradeable", &earlier),
		denials: []string{"OperatorNotUpgradeable"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, r.Decision.Denials[0].Message, "expired")
		},
	}, {
		name:    "an override of another code does not waive the denial",
		mutate:  upgradeGateOverride("OperatorDegraded", nil),
		denials: []string{"OperatorNotUpgradeable"},
	}, {
		name: "a first install is allowed: there is no installed operator to ask",
		mutate: func(w *world) {
			w.sub.Status.InstalledCSV = ""
			w.sub.Status.CurrentCSV = "etcd.v2"
			w.installed = nil
			w.opCond = operatorCondition("etcd.v2", upgradeable(metav1.ConditionFalse, 1))
		},
		conditions: map[string]string{"InstalledCSVMissing": "False/NotInstalled", "InstalledCSVFailed": "False", "InstalledCSVReplacementAvailable": "False"},
		state:      "UpgradePending",
	}}
}

// Every Subscription condition type of reference/subscription-status.md in each status it can
// take, plus state and upToDate.
func TestScenariosSubscriptionConditions(t *testing.T) { run(t, subscriptionConditionScenarios()) }

func subscriptionConditionScenarios() []scenario {
	return slices.Concat(resolutionScenarios(), catalogSourceScenarios(), channelAndInstallPlanScenarios(), installedCSVScenarios())
}

// resolutionScenarios: every condition of a healthy upgrade waiting for approval, and
// ResolutionFailed as OLM reports it.
func resolutionScenarios() []scenario {
	return []scenario{{
		name: "an upgrade waiting for approval with everything healthy",
		conditions: map[string]string{
			"ResolutionFailed":                  "False",
			"CatalogSourcesUnhealthy":           "False/CatalogSourcesHealthy",
			"CatalogSourceInvalid":              "False/CatalogSourceValid",
			"PackageChannelInvalid":             "False/PackageChannelValid",
			"InstallPlanFailed":                 "False",
			"InstallPlanMissing":                "False",
			"InstallPlanAwaitingManualApproval": "True/RequiresApproval",
			"InstalledCSVReplacementAvailable":  "True",
			"InstalledCSVMissing":               "False",
			"InstalledCSVFailed":                "False",
			"UpgradeBlocked":                    "False/UpgradeAllowed",
		},
		health:   map[string]string{"Available": "True", "Progressing": "False", "Degraded": "False"},
		state:    "UpgradePending",
		upToDate: ptr(false),
		check: func(t *testing.T, r *engine.Result) {
			require.Len(t, r.CatalogStatus, 1)
			assert.Equal(t, tollgatev1alpha1.CatalogStatus{Namespace: "olm", Name: "operatorhubio", Healthy: "True", LastObservedState: "READY", Source: true, Valid: true}, r.CatalogStatus[0])
			require.Len(t, r.CatalogValidation, 1)
			assert.True(t, r.CatalogValidation[0].Valid)
		},
	}, {
		name: "ResolutionFailed=True is mirrored from OLM",
		mutate: func(w *world) {
			w.sub.Status.Conditions = []v1alpha1.SubscriptionCondition{{Type: "ResolutionFailed", Status: "True", Reason: "ConstraintsNotSatisfiable", Message: "no operators found in channel beta"}}
		},
		conditions: map[string]string{"ResolutionFailed": "True/ConstraintsNotSatisfiable"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Equal(t, "no operators found in channel beta", conditionOf(r, "ResolutionFailed").Message)
		},
	}, {
		name: "ResolutionFailed=Unknown is mirrored from OLM",
		mutate: func(w *world) {
			w.sub.Status.Conditions = []v1alpha1.SubscriptionCondition{{Type: "ResolutionFailed", Status: "Unknown", Reason: "Resolving"}}
		},
		conditions: map[string]string{"ResolutionFailed": "Unknown/Resolving"},
	}, {
		name: "ResolutionFailed=False when OLM reports it as False",
		mutate: func(w *world) {
			w.sub.Status.Conditions = []v1alpha1.SubscriptionCondition{{Type: "ResolutionFailed", Status: "False", Reason: "ResolutionSucceeded", Message: "ok"}}
		},
		conditions: map[string]string{"ResolutionFailed": "False/ResolutionSucceeded"},
	}}
}

// catalogState sets the last observed connection state of the source catalog.
func catalogState(state string) func(w *world) {
	return func(w *world) { w.catalogs[0].Status.GRPCConnectionState.LastObservedState = state }
}

// catalogSourceScenarios: CatalogSourcesUnhealthy and CatalogSourceInvalid for the source
// catalog and the other visible ones.
func catalogSourceScenarios() []scenario {
	return []scenario{{
		name: "CatalogSourcesUnhealthy=True for another visible catalog does not deny the upgrade",
		mutate: func(w *world) {
			w.catalogs = append(w.catalogs, imageCatalog("olm", "community", "TRANSIENT_FAILURE"))
		},
		conditions: map[string]string{"CatalogSourcesUnhealthy": "True/CatalogSourcesUnhealthy", "CatalogSourceInvalid": "False"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, conditionOf(r, "CatalogSourcesUnhealthy").Message, "olm/community")
			assert.Len(t, r.CatalogStatus, 2)
		},
	}, {
		name:       "CatalogSourcesUnhealthy=True for the source catalog denies",
		mutate:     catalogState("TRANSIENT_FAILURE"),
		conditions: map[string]string{"CatalogSourcesUnhealthy": "True", "UpgradeBlocked": "True/CatalogSourceUnhealthy"},
		denials:    []string{"CatalogSourceUnhealthy"},
	}, {
		name: "CatalogSourcesUnhealthy=Unknown while a visible catalog has no connection state",
		mutate: func(w *world) {
			w.catalogs = append(w.catalogs, imageCatalog(ns, "private", ""))
		},
		conditions: map[string]string{"CatalogSourcesUnhealthy": "Unknown/MissingCatalogInfo"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Equal(t, metav1.ConditionStatus("Unknown"), r.CatalogStatus[1].Healthy)
			assert.Equal(t, "private", r.CatalogStatus[1].Name)
		},
	}, {
		name:       "a source catalog of unknown health denies: fail closed",
		mutate:     func(w *world) { w.catalogs[0].Status.GRPCConnectionState = nil },
		conditions: map[string]string{"CatalogSourcesUnhealthy": "Unknown"},
		denials:    []string{"CatalogSourceUnhealthy"},
	}, {
		name:       "CatalogSourcesUnhealthy=True when the source catalog does not exist, as the denial says",
		mutate:     func(w *world) { w.catalogs = nil },
		conditions: map[string]string{"CatalogSourcesUnhealthy": "True/CatalogSourceNotFound", "CatalogSourceInvalid": "Unknown/CatalogSourceNotFound"},
		denials:    []string{"CatalogSourceUnhealthy"},
	}, {
		name: "CatalogSourceInvalid=True when the source catalog names two sources, with a message naming the fields",
		mutate: func(w *world) {
			w.catalogs[0].Spec.ConfigMapSource = &v1alpha1.ConfigMapSource{ConfigMap: "catalog"}
		},
		conditions: map[string]string{"CatalogSourceInvalid": "True/CatalogSourceSpecInvalid"},
		denials:    []string{"CatalogSourceInvalid"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, conditionOf(r, "CatalogSourceInvalid").Message, "spec.catalogImageSource")
			assert.Contains(t, conditionOf(r, "CatalogSourceInvalid").Message, "spec.configMapSource")
			require.Len(t, r.CatalogValidation, 1)
			assert.False(t, r.CatalogValidation[0].Valid)
			assert.Equal(t, "spec", r.CatalogValidation[0].Violations[0].Field)
			assert.False(t, r.CatalogStatus[0].Valid)
		},
	}, {
		name: "CatalogSourceInvalid=True when the source catalog is in a namespace the Subscription cannot see",
		mutate: func(w *world) {
			w.catalogs[0].Namespace = "elsewhere"
			w.sub.Spec.CatalogSourceNamespace = "elsewhere"
			w.pkg = nil
		},
		conditions: map[string]string{"CatalogSourceInvalid": "True/CatalogSourceNotVisible"},
		denials:    []string{"CatalogSourceInvalid"},
	}, {
		name: "a legacy grpc catalog with sourceType and image is valid",
		mutate: func(w *world) {
			w.catalogs[0].Spec.CatalogImageSource = nil
			w.catalogs[0].Spec.SourceType = v1alpha1.SourceTypeGrpc
			w.catalogs[0].Spec.Image = "quay.io/operatorhubio/catalog:latest"
		},
		conditions: map[string]string{"CatalogSourceInvalid": "False"},
	}}
}

// channelAndInstallPlanScenarios: PackageChannelInvalid and the InstallPlan conditions.
func channelAndInstallPlanScenarios() []scenario {
	return []scenario{{
		name:       "PackageChannelInvalid=True when the channel is not in the package",
		mutate:     func(w *world) { w.sub.Spec.Channel = "beta" },
		conditions: map[string]string{"PackageChannelInvalid": "True/ChannelNotFound"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, conditionOf(r, "PackageChannelInvalid").Message, "stable")
		},
	}, {
		name:       "PackageChannelInvalid=Unknown when the PackageManifest is not known",
		mutate:     func(w *world) { w.pkg = nil },
		conditions: map[string]string{"PackageChannelInvalid": "Unknown"},
	}, {
		name: "an empty channel follows the package's default channel",
		mutate: func(w *world) {
			w.sub.Spec.Channel = ""
		},
		conditions: map[string]string{"PackageChannelInvalid": "False"},
	}, {
		name: "InstallPlanFailed=True mirrors the plan's failure",
		mutate: func(w *world) {
			w.plan.Status.Phase = v1alpha1.InstallPlanPhaseFailed
			w.plan.Status.Conditions = []v1alpha1.InstallPlanCondition{{Type: "Installed", Status: "False", Reason: "InstallComponentFailed", Message: "error creating csv etcd.v2"}}
		},
		conditions: map[string]string{"InstallPlanFailed": "True/InstallComponentFailed", "InstallPlanMissing": "False", "InstallPlanAwaitingManualApproval": "False"},
		state:      "UpgradeFailed",
	}, {
		name:       "InstallPlanFailed=Unknown and InstallPlanMissing=True when the referenced plan is gone",
		mutate:     func(w *world) { w.plan = nil },
		conditions: map[string]string{"InstallPlanFailed": "Unknown", "InstallPlanMissing": "True/ReferencedInstallPlanNotFound"},
	}, {
		name: "InstallPlanMissing=False and InstallPlanFailed=False without a plan reference",
		mutate: func(w *world) {
			w.sub.Status.InstallPlanRef = nil
			w.plan = nil
		},
		conditions: map[string]string{"InstallPlanFailed": "False", "InstallPlanMissing": "False", "InstallPlanAwaitingManualApproval": "False"},
		state:      "UpgradeAvailable",
	}, {
		name: "InstallPlanAwaitingManualApproval=False for Automatic approval, with the fix in the message",
		mutate: func(w *world) {
			w.sub.Spec.InstallPlanApproval = v1alpha1.ApprovalAutomatic
			w.plan.Spec.Approval = v1alpha1.ApprovalAutomatic
			w.plan.Spec.Approved = true
			w.plan.Status.Phase = v1alpha1.InstallPlanPhaseInstalling
		},
		conditions: map[string]string{"InstallPlanAwaitingManualApproval": "False/AutomaticApproval"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, conditionOf(r, "InstallPlanAwaitingManualApproval").Message, "Manual")
		},
	}, {
		name: "Automatic approval cannot be held: a standing denial is reported, not enforced",
		mutate: func(w *world) {
			w.sub.Spec.InstallPlanApproval = v1alpha1.ApprovalAutomatic
			w.health("True", "True", "False")
		},
		denials:    []string{"OperatorProgressing"},
		conditions: map[string]string{"UpgradeBlocked": "False/AutomaticApproval"},
	}, {
		name: "InstallPlanAwaitingManualApproval=False once the plan is approved",
		mutate: func(w *world) {
			w.plan.Spec.Approved = true
			w.plan.Status.Phase = v1alpha1.InstallPlanPhaseInstalling
		},
		conditions: map[string]string{"InstallPlanAwaitingManualApproval": "False/NoApprovalPending"},
		state:      "UpgradePending",
	}}
}

// installedCSVScenarios: the installed CSV's conditions, state and upToDate.
func installedCSVScenarios() []scenario {
	return []scenario{{
		name:       "at the latest known CSV: no replacement, AtLatestKnown, up to date",
		world:      atLatest,
		conditions: map[string]string{"InstalledCSVReplacementAvailable": "False/NoReplacementAvailable", "UpgradeBlocked": "False/NoUpgradeWaiting", "InstallPlanAwaitingManualApproval": "False"},
		state:      "AtLatestKnown",
		upToDate:   ptr(true),
	}, {
		name:       "InstalledCSVReplacementAvailable=True from the channel head before OLM moves currentCSV",
		world:      atLatest,
		mutate:     func(w *world) { w.pkg = packageManifest("stable", "etcd.v3") },
		conditions: map[string]string{"InstalledCSVReplacementAvailable": "True"},
		state:      "UpgradeAvailable",
		upToDate:   ptr(false),
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, conditionOf(r, "InstalledCSVReplacementAvailable").Message, "etcd.v3")
		},
	}, {
		name:     "not AtLatestKnown while the installed CSV is still Pending (OLM says AtLatestKnown too early)",
		world:    atLatest,
		mutate:   func(w *world) { w.installed.Status.Phase = v1alpha1.CSVPhasePending },
		upToDate: ptr(false),
		state:    "UpgradePending",
	}, {
		name:       "InstalledCSVMissing=True and InstalledCSVFailed=Unknown when the installed CSV is gone",
		mutate:     func(w *world) { w.installed = nil },
		conditions: map[string]string{"InstalledCSVMissing": "True/InstalledCSVNotFound", "InstalledCSVFailed": "Unknown"},
		health:     map[string]string{"Available": "Unknown", "Progressing": "Unknown", "Degraded": "Unknown"},
		denials:    []string{"InstalledCSVMissing"},
	}, {
		name: "InstalledCSVFailed=True mirrors the CSV's failure",
		mutate: func(w *world) {
			w.installed.Status.Phase = v1alpha1.CSVPhaseFailed
			w.installed.Status.Reason = "InstallCheckFailed"
			w.installed.Status.Message = "install timeout"
		},
		conditions: map[string]string{"InstalledCSVFailed": "True/InstallCheckFailed", "InstalledCSVMissing": "False"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, conditionOf(r, "InstalledCSVFailed").Message, "install timeout")
		},
	}}
}

// OLM puts a namespace's pending installs into one plan: approving it installs them all.
func TestScenariosBundledInstallPlans(t *testing.T) { run(t, bundledInstallPlanScenarios()) }

func bundledInstallPlanScenarios() []scenario {
	// peer adds a Subscription for prometheus.v2 to the plan; upgradeable says what its own
	// operator reports.
	peer := func(upgradeable metav1.ConditionStatus) func(w *world) {
		return func(w *world) {
			w.plan.Spec.ClusterServiceVersionNames = []string{"etcd.v2", "prometheus.v2"}
			sub := upgradeWaiting().sub
			sub.Name, sub.Spec.Package = "prometheus", "prometheus"
			sub.Status.InstalledCSV, sub.Status.CurrentCSV = "prometheus.v1", "prometheus.v2"
			oc := operatorCondition("prometheus.v1", metav1.Condition{Type: "Upgradeable", Status: upgradeable, Reason: "Migrating", Message: "m", ObservedGeneration: 1, LastTransitionTime: earlier})
			w.extra = append(w.extra, sub, csv("prometheus.v1", v1alpha1.CSVPhaseSucceeded), csv("prometheus.v2", v1alpha1.CSVPhasePending), oc,
				&tollgatev1alpha1.UpgradeGate{ObjectMeta: objMeta(ns, "prometheus")})
		}
	}
	return []scenario{{
		name:    "a bundled operator whose own decision holds it blocks",
		mutate:  peer(metav1.ConditionFalse),
		denials: []string{"InstallPlanIncludesBlockedOperator"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, r.Decision.Denials[0].Message, "OperatorNotUpgradeable")
			assert.Contains(t, r.Decision.Denials[0].Message, "prometheus.v2")
		},
	}, {
		name:   "a bundled operator allowed by its own decision does not block",
		mutate: peer(metav1.ConditionTrue),
	}, {
		name: "a bundled CSV that no Subscription owns blocks",
		mutate: func(w *world) {
			w.plan.Spec.ClusterServiceVersionNames = []string{"etcd.v2", "stray.v1"}
		},
		denials: []string{"InstallPlanIncludesBlockedOperator"},
	}}
}

// The decision's own rules: modes, input version.
func TestScenariosDecision(t *testing.T) { run(t, decisionScenarios()) }

func decisionScenarios() []scenario {
	return []scenario{{
		name:       "in Audit mode an allowed upgrade is reported as never approved",
		mutate:     func(w *world) { w.gate.Spec.Mode = tollgatev1alpha1.ModeAudit },
		conditions: map[string]string{"UpgradeBlocked": "False/UpgradeAllowed"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Contains(t, conditionOf(r, "UpgradeBlocked").Message, "never approves")
		},
	}, {
		name:    "an input document of another version is refused",
		doc:     func(doc map[string]any) { doc["apiVersion"] = "tollgate.dev/input/v0" },
		denials: []string{"PolicyError"},
	}, {
		name:    "no gate yet: the decision is still made",
		mutate:  func(w *world) { w.gate = nil },
		denials: nil,
	}, {
		name: "several denials stand together, sorted by code",
		mutate: func(w *world) {
			w.health("True", "True", "True")
			w.opCond = operatorCondition("etcd.v1", metav1.Condition{Type: "Upgradeable", Status: metav1.ConditionFalse, Reason: "Migrating", Message: "m", ObservedGeneration: 1, LastTransitionTime: earlier})
			w.catalogs[0].Status.GRPCConnectionState.LastObservedState = "CONNECTING"
		},
		denials: []string{"CatalogSourceUnhealthy", "OperatorDegraded", "OperatorNotUpgradeable", "OperatorProgressing"},
		check: func(t *testing.T, r *engine.Result) {
			assert.Equal(t, "CatalogSourceUnhealthy", r.Decision.BlockedBy())
		},
	}}
}

// conditionOf is the condition of type t among r's conditions and health, or nil.
func conditionOf(r *engine.Result, t string) *engine.Condition {
	for _, list := range [][]engine.Condition{r.Conditions, r.Health} {
		for i := range list {
			if list[i].Type == t {
				return &list[i]
			}
		}
	}
	return nil
}

// A PolicyError main reports about another package's malformed deny names no rule: main's
// own PolicyError rules are about other things, and naming one would send the admin there.
func TestAPolicyErrorAboutAPackageNamesNoOtherRule(t *testing.T) {
	e, err := engine.New(context.Background(), engine.Options{Modules: []engine.Module{{
		Path: "admin/bad.rego", Source: "package tollgate.bad\n\ndeny := \"hold everything\"\n"}}})
	require.NoError(t, err)
	r := e.Evaluate(context.Background(), upgradeWaiting().input(t))
	require.False(t, r.Decision.Allowed)
	var found bool
	for _, d := range r.Decision.Denials {
		if d.Code == "PolicyError" && strings.Contains(d.Message, "tollgate.bad") {
			found = true
			assert.NotContains(t, d.Source, "main/main.rego", "the source is not one of main's unrelated rules")
		}
	}
	assert.True(t, found, "main reports the malformed deny: %+v", r.Decision.Denials)
}
