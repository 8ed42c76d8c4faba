package report

import (
	"strings"

	"github.com/cmpbench/cmpbench/core"
)

// Text from servers and plugins is data: a server's log quoted in an error, an
// error reply, a version, a configured value, a refused capture, what a plugin
// says of itself, a process's name. It reaches every output through one door per
// format: report.md (and the page's sections, rendered from it) through
// literal; the page's own fields through html/template, which escapes them, and
// core.Printable; the console through core.Printable.

// literal is text from a server, a plugin or a capture as report.md quotes it,
// inert in any Markdown reader (GitHub's included) and in a table's cell or a
// paragraph alike: its control characters made visible (core.Printable), its
// lines joined with spaces, and written as code spans, in which Markdown reads
// no emphasis, link, image, autolink, HTML or entity. A "|", which would end a
// table's cell even inside a code span, is written between the spans as "\|",
// read as the character in a cell and in a paragraph. "" stays "".
func literal(s string) string {
	s = strings.ReplaceAll(core.Printable(s), "\n", " ")
	parts := strings.Split(s, "|")
	for i, p := range parts {
		if p != "" {
			parts[i] = codeSpan(p)
		}
	}
	return strings.Join(parts, `\|`)
}

// codeSpan is s as one code span: fenced by one more backtick than the longest
// run of them in s, and padded with a space inside the fences where s begins or
// ends with a backtick or with a space at both ends (CommonMark strips one such
// pair).
func codeSpan(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") && strings.TrimSpace(s) != "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// literals is each text of list that is not "" as literal makes it, joined
// with sep.
func literals(list []string, sep string) string {
	var out []string
	for _, s := range list {
		if s != "" {
			out = append(out, literal(s))
		}
	}
	return strings.Join(out, sep)
}

// opGroup is a group of op kinds the server counted together, as its adapter
// named it ("GET+SET"): as it is when every one is an op kind cmpbench knows,
// else quoted (literal), being the adapter's text.
func opGroup(group string) string {
	for _, op := range strings.Split(group, "+") {
		if _, err := core.ParseOpKind(op); err != nil {
			return literal(group)
		}
	}
	return group
}

// markdownPunct are the characters with which Markdown starts emphasis, code,
// a link or an image, an autolink or HTML, an entity, strikethrough, a table's
// cell or a heading, and the backslash that escapes them.
const markdownPunct = "\\`*_[]<>!|&~#"

// prose is a sentence that mixes cmpbench's words with another tool's (an
// import's caveat naming the commands or paths its source holds) as report.md
// writes it: on one line, its control characters made visible, each character
// that could make Markdown of it escaped with a backslash — but an underscore
// inside a word ("memtier_benchmark"), which never does — so that it reads as
// written and is never markup.
func prose(s string) string {
	s = strings.ReplaceAll(core.Printable(s), "\n", " ")
	var b strings.Builder
	for i, r := range s {
		if r == '_' && i > 0 && i+1 < len(s) && wordByte(s[i-1]) && wordByte(s[i+1]) {
			b.WriteRune(r)
			continue
		}
		if strings.ContainsRune(markdownPunct, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// wordByte reports whether c is an ASCII letter or digit.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
