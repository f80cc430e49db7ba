package printers_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/tollgate-dev/tollgate/internal/cli/printers"
)

type report struct {
	Summary struct {
		Blocked int `json:"blocked"`
	} `json:"summary"`
	Items  []item `json:"items"`
	hidden string
}

type item struct {
	Name    string  `json:"name"`
	Allowed bool    `json:"allowed"`
	Score   float64 `json:"score"`
}

func fixture() report {
	r := report{Items: []item{{Name: "etcd", Score: 0.5}, {Name: "prometheus", Allowed: true, Score: 2}}, hidden: "not in the document"}
	r.Summary.Blocked = 1
	return r
}

func TestDocumentIsTheJSONForm(t *testing.T) {
	doc, err := printers.Document(fixture())
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"summary": map[string]any{"blocked": int64(1)},
		"items": []any{
			map[string]any{"name": "etcd", "allowed": false, "score": 0.5},
			map[string]any{"name": "prometheus", "allowed": true, "score": int64(2)},
		},
	}, doc.Object, "whole numbers are int64, as in objects read from the API server")
}

func TestTemplatesReadTheJSONForm(t *testing.T) {
	tests := []struct {
		name, output, want string
	}{
		{"a jsonpath over a nested field", "jsonpath={.summary.blocked}", "1"},
		{"a jsonpath over a list", "jsonpath={.items[*].name}", "etcd prometheus"},
		{"a jsonpath with a filter", `jsonpath={.items[?(@.allowed==true)].name}`, "prometheus"},
		{"jsonpath-as-json", "jsonpath-as-json={.items[0].score}", "[\n    0.5\n]\n"},
		{"a go-template", `go-template={{range .items}}{{.name}}={{.allowed}} {{end}}`, "etcd=false prometheus=true "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := genericclioptions.NewKubeTemplatePrintFlags().ToPrinter(tt.output)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, printers.Template(&buf, p, fixture()))
			assert.Equal(t, tt.want, buf.String())
		})
	}
}

func TestWriteNamesAsKubectl(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, printers.WriteNames(&buf, []printers.Ref{
		{GroupKind: schema.GroupKind{Group: "operators.coreos.com", Kind: "Subscription"}, Name: "etcd"},
		{GroupKind: schema.GroupKind{Kind: "ConfigMap"}, Name: "freeze"},
	}))
	assert.Equal(t, "subscription.operators.coreos.com/etcd\nconfigmap/freeze\n", buf.String())
}

func TestWriteJSONAndYAML(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, printers.WriteJSON(&buf, map[string]int{"a": 1}))
	assert.Equal(t, "{\n  \"a\": 1\n}\n", buf.String())
	buf.Reset()
	require.NoError(t, printers.WriteYAML(&buf, fixture()))
	assert.Equal(t, "items:\n- allowed: false\n  name: etcd\n  score: 0.5\n- allowed: true\n  name: prometheus\n  score: 2\nsummary:\n  blocked: 1\n", buf.String())
}

func TestTableOptions(t *testing.T) {
	render := func(o printers.TableOptions) string {
		var buf bytes.Buffer
		o.Title(&buf, "ITEMS (%d)\n", 2)
		tb := o.NewTable(&buf, o.Columns([]string{"NAME", "ALLOWED"}, "SCORE")...)
		tb.Row(o.Columns([]string{"etcd", "no"}, "0.5")...)
		tb.Row(o.Columns([]string{"prometheus", ""}, "2")...)
		require.NoError(t, tb.Flush())
		return buf.String()
	}
	tests := []struct {
		name string
		opts printers.TableOptions
		want string
	}{
		{"the default: title, header, indented rows", printers.TableOptions{},
			"ITEMS (2)\n  NAME        ALLOWED\n  etcd        no\n  prometheus  -\n"},
		{"wide adds the wide columns", printers.TableOptions{Wide: true},
			"ITEMS (2)\n  NAME        ALLOWED  SCORE\n  etcd        no       0.5\n  prometheus  -        2\n"},
		{"no headers leaves the rows only, unindented", printers.TableOptions{NoHeaders: true},
			"etcd        no\nprometheus  -\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, render(tt.opts))
		})
	}
}

func TestTableOptionsOnlyPicksOneTable(t *testing.T) {
	all := printers.TableOptions{}
	assert.True(t, all.Shows("plans"))
	assert.True(t, all.Whole())
	plans := printers.TableOptions{Only: "plans"}
	assert.True(t, plans.Shows("plans"))
	assert.False(t, plans.Shows("catalogs"))
	assert.False(t, plans.Whole(), "one table picked: no heading or summary about the whole report")
}

func TestRefsNameEveryItem(t *testing.T) {
	gk := schema.GroupKind{Group: "operators.coreos.com", Kind: "Subscription"}
	refs := printers.Refs(gk, []string{"etcd", "prometheus"}, func(s string) string { return s })()
	assert.Equal(t, []printers.Ref{{GroupKind: gk, Name: "etcd"}, {GroupKind: gk, Name: "prometheus"}}, refs)
	assert.Empty(t, printers.Refs(gk, []string(nil), func(s string) string { return s })())
}
