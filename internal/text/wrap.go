package text

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

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
