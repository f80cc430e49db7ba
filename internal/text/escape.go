package text

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape makes text from the cluster safe to print on a terminal. Operators, policies and
// admins write the messages, names and reasons Tollgate prints; raw, they could clear the
// screen, move the cursor to fake a coloured "ALLOWED", write the clipboard (OSC 52), return
// the carriage over what was printed, reorder what follows (Unicode BiDi overrides), or break
// a table's columns with a tab. Escape writes, Go style:
//
//   - tab, newline and carriage return as \t, \n, \r; the other C0 controls and DEL as \x1b...;
//   - the C1 controls (U+0080–U+009F) as \u009b...;
//   - the Unicode bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
//     U+2066–U+2069) and the line and paragraph separators (U+2028, U+2029) as \u202e...;
//   - each byte that is not part of valid UTF-8 as \xff... (a lone 0x9b is CSI to some
//     terminals).
//
// Everything else prints as is, backslashes included: the escaping protects the terminal and
// the layout, it is not meant to be reversed. A renderer escapes every piece of text it did
// not write itself and puts its own line breaks between the pieces.
func Escape(s string) string {
	i := unsafeIndex(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeIndex is the index of the first byte Escape must rewrite, or -1.
func unsafeIndex(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if c < 0x20 || c == 0x7f || (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune says whether r, beyond the C0 controls and DEL, is a terminal or layout control.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // Arabic letter mark, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}
