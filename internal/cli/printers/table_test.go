package printers_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// TestTableEscapesCellsAndStaysAligned: each cell prints as text.Escape writes it (what is
// terminal-safe is text's test), and a tab or newline in a cell moves no column.
func TestTableEscapesCellsAndStaysAligned(t *testing.T) {
	cells := []string{"col\tcol", "one\ntwo", "\x1b[32mALLOWED\x1b[0m", "etcd\u202egpj.exe", "a\xff\xfeb"}
	var buf bytes.Buffer
	tab := printers.NewTable(&buf, "NAME", "STATUS", "MESSAGE")
	for _, c := range cells {
		tab.Row(c, "True", c+" end")
	}
	require.NoError(t, tab.Flush())
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, lines, len(cells)+1, "a newline in a cell does not add a line")
	col := strings.Index(lines[0], "STATUS")
	for i, l := range lines[1:] {
		assert.True(t, strings.HasPrefix(strings.TrimSpace(l), text.Escape(cells[i])), "row %d starts with the escaped cell: %q", i, l)
		assert.Equal(t, "True", strings.Fields(string([]rune(l)[col:]))[0], "column STATUS starts at rune %d in %q", col, l)
	}
}
