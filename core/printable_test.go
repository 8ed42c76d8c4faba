package core

import "testing"

// Text from a server or a plugin reaches a terminal, report.md and report.html:
// every character that would act instead of show (move the cursor, ring, end a
// string, reorder a line) is shown as a visible mark; lines and tabs stay.
func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "OOM command not allowed when used memory > 'maxmemory'.", "OOM command not allowed when used memory > 'maxmemory'."},
		{"lines and tabs stay", "a\tb\nc", "a\tb\nc"},
		{"ANSI colour", "\x1b[31mred\x1b[0m", "␛[31mred␛[0m"},
		{"CR alone overwrites a line", "ok\rFAKE", "ok␍FAKE"},
		{"CRLF is a line end", "a\r\nb", "a\nb"},
		{"BEL", "ding\a", "ding␇"},
		{"NUL", "a\x00b", "a␀b"},
		{"DEL", "a\x7fb", "a␡b"},
		{"C1 CSI", "a\u009b31mb", "a[U+009B]31mb"},
		{"bidi override", "user\u202Egnp.exe", "user[U+202E]gnp.exe"},
		{"bidi isolate", "a\u2066b\u2069", "a[U+2066]b[U+2069]"},
		{"line separator", "a\u2028b", "a[U+2028]b"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"other scripts stay", "Größe 容量 ✓", "Größe 容量 ✓"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Printable(tc.in); got != tc.want {
				t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := Printable(Printable(tc.in)); again != tc.want {
				t.Errorf("Printable twice = %q, want %q", again, tc.want)
			}
		})
	}
}
