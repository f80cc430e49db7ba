package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/tollgate-dev/tollgate/apis/operators/v1alpha1"
	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/input"
	"github.com/tollgate-dev/tollgate/printers"
)

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
	cmd.Flags().StringVar(&f.globalNS, "global-catalog-namespace", input.DefaultGlobalCatalogNamespace, "namespace whose CatalogSources every Subscription can use, as the manager's flag")
	cmd.Flags().StringVar(&f.now, "now", "", "evaluate as if at this RFC 3339 time, e.g. 2026-11-20T12:00:00Z (default: the current time)")
	cmd.Flags().StringVar(&f.defaultMode, "default-mode", string(tollgatev1alpha1.DefaultMode), "mode of gates whose spec.mode is empty, as the manager's flag: Enforce or Audit (Audit never approves)")
}

// parse checks the flags and returns the clock and the input configuration.
func (f *decisionFlags) parse() (time.Time, input.Config, error) {
	now, err := parseNow(f.now)
	if err != nil {
		return time.Time{}, input.Config{}, err
	}
	mode, err := parseMode(f.defaultMode)
	if err != nil {
		return time.Time{}, input.Config{}, err
	}
	return now, input.Config{GlobalCatalogNamespace: f.globalNS, DefaultMode: mode}, nil
}

// The kinds -o name names.
var (
	subscriptionKind = v1alpha1.GroupVersion.WithKind("Subscription").GroupKind()
	upgradeGateKind  = tollgatev1alpha1.GroupVersion.WithKind("UpgradeGate").GroupKind()
)

// outputFlags are kubectl's -o (with --template and --allow-missing-template-keys) and, for
// commands that print tables, --no-headers. The command's own formats come first: its human
// renderer (table and wide, or text), json and yaml in the documented shape of its report,
// and name (the objects the report is about). jsonpath and go-template are cli-runtime's
// printers over the same JSON document -o json prints.
type outputFlags struct {
	format    string
	formats   []string // the command's own formats, the default first
	tables    bool     // the human format is tables: -o wide and --no-headers apply
	noHeaders bool
	// tableNames are the tables of a report that prints several (--only picks one); only is
	// the one picked, and command the command, named in errors.
	tableNames []string
	only       string
	command    *cobra.Command
	templates  *genericclioptions.KubeTemplatePrintFlags
	outputSet  func() bool
}

var errNoNames = errors.New("-o name: this command's output names no objects; use -o json or -o jsonpath=TEMPLATE")

// printable is what a command prints, in each format.
type printable struct {
	doc   any                                          // json, yaml, jsonpath, go-template
	human func(io.Writer, printers.TableOptions) error // table, wide or text
	names func() []printers.Ref                        // name
	// encode, when set, writes json and yaml instead of doc's default encoding.
	encode func(w io.Writer, format string) error
}

// newOutputFlags offers formats (the first is the default); "wide" makes the human format
// tables, which adds --no-headers.
func newOutputFlags(formats ...string) *outputFlags {
	return &outputFlags{formats: formats, tables: slices.Contains(formats, "wide"), templates: genericclioptions.NewKubeTemplatePrintFlags()}
}

// withTables names the tables of a human format that prints several, which adds --only.
func (f *outputFlags) withTables(names ...string) *outputFlags {
	f.tableNames = names
	return f
}

func (f *outputFlags) bind(cmd *cobra.Command) {
	f.command = cmd
	usage := fmt.Sprintf("output format: %s, or jsonpath=TEMPLATE, jsonpath-as-json=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE, go-template-file=FILE (over the -o json document)", strings.Join(f.formats, ", "))
	cmd.Flags().StringVarP(&f.format, "output", "o", f.formats[0], usage)
	f.outputSet = func() bool { return cmd.Flags().Changed("output") }
	f.templates.AddFlags(cmd)
	if f.tables {
		cmd.Flags().BoolVar(&f.noHeaders, "no-headers", false, "print the table rows only: no header rows, titles or summary lines")
	}
	if len(f.tableNames) > 1 {
		cmd.Flags().StringVar(&f.only, "only", "", "print one table of -o table or wide: "+strings.Join(f.tableNames, ", ")+" (with --no-headers, which needs one)")
		_ = cmd.RegisterFlagCompletionFunc("only", cobra.FixedCompletions(f.tableNames, cobra.ShellCompDirectiveNoFileComp))
	}
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append(slices.Clone(f.formats), "jsonpath=", "jsonpath-as-json=", "go-template="), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// effective is the format asked for: --template alone means go-template, as in kubectl.
func (f *outputFlags) effective() string {
	if t := f.templates.TemplateArgument; t != nil && *t != "" && !f.outputSet() {
		return "go-template"
	}
	return f.format
}

// validate checks -o and --only before anything is read, so a typo fails fast.
func (f *outputFlags) validate() error {
	format := f.effective()
	if slices.Contains(f.formats, format) {
		return f.checkTables(format)
	}
	if _, err := f.templates.ToPrinter(format); !genericclioptions.IsNoCompatiblePrinterError(err) {
		return err // nil, or a template that does not parse
	}
	return fmt.Errorf("unknown output format -o %q: use one of %s, jsonpath=TEMPLATE or go-template=TEMPLATE", format, strings.Join(f.formats, ", "))
}

// tableCounts spells how many tables a report prints.
var tableCounts = []string{"no", "one", "two", "three", "four", "five"}

// checkTables refuses --no-headers over several tables, whose rows would run together under
// different columns, and an --only that names no table or goes with a format without tables.
func (f *outputFlags) checkTables(format string) error {
	tables := format == "table" || format == "wide"
	switch {
	case f.only != "" && !slices.Contains(f.tableNames, f.only):
		return fmt.Errorf("unknown --only %q: use one of %s", f.only, strings.Join(f.tableNames, ", "))
	case f.only != "" && !tables:
		return fmt.Errorf("--only picks a table of -o table or -o wide, not of -o %s", format)
	case f.noHeaders && f.only == "" && tables && len(f.tableNames) > 1:
		return fmt.Errorf("--no-headers prints rows only, and %s prints %s tables with different columns: pick one with --only %s",
			strings.TrimPrefix(f.command.CommandPath(), f.command.Root().Name()+" "), tableCounts[min(len(f.tableNames), len(tableCounts)-1)], strings.Join(f.tableNames, "|"))
	}
	return nil
}

// template says whether format is one of cli-runtime's template formats.
func (f *outputFlags) template(format string) bool {
	_, err := f.templates.ToPrinter(format)
	return !genericclioptions.IsNoCompatiblePrinterError(err)
}

// print writes p in the format asked for.
func (f *outputFlags) print(w io.Writer, p printable) error {
	switch format := f.effective(); {
	case (format == "json" || format == "yaml") && p.encode != nil:
		return p.encode(w, format)
	case format == "json":
		return printers.WriteJSON(w, p.doc)
	case format == "yaml":
		return printers.WriteYAML(w, p.doc)
	case format == "name" && p.names == nil:
		return errNoNames
	case format == "name":
		return printers.WriteNames(w, p.names())
	case f.template(format):
		tp, err := f.templates.ToPrinter(format)
		if err != nil {
			return err
		}
		return printers.Template(w, tp, p.doc)
	default:
		return p.human(w, printers.TableOptions{NoHeaders: f.noHeaders, Wide: format == "wide", Only: f.only})
	}
}
