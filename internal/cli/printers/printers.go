// Package printers writes what Tollgate shows a person: aligned tables (with kubectl's
// --no-headers and -o wide, TableOptions), their cells escaped by package text; and what it
// shows a program: a report as JSON or YAML, as the document cli-runtime's jsonpath and
// go-template printers read (Document, Template), and as kubectl's -o name lines (WriteNames).
package printers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tollgate-dev/tollgate/internal/text"
)

// Table writes aligned columns, each row indented by two spaces; an empty cell prints "-".
// Cells are escaped (text.Escape), so a tab or a control character in a cell cannot break the
// columns or reach the terminal.
type Table struct {
	tw     *tabwriter.Writer
	indent string
}

// NewTable starts a table on w with an optional header row.
func NewTable(w io.Writer, header ...string) *Table {
	return TableOptions{}.NewTable(w, header...)
}

// TableOptions are kubectl's choices for a human table: --no-headers and -o wide, and for a
// report of several tables the one to print (--only).
type TableOptions struct {
	// NoHeaders leaves out the header rows, the titles and the summary lines, and the rows'
	// indent: only the rows are printed, for scripts (awk, cut, wc -l).
	NoHeaders bool
	// Wide adds the columns a command keeps for -o wide.
	Wide bool
	// Only, when not empty, names the one table of the report to print; the report's other
	// tables and its lines about the whole are left out.
	Only string
}

// Shows says whether the report prints its table named table: every table, or the one Only
// names.
func (o TableOptions) Shows(table string) bool {
	return o.Only == "" || o.Only == table
}

// Gap is the blank line before a table's title within the whole report; none before the one
// table picked.
func (o TableOptions) Gap() string {
	if o.Whole() {
		return "\n"
	}
	return ""
}

// Whole says whether the report prints what is about all of it (its heading, its summary):
// not when one table is picked.
func (o TableOptions) Whole() bool {
	return o.Only == ""
}

// NewTable starts a table on w, with the header row unless o.NoHeaders.
func (o TableOptions) NewTable(w io.Writer, header ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0), indent: "  "}
	if o.NoHeaders {
		t.indent, header = "", nil
	}
	if len(header) > 0 {
		t.Row(header...)
	}
	return t
}

// Title writes a line that is not a row (a title, a summary) unless o.NoHeaders.
func (o TableOptions) Title(w io.Writer, format string, args ...any) {
	if !o.NoHeaders {
		fmt.Fprintf(w, format, args...)
	}
}

// Columns is cells, plus wide when o.Wide.
func (o TableOptions) Columns(cells []string, wide ...string) []string {
	if o.Wide {
		return append(cells, wide...)
	}
	return cells
}

// Row adds one row.
func (t *Table) Row(cells ...string) {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = text.Escape(c)
		if c == "" {
			out[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, t.indent+strings.Join(out, "\t"))
}

// Flush writes the table.
func (t *Table) Flush() error { return t.tw.Flush() }
