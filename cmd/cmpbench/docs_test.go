package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../.."

// TestDocs runs the examples of every Markdown page in the repository, so that the
// docs cannot drift from the code: each systems file and suite (whole, or a
// fragment of one) parses, each cmpbench command line names commands and flags
// that exist, and each relative link leads to a file, and heading, that exist.
// Problems are reported at the page's file:line.
func TestDocs(t *testing.T) {
	pages := markdownPages(t)
	if len(pages) < 10 {
		t.Fatalf("found %d Markdown pages under %s: is the test run from its package directory?", len(pages), repoRoot)
	}
	env := map[string]bool{}
	for _, p := range pages {
		for _, b := range p.blocks {
			for _, m := range envRef.FindAllStringSubmatch(b.text, -1) {
				env[m[1]] = true
			}
		}
	}
	for name := range env {
		t.Setenv(name, docsEnvValue(name))
	}
	root := newRoot()
	root.InitDefaultCompletionCmd() // cobra adds it when the command runs
	var commands, yamls, links int
	for _, p := range pages {
		for _, b := range p.blocks {
			switch b.lang {
			case "yaml":
				yamls++
				if err := checkYAMLExample(p.name, b); err != nil {
					t.Error(err)
				}
			case "", "sh", "bash", "console", "shell":
				for i, line := range strings.Split(b.text, "\n") {
					if cmd, ok := cmpbenchCommand(line); ok {
						commands++
						if err := checkCommand(root, cmd); err != nil {
							t.Errorf("%s:%d: %s: %v", p.name, b.line+i, cmd, err)
						}
					}
				}
			}
		}
		for _, s := range p.spans {
			if cmd, ok := cmpbenchCommand(s.text); ok {
				commands++
				if err := checkCommand(root, cmd); err != nil {
					t.Errorf("%s:%d: `%s`: %v", p.name, s.line, s.text, err)
				}
			}
		}
		for _, l := range p.links {
			links++
			if err := checkLink(pages, p, l.text); err != nil {
				t.Errorf("%s:%d: link %s: %v", p.name, l.line, l.text, err)
			}
		}
	}
	t.Logf("%d pages: %d command lines, %d YAML examples, %d links checked", len(pages), commands, yamls, links)
	if commands < 50 || yamls < 8 || links < 30 {
		t.Errorf("too few examples found (%d commands, %d YAML, %d links): is the Markdown parsed?", commands, yamls, links)
	}
}

// page is one Markdown file: its fenced blocks, inline code spans and links' targets,
// each with the line it starts on, and the anchors of its headings.
type page struct {
	name    string // relative to the repository's root
	blocks  []block
	spans   []located
	links   []located
	anchors map[string]bool
}

type block struct {
	lang string
	line int // the block's first line, after the fence
	text string
}

type located struct {
	line int
	text string
}

var (
	envRef      = regexp.MustCompile(`\$\{([A-Z0-9_]+)\}`)
	codeSpan    = regexp.MustCompile("`([^`]+)`")
	mdLink      = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	headingMark = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
)

// markdownPages reads every Markdown page of the repository but test data and
// fetched modules.
func markdownPages(t *testing.T) map[string]*page {
	t.Helper()
	pages := map[string]*page{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", "results", "bin":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != repoRoot {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(repoRoot, path)
		p, err := readPage(path, filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		pages[p.name] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

func readPage(path, name string) (*page, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := &page{name: name, anchors: map[string]bool{}}
	var fence *block
	var para []string // the current paragraph's lines, for code spans that wrap
	paraLine := 0
	flush := func() {
		spans, links := spansOf(para, paraLine)
		p.spans, p.links = append(p.spans, spans...), append(p.links, links...)
		para = nil
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if fence == nil {
				flush()
				fence = &block{lang: strings.TrimPrefix(trimmed, "```"), line: n + 1}
			} else {
				fence.text = strings.TrimSuffix(fence.text, "\n")
				p.blocks = append(p.blocks, *fence)
				fence = nil
			}
			continue
		}
		if fence != nil {
			fence.text += line + "\n"
			continue
		}
		if m := headingMark.FindStringSubmatch(line); m != nil {
			p.anchors[anchor(m[1])] = true
		}
		if trimmed == "" {
			flush()
			continue
		}
		if len(para) == 0 {
			paraLine = n
		}
		para = append(para, line)
	}
	flush()
	return p, sc.Err()
}

// spansOf finds the code spans and the links' targets of a paragraph, either of
// which may wrap across lines.
func spansOf(lines []string, first int) (spans, links []located) {
	text := strings.Join(lines, "\n")
	lineOf := func(i int) int { return first + strings.Count(text[:i], "\n") }
	for _, m := range codeSpan.FindAllStringSubmatchIndex(text, -1) {
		spans = append(spans, located{lineOf(m[0]), strings.Join(strings.Fields(text[m[2]:m[3]]), " ")})
	}
	for _, m := range mdLink.FindAllStringSubmatchIndex(text, -1) {
		links = append(links, located{lineOf(m[0]), text[m[2]:m[3]]})
	}
	return spans, links
}

// anchor is the fragment GitHub gives a heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// docsEnvValue is a value for a ${VAR} of an example: an address for an endpoint,
// a secret strong enough to be redacted for anything else.
func docsEnvValue(name string) string {
	switch {
	case strings.Contains(name, "ENDPOINT"):
		return "127.0.0.1:10000"
	case strings.HasSuffix(name, "_FILE"):
		return "docs-example-" + strings.ToLower(name) + ".pem"
	}
	return "docs-example-Zq8-" + strings.ToLower(name)
}

// checkYAMLExample parses a YAML block as what it shows: a systems file, a suite,
// a suite's phases or one system's provision section. The block is padded with
// empty lines so that a problem is reported at the page's own line.
func checkYAMLExample(file string, b block) error {
	first := strings.TrimLeft(b.text, "\n")
	var wrap string
	kind := "suite"
	switch {
	case hasTopKey(b.text, "systems") || hasTopKey(b.text, "profiles"):
		kind = "systems"
	case hasTopKey(b.text, "name") && hasTopKey(b.text, "phases"):
	case strings.HasPrefix(strings.TrimSpace(first), "- "):
		// A suite's phases, shown in the context of the page's first suite,
		// whose defaults give memtier's key range.
		wrap = "name: docs\nphases:\n"
		if strings.Contains(b.text, "memtier:") {
			wrap = "name: docs\ndefaults:\n  memtier: {key_max: 1000000}\nphases:\n"
		}
	case strings.HasPrefix(strings.TrimSpace(first), "provision:"):
		kind, wrap = "systems", "systems:\n  docs-example:\n    adapter: resp\n"
	default:
		return fmt.Errorf("%s:%d: a YAML example that is neither a systems file, a suite, a suite's phases nor a provision section", file, b.line)
	}
	pad := b.line - 1 - strings.Count(wrap, "\n")
	if pad < 0 {
		return fmt.Errorf("%s:%d: a YAML fragment too near the page's start to be checked", file, b.line)
	}
	data := []byte(wrap + strings.Repeat("\n", pad) + b.text + "\n")
	if kind == "suite" {
		_, err := plan.ParseSuite(file, data)
		return err
	}
	systems, err := config.LoadSystemsData(file, data)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range systems.Names() {
		_, problems := systems.Lookup(name)
		for _, p := range problems {
			// What depends on the machine (a server not installed here, an
			// example's certificate) is the reader's to provide.
			if msg := p.Error(); !strings.Contains(msg, "is not on PATH") && !strings.Contains(msg, "docs-example-") && !strings.Contains(msg, "ca.pem") {
				errs = append(errs, p)
			}
		}
	}
	if len(errs) > 0 {
		return config.Errors(errs)
	}
	return nil
}

func hasTopKey(text, key string) bool {
	return slices.ContainsFunc(strings.Split(text, "\n"), func(l string) bool { return strings.HasPrefix(l, key+":") })
}

// cmpbenchCommand finds a cmpbench command line: the line itself, or what follows
// a shell prompt, up to a comment or the next command of a pipeline or list.
func cmpbenchCommand(line string) (string, bool) {
	line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
	if !strings.HasPrefix(line, "cmpbench ") {
		return "", false
	}
	for _, sep := range []string{" #", " | ", " && ", " ; ", " > ", " 2>", " >>"} {
		if i := strings.Index(line, sep); i >= 0 {
			line = line[:i]
		}
	}
	return strings.TrimSpace(line), true
}

// checkCommand walks a command line down cmpbench's commands and requires every
// flag it names to be one of the command's. A synopsis's brackets, alternatives
// and ellipses are read as the words they stand for.
func checkCommand(root *cobra.Command, line string) error {
	words := strings.Fields(strings.NewReplacer("[", " ", "]", " ", "…", " ", "...", " ").Replace(line))[1:]
	cmd := root
	descending, skipValue := true, false
	for _, w := range words {
		if skipValue {
			skipValue = false
			continue
		}
		if strings.HasPrefix(w, "-") && w != "-" {
			name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if name == "help" || name == "h" || name == "version" && cmd == root {
				continue
			}
			f := lookupFlag(cmd, name, !strings.HasPrefix(w, "--"))
			if f == nil {
				return fmt.Errorf("%s has no flag %s", cmd.CommandPath(), w)
			}
			// A flag's value may stand as the next word.
			skipValue = !hasValue && f.Value.Type() != "bool"
			continue
		}
		if !descending {
			continue
		}
		if sub, err := namedSubcommands(cmd, w); err != nil {
			return err
		} else if sub != nil {
			cmd = sub
			continue
		}
		descending = false
	}
	return nil
}

// lookupFlag finds a flag of a command by name or shorthand: its own, or one
// its parents give every command.
func lookupFlag(cmd *cobra.Command, name string, short bool) *pflag.Flag {
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.PersistentFlags(), cmd.InheritedFlags()} {
		f := fs.Lookup(name)
		if short {
			f = nil
			if len(name) == 1 {
				f = fs.ShorthandLookup(name)
			}
		}
		if f != nil {
			return f
		}
	}
	return nil
}

// namedSubcommands finds the subcommand a word names, or each of a synopsis's
// alternatives (bash|zsh|fish), returning the first; nil when the command has no
// subcommands, so that the word is an argument.
func namedSubcommands(cmd *cobra.Command, word string) (*cobra.Command, error) {
	if !cmd.HasAvailableSubCommands() {
		return nil, nil
	}
	var first *cobra.Command
	for _, name := range strings.Split(word, "|") {
		sub := namedSubcommand(cmd, name)
		if sub == nil {
			return nil, fmt.Errorf("%s has no command %q", cmd.CommandPath(), name)
		}
		if first == nil {
			first = sub
		}
	}
	return first, nil
}

func namedSubcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

// checkLink requires a relative link's file to exist and, with a fragment, the
// heading it names.
func checkLink(pages map[string]*page, from *page, target string) error {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return nil
	}
	path, frag, _ := strings.Cut(target, "#")
	name := from.name
	if path != "" {
		name = filepath.ToSlash(filepath.Join(filepath.Dir(from.name), path))
		if _, err := os.Stat(filepath.Join(repoRoot, name)); err != nil {
			return fmt.Errorf("%s does not exist", name)
		}
	}
	if frag == "" {
		return nil
	}
	to := pages[name]
	if to == nil {
		return fmt.Errorf("#%s points into %s, which is not a Markdown page", frag, name)
	}
	if !to.anchors[frag] {
		return fmt.Errorf("%s has no heading #%s", name, frag)
	}
	return nil
}
