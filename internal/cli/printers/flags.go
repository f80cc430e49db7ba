package printers

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// PrintFlags are kubectl's -o (with --template and --allow-missing-template-keys) and, for
// commands that print tables, --no-headers. The command's own formats come first: its human
// renderer (table and wide, or text), json and yaml in the documented shape of its report,
// and name (the objects the report is about). jsonpath and go-template are cli-runtime's
// printers over the same JSON document -o json prints.
type PrintFlags struct {
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

// ErrNoNames is -o name for a report about no objects.
var ErrNoNames = errors.New("-o name: this command's output names no objects; use -o json or -o jsonpath=TEMPLATE")

// Printable is what a command prints, in each format.
type Printable struct {
	Doc   any                                 // json, yaml, jsonpath, go-template
	Human func(io.Writer, TableOptions) error // table, wide or text
	Names func() []Ref                        // name
	// Encode, when set, writes json and yaml instead of doc's default encoding.
	Encode func(w io.Writer, format string) error
}

// NewPrintFlags offers formats (the first is the default); "wide" makes the human format
// tables, which adds --no-headers.
func NewPrintFlags(formats ...string) *PrintFlags {
	return &PrintFlags{formats: formats, tables: slices.Contains(formats, "wide"), templates: genericclioptions.NewKubeTemplatePrintFlags()}
}

// WithTables names the tables of a human format that prints several, which adds --only.
func (f *PrintFlags) WithTables(names ...string) *PrintFlags {
	f.tableNames = names
	return f
}

// AddFlags adds -o, the template flags, and --no-headers and --only where they apply.
func (f *PrintFlags) AddFlags(cmd *cobra.Command) {
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

// Format is the format asked for: --template alone means go-template, as in kubectl.
func (f *PrintFlags) Format() string {
	if t := f.templates.TemplateArgument; t != nil && *t != "" && !f.outputSet() {
		return "go-template"
	}
	return f.format
}

// Validate checks -o and --only before anything is read, so a typo fails fast.
func (f *PrintFlags) Validate() error {
	format := f.Format()
	if slices.Contains(f.formats, format) {
		return f.checkTables(format)
	}
	if _, err := f.templates.ToPrinter(format); !genericclioptions.IsNoCompatiblePrinterError(err) {
		return err // nil, or a template that does not parse
	}
	return fmt.Errorf("unknown output format -o %q: use one of %s, jsonpath=TEMPLATE or go-template=TEMPLATE", format, strings.Join(f.formats, ", "))
}

// tableCounts spells how many tables a report prints.
var tableCounts = []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight"}

// checkTables refuses --no-headers over several tables, whose rows would run together under
// different columns, and an --only that names no table or goes with a format without tables.
func (f *PrintFlags) checkTables(format string) error {
	tables := format == "table" || format == "wide"
	switch {
	case f.only != "" && len(f.tableNames) < 2:
		return fmt.Errorf("--only picks one of several tables, and %s prints one: leave --only out", f.commandName())
	case f.only != "" && !slices.Contains(f.tableNames, f.only):
		return fmt.Errorf("unknown --only %q: use one of %s", f.only, strings.Join(f.tableNames, ", "))
	case f.only != "" && !tables:
		return fmt.Errorf("--only picks a table of -o table or -o wide, not of -o %s", format)
	case f.noHeaders && f.only == "" && tables && len(f.tableNames) > 1:
		return fmt.Errorf("--no-headers prints rows only, and %s prints %s tables with different columns: pick one with --only %s",
			f.commandName(), tableCounts[min(len(f.tableNames), len(tableCounts)-1)], strings.Join(f.tableNames, "|"))
	}
	return nil
}

// commandName is the command as a person types it after the program's name ("policy diff").
func (f *PrintFlags) commandName() string {
	return strings.TrimPrefix(f.command.CommandPath(), f.command.Root().Name()+" ")
}

// template says whether format is one of cli-runtime's template formats.
func (f *PrintFlags) template(format string) bool {
	_, err := f.templates.ToPrinter(format)
	return !genericclioptions.IsNoCompatiblePrinterError(err)
}

// Print writes p in the format asked for.
func (f *PrintFlags) Print(w io.Writer, p Printable) error {
	switch format := f.Format(); {
	case (format == "json" || format == "yaml") && p.Encode != nil:
		return p.Encode(w, format)
	case format == "json":
		return WriteJSON(w, p.Doc)
	case format == "yaml":
		return WriteYAML(w, p.Doc)
	case format == "name" && p.Names == nil:
		return ErrNoNames
	case format == "name":
		return WriteNames(w, p.Names())
	case f.template(format):
		tp, err := f.templates.ToPrinter(format)
		if err != nil {
			return err
		}
		return Template(w, tp, p.Doc)
	default:
		return p.Human(w, TableOptions{NoHeaders: f.noHeaders, Wide: format == "wide", Only: f.only})
	}
}
