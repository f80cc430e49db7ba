package text_test

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tollgate-dev/tollgate/internal/text"
)

// hostileText is text an operator, a policy or an admin could write, keyed by what it would
// do to a terminal if printed raw.
var hostileText = map[string]string{
	"clear screen and home":          "\x1b[2J\x1b[H",
	"fake coloured ALLOWED":          "\x1b[32mALLOWED\x1b[0m",
	"OSC 52 clipboard write":         "\x1b]52;c;a3ViZWN0bCBkZWxldGUgbnMgLS1hbGw=\x07",
	"OSC 8 hyperlink":                "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
	"carriage return over the line":  "HELD by X\rALLOWED  ",
	"backspaces":                     "HELD\b\b\b\bOK  ",
	"NUL and BEL":                    "a\x00b\x07c",
	"DEL":                            "a\x7fb",
	"tab":                            "col\tcol",
	"newline":                        "one\ntwo",
	"vertical tab and form feed":     "a\vb\fc",
	"8-bit CSI as a C1 character":    "\u009b2J",
	"NEL as a C1 character":          "a\u0085b",
	"OSC as a C1 character":          "\u009d52;c;eA==\u009c",
	"lone 0x9b byte (8-bit CSI)":     "a\x9b2Jb",
	"invalid UTF-8":                  "a\xff\xfeb",
	"right-to-left override":         "etcd\u202egpj.exe",
	"left-to-right override":         "\u202dx",
	"embeddings and pop":             "\u202a\u202b\u202cx",
	"isolates":                       "\u2066\u2067\u2068x\u2069",
	"LRM, RLM, Arabic letter mark":   "\u200e\u200f\u061cx",
	"line and paragraph separators":  "a\u2028b\u2029c",
	"everything at once":             "\x1b[31m\u202e\t\r\n\u009b\x7f\x00",
	"escape sequence split by bytes": "\x1b" + "[" + "1;31m",
}

// assertTerminalSafe fails when s holds anything Escape must rewrite, except the newlines a
// renderer puts between lines when lines is true.
func assertTerminalSafe(t *testing.T, s string, lines bool) {
	t.Helper()
	require.True(t, utf8.ValidString(s), "output is valid UTF-8")
	for i, r := range s {
		if r == '\n' && lines {
			continue
		}
		if !assert.False(t, unsafeForTerminal(r), "unescaped %U at byte %d of %q", r, i, s) {
			return
		}
	}
}

func TestEscapeLeavesNoControlCharacter(t *testing.T) {
	for name, raw := range hostileText {
		t.Run(name, func(t *testing.T) {
			got := text.Escape(raw)
			assertTerminalSafe(t, got, false)
			assert.Equal(t, got, text.Escape(got), "escaping twice changes nothing")
		})
	}
}

func TestEscapeWritesGoStyleEscapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, with 'quotes' and \\ backslashes", "plain text, with 'quotes' and \\ backslashes"},
		{"\x1b[2J", `\x1b[2J`},
		{"a\tb\nc\rd", `a\tb\nc\rd`},
		{"\x00\x7f", `\x00\x7f`},
		{"\u009b", `\u009b`},
		{"etcd\u202egpj", `etcd\u202egpj`},
		{"\u2066\u200f\u061c", `\u2066\u200f\u061c`},
		{"a\x9bb", `a\x9bb`},
		{"déjà vu, 日本, emoji 🙂", "déjà vu, 日本, emoji 🙂"},
	} {
		assert.Equal(t, tc.want, text.Escape(tc.in), "Escape(%q)", tc.in)
	}
}

func TestWrapEscapesWords(t *testing.T) {
	got := text.Wrap("the operator says \x1b[2J\x1b[32mALLOWED\x1b[0m and \u202eevil", 20, "  ")
	assertTerminalSafe(t, got, true)
	assert.Contains(t, got, `\x1b[2J\x1b[32mALLOWED\x1b[0m`)
}

// unsafeForTerminal says whether r must not reach a terminal raw: a C0 or C1 control, DEL, a
// BiDi control, a line or paragraph separator.
func unsafeForTerminal(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x061c || r == 0x200e || r == 0x200f ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x2028 || r == 0x2029
}
