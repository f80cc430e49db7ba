// Package printers writes what Tollgate shows a person: aligned tables, wrapped text, text
// from the cluster escaped for a terminal (Escape), and commands quoted for a shell (Command).
package printers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Table writes aligned columns, each row indented by two spaces; an empty cell prints "-".
// Cells are escaped (Escape), so a tab or a control character in a cell cannot break the
// columns or reach the terminal.
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
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = Escape(c)
		if c == "" {
			out[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, "  "+strings.Join(out, "\t"))
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
// prefixed with indent. The words are escaped (Escape); the line breaks are Wrap's own.
func Wrap(text string, width int, indent string) string {
	words := strings.Fields(text)
	var b strings.Builder
	line := 0
	for i, w := range words {
		w = Escape(w)
		n := utf8.RuneCountInString(w)
		if i > 0 {
			if line+1+n > width {
				b.WriteString("\n" + indent)
				line = 0
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(w)
		line += n
	}
	return b.String()
}
