package text

import (
	"errors"
	"strings"
)

// ErrNotPlainCommand says a command holds more than plain words and single-quoted arguments.
var ErrNotPlainCommand = errors.New("not a command of plain words and single-quoted arguments")

// plainByte says whether c may appear unquoted in a word a shell (sh, bash, zsh) takes
// literally: letters, digits and _ . / : = , @ % + -. A word that starts with = is quoted all
// the same (zsh expands =name to a path).
func plainByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("_./:=,@%+-", c) >= 0
}

// Quote returns arg as one word for a POSIX shell: as is when it is plain, otherwise in single
// quotes, inside which a shell interprets nothing. A quote in arg closes the quotes, is
// written escaped with a backslash, and opens them again:
//
//	it's fine  →  'it'\''s fine'
func Quote(arg string) string {
	plain := arg != "" && arg[0] != '='
	for i := 0; plain && i < len(arg); i++ {
		plain = plainByte(arg[i])
	}
	if plain {
		return arg
	}
	return "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
}

// Command is the command line that a POSIX shell splits back into exactly args, so that
// pasting it runs args and nothing else. Escape(Command(args...)) shows exactly what a paste
// would run only when args are printable ASCII; callers that put other text in an argument
// (a JSON patch) write it with escapes of its own first.
func Command(args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = Quote(a)
	}
	return strings.Join(quoted, " ")
}

// ParseCommand splits a command line into its words as a POSIX shell would, accepting only
// what Command writes and what a policy may write with sprintf: words separated by spaces,
// made of plain characters (see Quote), single-quoted runs of printable ASCII, and \' (a
// quote, as Quote writes one inside a quoted word). Anything a
// shell would interpret ($, `, \, ", ;, |, &, <, >, (, ), *, ?, ~, #, ! …), other whitespace,
// control characters and non-ASCII text make it return ErrNotPlainCommand.
func ParseCommand(line string) ([]string, error) {
	var (
		words         []string
		word          strings.Builder
		inWord, quote bool
	)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote && c == '\'':
			quote = false
		case quote && c >= 0x20 && c < 0x7f:
			word.WriteByte(c)
		case quote:
			return nil, ErrNotPlainCommand
		case c == '\'':
			quote, inWord = true, true
		case c == '\\' && i+1 < len(line) && line[i+1] == '\'': // '\'' as Quote writes it
			word.WriteByte('\'')
			inWord = true
			i++
		case c == ' ':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case plainByte(c):
			word.WriteByte(c)
			inWord = true
		default:
			return nil, ErrNotPlainCommand
		}
	}
	if quote || (!inWord && len(words) == 0) {
		return nil, ErrNotPlainCommand
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}
