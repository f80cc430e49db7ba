package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/controllers/gather"
)

func checkOutput(got string, allowed ...string) error {
	if slices.Contains(allowed, got) {
		return nil
	}
	return fmt.Errorf("unknown output format -o %q: use one of %s", got, strings.Join(allowed, ", "))
}

func parseNow(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid --now %q: use an RFC 3339 time such as 2026-11-20T12:00:00Z", s)
	}
	return t.UTC(), nil
}

func parseMode(s string) (tollgatev1alpha1.Mode, error) {
	m := tollgatev1alpha1.Mode(s)
	if m != tollgatev1alpha1.ModeEnforce && m != tollgatev1alpha1.ModeAudit {
		return "", fmt.Errorf("invalid --default-mode %q: use Enforce or Audit", s)
	}
	return m, nil
}

// decisionFlags are the manager's settings that change a decision, for the commands that
// decide without it (eval, explain).
type decisionFlags struct {
	globalNS    string
	now         string
	defaultMode string
}

func (f *decisionFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.globalNS, "global-catalog-namespace", "olm", "namespace whose CatalogSources every Subscription can use, as the manager's flag")
	cmd.Flags().StringVar(&f.now, "now", "", "evaluate as if at this RFC 3339 time, e.g. 2026-11-20T12:00:00Z (default: the current time)")
	cmd.Flags().StringVar(&f.defaultMode, "default-mode", string(tollgatev1alpha1.ModeEnforce), "mode of gates whose spec.mode is empty, as the manager's flag: Enforce or Audit (Audit never approves)")
}

// parse checks the flags and returns the clock, the gather configuration and the default mode.
func (f *decisionFlags) parse() (time.Time, gather.Config, tollgatev1alpha1.Mode, error) {
	now, err := parseNow(f.now)
	if err != nil {
		return time.Time{}, gather.Config{}, "", err
	}
	mode, err := parseMode(f.defaultMode)
	if err != nil {
		return time.Time{}, gather.Config{}, "", err
	}
	return now, gather.Config{GlobalCatalogNamespace: f.globalNS, DefaultMode: string(mode)}, mode, nil
}

// toMap renders a typed object as plain JSON data.
func toMap(obj any) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// writeReport prints v as indented JSON, YAML, or with the table renderer.
func writeReport[T any](w io.Writer, format string, v T, table func(io.Writer, T) error) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	default:
		return table(w, v)
	}
}

// table writes aligned columns; rows are tab-separated cells.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, "  "+strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// plural is "1 thing" or "n things".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// wrap breaks text into lines of at most width runes at spaces, each line after the first
// prefixed with indent.
func wrap(text string, width int, indent string) string {
	words := strings.Fields(text)
	var b strings.Builder
	line := 0
	for i, w := range words {
		if i > 0 {
			if line+1+len(w) > width {
				b.WriteString("\n" + indent)
				line = 0
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}
