package core

import (
	"fmt"
	"strings"
	"unicode"
)

// Printable is text from a server, a plugin or a capture (an error, a log line,
// a configured value) made fit to show: every character that would act rather
// than show — move a terminal's cursor or change its colours (ESC, CSI),
// overwrite a line (a lone CR), ring (BEL), end a C string (NUL), reorder a line
// (the bidirectional controls, U+202E among them), break it (U+2028) — is
// replaced by a visible mark: a C0 control by its Unicode control picture (ESC
// is ␛), any other by [U+XXXX]. Line feeds and tabs stay (a CR before a line
// feed is a line end), and bytes that are not UTF-8 become U+FFFD. The marks
// hold no control character and no backslash, so that the text reads the same
// on a console, in Markdown, HTML and JSON; Printable of its own result changes
// nothing.
func Printable(s string) string {
	if plain(s) {
		return s
	}
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r) // ␀ … ␟
		case r == 0x7f:
			b.WriteRune('␡')
		case acts(r):
			fmt.Fprintf(&b, "[%U]", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// plain reports whether s is printable ASCII, tabs and line feeds: nothing for
// Printable to do.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// acts reports whether a rune beyond ASCII changes how text around it shows: a
// C1 control, a bidirectional control, a line or paragraph separator.
func acts(r rune) bool {
	return r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}
