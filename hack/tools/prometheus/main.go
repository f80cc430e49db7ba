// Command promcheck runs Prometheus' own parsers on what Tollgate ships for Prometheus: every
// PrometheusRule's groups through rulefmt (as promtool check rules does: the expressions, the
// "for" durations, the label and annotation templates), and every query of a Grafana dashboard
// through the PromQL parser, with Grafana's variables replaced by values of their kind.
//
//	promcheck -rules config/prometheus/prometheus_rule.yaml -dashboard config/grafana/tollgate-dashboard.json
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

func main() {
	var rules, dashboards multi
	flag.Var(&rules, "rules", "a PrometheusRule manifest (repeatable)")
	flag.Var(&dashboards, "dashboard", "a Grafana dashboard JSON (repeatable)")
	flag.Parse()
	var errs []error
	for _, f := range rules {
		n, err := checkRules(f)
		fmt.Printf("%s: %d rules\n", f, n)
		errs = append(errs, err)
	}
	for _, f := range dashboards {
		n, err := checkDashboard(f)
		fmt.Printf("%s: %d queries\n", f, n)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

var promql = parser.NewParser(parser.Options{})

// checkRules parses the spec of a PrometheusRule as a Prometheus rule file: the Prometheus
// Operator hands Prometheus exactly its groups.
func checkRules(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var manifest struct {
		Kind string    `yaml:"kind"`
		Spec yaml.Node `yaml:"spec"`
	}
	if err := yaml.Unmarshal(raw, &manifest); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if manifest.Kind != "PrometheusRule" {
		return 0, fmt.Errorf("%s: kind %q, not PrometheusRule", path, manifest.Kind)
	}
	spec, err := yaml.Marshal(&manifest.Spec)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	groups, errs := rulefmt.Parse(spec, false, model.UTF8Validation, promql, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return 0, fmt.Errorf("%s: %w", path, errors.Join(errs...))
	}
	n := 0
	for _, g := range groups.Groups {
		n += len(g.Rules)
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no rules", path)
	}
	return n, nil
}

// variables are Grafana's variables, replaced by a value of their kind before parsing.
var variables = strings.NewReplacer(
	"$__rate_interval", "1m", "${__rate_interval}", "1m",
	"$__interval", "1m", "${__interval}", "1m",
	"$__range", "1h", "${__range}", "1h",
)

var (
	userVariable = regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`)
	labelValues  = regexp.MustCompile(`^label_values\((.+),\s*[A-Za-z_][A-Za-z0-9_]*\)$`)
)

// checkDashboard parses every panel query and every query variable's selector.
func checkDashboard(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var dashboard struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dashboard); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	var errs []error
	n := 0
	check := func(where, expr string) {
		n++
		// A user variable stands for a label value inside quotes, the only place the
		// dashboard uses one.
		q := userVariable.ReplaceAllString(variables.Replace(expr), "value")
		if _, err := promql.ParseExpr(q); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %q: %w", path, where, expr, err))
		}
	}
	for _, p := range dashboard.Panels {
		for _, t := range p.Targets {
			check(fmt.Sprintf("panel %q query %s", p.Title, t.RefID), t.Expr)
		}
	}
	for _, v := range dashboard.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			errs = append(errs, fmt.Errorf("%s: variable %s: %q is not label_values(selector, label)", path, v.Name, v.Definition))
			continue
		}
		check("variable "+v.Name, m[1])
	}
	return n, errors.Join(errs...)
}
