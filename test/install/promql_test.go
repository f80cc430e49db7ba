package install

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	_ "github.com/tollgate-dev/tollgate/controllers"                  // registers tollgate_* and controller-runtime's metrics
	_ "github.com/tollgate-dev/tollgate/internal/decide/policysource" // registers tollgate_policy_source_failing
	"github.com/tollgate-dev/tollgate/test/framework/repo"
)

// promqlWords are the PromQL keywords and aggregation modifiers that look like metric names.
var promqlWords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"bool": true, "and": true, "or": true, "unless": true, "offset": true, "inf": true, "nan": true,
}

var (
	quoted    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	braces    = regexp.MustCompile(`\{[^}]*\}`)
	brackets  = regexp.MustCompile(`\[[^\]]*\]`)
	grouping  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	ident     = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	afterName = regexp.MustCompile(`^\s*\(`)
)

// metricNames returns the metric names expr selects: identifiers that are not functions
// (followed by "("), keywords, label names (in {...} or a by/without/on/ignoring list),
// strings, durations ([...]), numbers or Grafana variables ($name).
func metricNames(expr string) []string {
	s := quoted.ReplaceAllString(expr, `""`)
	s = braces.ReplaceAllString(s, "{}")
	s = brackets.ReplaceAllString(s, "[]")
	s = grouping.ReplaceAllString(s, " ")
	var names []string
	for _, loc := range ident.FindAllStringIndex(s, -1) {
		name, before := s[loc[0]:loc[1]], byte(' ')
		if loc[0] > 0 {
			before = s[loc[0]-1]
		}
		switch {
		case before == '$' || before == '.' || (before >= '0' && before <= '9'): // a variable or a number
		case promqlWords[strings.ToLower(name)]:
		case afterName.MatchString(s[loc[1]:]): // a function call
		default:
			names = append(names, name)
		}
	}
	return names
}

func TestMetricNames(t *testing.T) {
	tests := map[string]struct {
		expr string
		want []string
	}{
		"a selector with labels":       {`leader_election_master_status{name="x"} == 0`, []string{"leader_election_master_status"}},
		"functions and aggregations":   {`sum by (step) (rate(tollgate_reconcile_errors_total[10m])) > 0`, []string{"tollgate_reconcile_errors_total"}},
		"a histogram quantile":         {`histogram_quantile(0.99, sum by (le) (rate(a_bucket[$__rate_interval])))`, []string{"a_bucket"}},
		"binary operators and vectors": {`(sum(a) or vector(0)) / on (x) group_left b unless c`, []string{"a", "b", "c"}},
		"numbers with exponents":       {`a > 1e3`, []string{"a"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, metricNames(tc.expr))
		})
	}
}

// registered says whether name is a metric that Tollgate's manager exports: a collector with
// that name is registered in controller-runtime's registry (series of a histogram end in
// _bucket, _sum or _count; the type is not checked). Registering a probe of the same name fails exactly when one is,
// which also finds vectors that have no series yet (and so do not show in Gather).
func registered(name string) bool {
	candidates := []string{name}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			candidates = append(candidates, base)
		}
	}
	for _, c := range candidates {
		probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: c, Help: "probe of test/install"})
		err := metrics.Registry.Register(probe)
		if err == nil {
			metrics.Registry.Unregister(probe)
			continue
		}
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) || strings.Contains(err.Error(), `"`+c+`"`) {
			return true
		}
	}
	return false
}

func TestRegisteredFindsVectorsWithoutSeries(t *testing.T) {
	assert.True(t, registered("tollgate_blocked_subscriptions"), "a gauge vector with no series yet")
	assert.True(t, registered("tollgate_evaluation_duration_seconds_bucket"), "a histogram's buckets")
	assert.True(t, registered("leader_election_master_status"), "controller-runtime's leader gauge")
	assert.True(t, registered("controller_runtime_reconcile_total"), "controller-runtime's reconcile counter")
	assert.False(t, registered("tollgate_no_such_metric"))
	assert.False(t, registered("up"), "Prometheus's own series are not exported by Tollgate")
}

// exprs returns every PromQL expression of the dashboard and the alerts, keyed by where it is.
func exprs(t *testing.T) map[string]string {
	t.Helper()
	root := repo.Root()
	out := map[string]string{}

	raw, err := os.ReadFile(filepath.Join(root, "config", "grafana", "tollgate-dashboard.json"))
	require.NoError(t, err)
	var dashboard struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &dashboard))
	require.NotEmpty(t, dashboard.Panels)
	for _, p := range dashboard.Panels {
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, target := range p.Targets {
			out["dashboard panel "+p.Title+" "+target.RefID] = target.Expr
		}
	}

	raw, err = os.ReadFile(filepath.Join(root, "config", "prometheus", "prometheus_rule.yaml"))
	require.NoError(t, err)
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &rule))
	require.NotEmpty(t, rule.Spec.Groups)
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			out["alert "+r.Alert] = r.Expr
		}
	}
	return out
}

func TestDashboardAndAlertsUseOnlyExportedMetrics(t *testing.T) {
	var used []string
	for where, expr := range exprs(t) {
		names := metricNames(expr)
		assert.NotEmpty(t, names, "%s: %q selects no metric", where, expr)
		for _, name := range names {
			assert.True(t, registered(name), "%s: %q uses %s, which Tollgate does not export", where, expr, name)
			used = append(used, name)
		}
	}
	sort.Strings(used)
	t.Logf("metrics used: %v", used)
}

// What the manager says on a gate when it may not read an operand kind (health Unknown, reason
// OperandsUnreadable) also pages: an alert watches the metric that counts those kinds.
func TestAnAlertWatchesUnreadableOperandKinds(t *testing.T) {
	require.True(t, registered("tollgate_unreadable_operand_kinds"))
	expr, ok := exprs(t)["alert TollgateOperandKindUnreadable"]
	require.True(t, ok, "config/prometheus has the alert")
	assert.Equal(t, []string{"tollgate_unreadable_operand_kinds"}, metricNames(expr))
}

// Every operator built on controller-runtime exports controller_runtime_*, workqueue_*,
// leader_election_* and process_* under the same names: the dashboard's panels on them keep to
// Tollgate's scrape job (the dashboard's job variable), or another operator's figures mix in.
func TestDashboardKeepsSharedMetricsToTollgatesJob(t *testing.T) {
	raw, err := os.ReadFile(repo.Path("config", "grafana", "tollgate-dashboard.json"))
	require.NoError(t, err)
	var dashboard struct {
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &dashboard))
	var job string
	for _, v := range dashboard.Templating.List {
		if v.Name == "job" {
			job = v.Definition
			assert.Equal(t, "query", v.Type)
		}
	}
	require.NotEmpty(t, job, "the dashboard has a job variable")
	assert.Regexp(t, `^label_values\(tollgate_[a-z_]+, job\)$`, job, "the job variable offers the jobs that export a Tollgate metric")

	shared := 0
	for where, expr := range exprs(t) {
		if !strings.HasPrefix(where, "dashboard ") {
			continue
		}
		for _, name := range metricNames(expr) {
			if strings.HasPrefix(name, "tollgate_") {
				continue
			}
			shared++
			uses := regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b(\{[^}]*\})?`).FindAllStringSubmatch(expr, -1)
			for _, use := range uses {
				assert.Contains(t, use[1], `job="$job"`, "%s: %s selects %s of every job", where, expr, name)
			}
		}
	}
	assert.Positive(t, shared, "the dashboard shows controller-runtime's metrics")
}
