package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/mitchellh/go-wordwrap"
	"golang.org/x/term"

	"github.com/cmpbench/cmpbench/core"
)

// termWidth is the width listings wrap to: the terminal's when w is one, else
// 100 columns.
func termWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols >= 40 {
			return cols
		}
	}
	return 100
}

// indentWrap wraps text at word boundaries to width columns, each line indented.
func indentWrap(text string, width int, indent string) string {
	wrapped := wordwrap.WrapString(text, uint(width-len(indent)))
	return indent + strings.ReplaceAll(wrapped, "\n", "\n"+indent)
}

// fitted holds a listing's lines and, on Close, writes them to its writer
// wrapped to its width: a line too long wraps under the start of its last
// column (a table's last cell), or two columns in from its own indent.
type fitted struct {
	w     io.Writer
	width int
	buf   bytes.Buffer
}

func newFitted(w io.Writer) *fitted { return &fitted{w: w, width: termWidth(w)} }

func (f *fitted) Write(p []byte) (int, error) { return f.buf.Write(p) }

// lastColumn finds where a table row's last cell starts: after its last run of
// two or more spaces.
var lastColumn = regexp.MustCompile(`\S {2,}(\S)`)

// Close writes the listing, wrapped, its control characters shown (a listing
// quotes what plugins say of themselves, and their errors).
func (f *fitted) Close() error {
	var out strings.Builder
	for _, line := range strings.SplitAfter(core.Printable(f.buf.String()), "\n") {
		body := strings.TrimSuffix(line, "\n")
		if len([]rune(body)) <= f.width {
			out.WriteString(line)
			continue
		}
		lead := len(body) - len(strings.TrimLeft(body, " "))
		head, at := body[:lead], lead+2
		if m := lastColumn.FindAllStringSubmatchIndex(body, -1); m != nil {
			if start := m[len(m)-1][2]; start > lead && start < f.width*2/3 {
				head, at = body[:start], start
			}
		}
		wrapped := indentWrap(strings.TrimSpace(body[len(head):]), f.width, strings.Repeat(" ", at))
		out.WriteString(head + strings.TrimLeft(wrapped, " ") + strings.TrimPrefix(line, body))
	}
	_, err := io.WriteString(f.w, out.String())
	return err
}
