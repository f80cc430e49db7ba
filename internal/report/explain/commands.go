package explain

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tollgate-dev/tollgate/internal/text"
)

// Every command explain suggests is safe to paste: its arguments are shell-quoted
// (text.Command), it names objects only by plain Kubernetes names, and it is printable
// ASCII, so that what a person sees on the terminal is exactly what a paste runs.

// policyCommand is how explain prints a command the policies suggest. The embedded policies
// build commands from plain Kubernetes names only (policies/lib remedy), but a policy
// ConfigMap or bundle may return any string, so the command is treated as untrusted: it is
// printed only when it consists of plain words and single-quoted arguments of printable ASCII
// (text.ParseCommand), re-quoted (text.Command) so that pasting it runs exactly those
// words. Any other command is dropped rather than printed unchecked; the text stays and says
// so.
func policyCommand(say, command string) (string, string) {
	args, err := text.ParseCommand(command)
	if err != nil {
		return strings.TrimSuffix(say, ":") + " (the policy's command is left out: Tollgate prints only commands of plain words and single-quoted arguments)", ""
	}
	return say, text.Command(args...)
}

// plainName says whether s is a name Kubernetes accepts for a namespace or a Subscription (a
// DNS-1123 subdomain): nothing a shell interprets, and no leading "-".
func plainName(s string) bool {
	return len(validation.IsDNS1123Subdomain(s)) == 0
}

// kubectl is a kubectl command on the object namespace/name, or "" when either is no plain
// name (a snapshot may hold anything; the API server would not).
func kubectl(verb, kind, namespace, name string, args ...string) string {
	if !plainName(namespace) || !plainName(name) {
		return ""
	}
	return text.Command(append([]string{"kubectl", verb, kind, "-n", namespace, name}, args...)...)
}

// asciiJSON writes every character of encoded JSON beyond printable ASCII (DEL, C1 controls,
// BiDi controls, any other non-ASCII text) as a \uXXXX escape. Outside strings JSON is ASCII
// already and encoding/json escapes the C0 controls, so the result decodes to the same value
// and prints the same on any terminal.
func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x7f {
			b.WriteRune(r)
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}
