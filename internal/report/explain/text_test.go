package explain

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
)

// hostileText is text operators, policies and admins write, as it would attack a terminal.
var hostileText = []string{
	"\x1b[2J\x1b[H",                      // clear the screen
	"\x1b[32mALLOWED\x1b[0m",             // a fake coloured verdict
	"\x1b]52;c;a3ViZWN0bCBkZWxldGU=\x07", // OSC 52: write the clipboard
	"HELD\rALLOWED",                      // carriage return over the line
	"col\tumn",                           // a tab breaks a table
	"two\nlines",                         // a fake line
	"\u009b2J \u0085",                    // C1 controls
	"\x7f\x00\x07\b",                     // DEL, NUL, BEL, backspace
	"etcd\u202egpj",                      // right-to-left override
	"\u2066\u2067\u2068\u2069\u200e\u200f\u061c", // isolates and marks
	"a\x9bb", // a lone 8-bit CSI byte
}

func assertTerminalSafe(t *testing.T, s string) {
	t.Helper()
	require.True(t, utf8.ValidString(s))
	for i, r := range s {
		if !assert.False(t, r != '\n' && unsafeForTerminal(r), "unescaped %U at byte %d", r, i) {
			return
		}
	}
}

// TestWriteTextEscapesEverythingItDidNotWrite fills every text of a report with hostile text.
func TestWriteTextEscapesEverythingItDidNotWrite(t *testing.T) {
	for _, h := range hostileText {
		rep := &Report{
			Namespace: h, Name: h, Package: h, Channel: h, SourceCatalog: h, InstalledCSV: h, InstalledPhase: h,
			CurrentCSV: h, State: h, Approval: h, Mode: h, Now: h, PolicyRevision: h,
			Denials: []Denial{{Code: h, Message: h, Overridden: true, OverrideReason: h, Rule: h, Title: h, File: h, Row: 1,
				Facts: []string{h}, Lift: []Remedy{{Text: h, Held: []Denial{{Code: h, Message: h, Facts: []string{h}}}}}}},
			InstallPlans: []approval.Verdict{{Namespace: h, Name: h, CSVs: []string{h}, Ineligible: h}},
			Health:       []engine.Condition{{Type: h, Status: "True", Reason: h, Message: h}},
			Conditions:   []engine.Condition{{Type: "T", Status: "False", Reason: "R", Message: h + " and more"}},
			Stored:       &Stored{BlockedBy: h, PolicyRevision: h, EvaluatedAt: h, LastApproved: h},
			Notices:      []Remedy{{Text: h}},
			Notes:        []engine.Note{{Kind: h, Location: h, Message: h}},
		}
		var buf bytes.Buffer
		require.NoError(t, rep.WriteText(&buf))
		out := buf.String()
		assertTerminalSafe(t, out)
		// The conditions table keeps its columns: STATUS starts at the same place on each row.
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "Conditions") {
				col := strings.Index(lines[i+1], "STATUS")
				assert.Equal(t, "False", strings.Fields(string([]rune(lines[i+2])[col:]))[0], "%q", lines[i+1:i+3])
			}
		}
	}
}

// unsafeForTerminal says whether r must not reach a terminal raw: a C0 or C1 control, DEL, a
// BiDi control, a line or paragraph separator.
func unsafeForTerminal(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x061c || r == 0x200e || r == 0x200f ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x2028 || r == 0x2029
}

func TestPrintableIsTheTextAndNamesTheSubscription(t *testing.T) {
	rep := &Report{Namespace: "operators", Name: "etcd", State: "UpgradePending"}
	p := rep.Printable()
	var names, text, direct bytes.Buffer
	require.NoError(t, printers.WriteNames(&names, p.Names()))
	assert.Equal(t, "subscription.operators.coreos.com/etcd\n", names.String())
	require.NoError(t, p.Human(&text, printers.TableOptions{}))
	require.NoError(t, rep.WriteText(&direct))
	assert.Equal(t, direct.String(), text.String())
}
