package gatestatus

import (
	"fmt"
	"unicode/utf8"
)

// Limits of what the status records. A status the API server refuses cannot be written, and
// the manager approves nothing for a gate whose decision it cannot record: one operator's
// overlong message must not stop its own upgrades, so the status truncates instead.
const (
	// MaxConditionMessage is metav1.Condition's limit on a message (maxLength in the CRD).
	MaxConditionMessage = 32768
	// MaxConditionReason is metav1.Condition's limit on a reason.
	MaxConditionReason = 1024
	// MaxDenialText caps a denial's message, override reason and source. The CRD sets no limit
	// on them, but the whole gate must fit in one etcd value (1.5 MiB by default): 32 denials
	// with 3 × 4 KiB each beside about 15 conditions of 32 KiB keep the status under 1 MiB.
	// The full text stays where it came from (the operator's OperatorCondition, the gate's
	// spec), and `tollgate explain` prints it whole.
	MaxDenialText = 4096
)

// truncate returns s when it is at most limit bytes long, and otherwise its longest prefix
// that ends on a character boundary followed by a marker that says how long s was, all in
// limit bytes. Bytes bound the CRD's maxLength, which counts characters, from above.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	marker := fmt.Sprintf(" … (truncated, %d bytes)", len(s))
	cut := max(limit-len(marker), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker
}
