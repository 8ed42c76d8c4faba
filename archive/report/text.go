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
			parts[i] = core.Quoted(p)
		}
	}
	return strings.Join(parts, `\|`)
}

// factText is a fact's words (core.Fact) as report.md writes them: each value
// the adapter quoted (core.Quoted, a code span) as literal writes a system's
// text, the rest, the adapter's own words, as prose; so that neither makes
// markup, whatever a third-party plugin sends. A backtick that opens no code
// span is text.
func factText(words string) string {
	var b strings.Builder
	rest := words
	for rest != "" {
		open := strings.IndexByte(rest, '`')
		if open < 0 {
			b.WriteString(prose(rest))
			break
		}
		n := backticks(rest[open:])
		end := closingFence(rest[open+n:], n)
		if end < 0 {
			b.WriteString(prose(rest[:open+n]))
			rest = rest[open+n:]
			continue
		}
		value := rest[open+n : open+n+end]
		if len(value) > 2 && value[0] == ' ' && value[len(value)-1] == ' ' && strings.TrimSpace(value) != "" {
			value = value[1 : len(value)-1]
		}
		b.WriteString(prose(rest[:open]) + literal(value))
		rest = rest[open+n+end+n:]
	}
	return b.String()
}

// backticks is the length of the run of backticks s starts with.
func backticks(s string) int {
	return len(s) - len(strings.TrimLeft(s, "`"))
}

// closingFence is where in s the first run of exactly n backticks starts, -1
// when there is none.
func closingFence(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		run := backticks(s[i:])
		if run == n {
			return i
		}
		i += run
	}
	return -1
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
