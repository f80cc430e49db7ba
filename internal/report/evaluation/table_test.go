package evaluation

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/approval"
)

// TestEvalTableEscapesTextFromTheSnapshot fills every text of an eval report with what an
// operator or a policy could write to attack a terminal.
func TestEvalTableEscapesTextFromTheSnapshot(t *testing.T) {
	for _, h := range []string{
		"\x1b[2J\x1b[H", "\x1b[32mALLOWED\x1b[0m", "\x1b]52;c;eA==\x07", "HELD\rALLOWED", "col\tumn",
		"two\nlines", "\u009b2J\u0085", "\x7f\x00\b", "etcd\u202egpj", "\u2066\u200f\u061c\u2069", "a\x9bb",
	} {
		r := &Report{Now: h, PolicyRevision: h,
			Subscriptions: []Subscription{{Namespace: h, Name: h, Package: h, InstalledCSV: h, CurrentCSV: h, Approval: h, Mode: h, State: h,
				Decision: Decision{Denials: []tollgatev1alpha1.Denial{{Code: h, Message: h, Source: h}}}}},
			InstallPlans:   []approval.Verdict{{Namespace: h, Name: h, CSVs: []string{h}, Ineligible: h}},
			CatalogSources: []CatalogSource{{Namespace: h, Name: h, Healthy: h, LastObservedState: h, Violations: []engine.Violation{{Field: h, Message: h}}}},
		}
		var buf bytes.Buffer
		require.NoError(t, r.WriteTable(&buf, printers.TableOptions{}, "tollgate"))
		out := buf.String()
		require.True(t, utf8.ValidString(out))
		for i, c := range out {
			unsafe := c < 0x20 && c != '\n' || c == 0x7f || (c >= 0x80 && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
				(c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)
			require.False(t, unsafe, "unescaped %U at byte %d of %q", c, i, out)
		}
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "SUBSCRIPTIONS") {
				col := strings.Index(lines[i+1], "UPGRADE")
				assert.Equal(t, "held:", strings.Fields(string([]rune(lines[i+2])[col:]))[0], "the UPGRADE column stays aligned: %q", lines[i+1:i+3])
			}
		}
	}
}
