// Package printers writes what Tollgate shows a person: aligned tables and wrapped text.
package printers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table writes aligned columns, each row indented by two spaces; an empty cell prints "-".
type Table struct {
	tw *tabwriter.Writer
}

// NewTable starts a table on w with an optional header row.
func NewTable(w io.Writer, header ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.Row(header...)
	}
	return t
}

// Row adds one row.
func (t *Table) Row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, "  "+strings.Join(cells, "\t"))
}

// Flush writes the table.
func (t *Table) Flush() error { return t.tw.Flush() }

// Plural is "1 thing" or "n things".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Wrap breaks text into lines of at most width runes at spaces, each line after the first
// prefixed with indent.
func Wrap(text string, width int, indent string) string {
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
