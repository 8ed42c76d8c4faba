package provision

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/cmpbench/cmpbench/core"
)

// What a failed start quotes of a server's logs: at most whyLines lines that say
// why, each cut at whyLineBytes, read from the last whyReadBytes of each log.
const (
	whyLines     = 6
	whyLineBytes = 300
	whyReadBytes = 64 << 10
)

// Lines that say why a server stopped, by how much they say it: the fatal ones
// first (glog's F prefix, CRITICAL, panics, aborts), then errors.
var (
	fatalLine = regexp.MustCompile(`(?i)(^F\d{8}\s|\bfatal\b|\bcritical\b|\bpanic|\babort(ed|ing)?\b|\bcheck failed\b)`)
	// A line that gives its level as info or warning is not an error, whatever
	// it says (Aerospike warns that it "failed best-practices checks" at every start).
	lowLine   = regexp.MustCompile(`(^[IW]\d{8}\s|\b(INFO|WARNING|WARN|NOTICE|DEBUG)\b)`)
	errorLine = regexp.MustCompile(`(?i)(^E\d{8}\s|\berror\b|\berr\b|\bfailed\b|\bfailure\b|\bcannot\b|\bcan ?not\b|\bunable\b|\bnot enough\b|\binvalid\b|\bunknown\b|\brefused\b|\bdenied\b|\bno such\b|\bbad\b)`)
)

// why says what the process's logs give as the reason it failed to start: the
// lines that say so, fatal ones first, then the last line if none of those is;
// "" when its logs are empty. The text begins with a separator, for appending to
// an error.
func (p *process) why() string {
	var parts []string
	for _, path := range p.logs {
		if lines := tellingLines(path); len(lines) > 0 {
			parts = append(parts, fmt.Sprintf("%s:\n  %s", filepath.Base(path), strings.Join(lines, "\n  ")))
		}
	}
	if len(parts) == 0 {
		return "; it logged nothing"
	}
	return "; what it logged, the lines that say why first:\n" + strings.Join(parts, "\n")
}

// Why says, for every server that ended or is not answering, what its logs give
// as the reason (see process.why).
func (s *Server) Why() string {
	if len(s.procs) == 1 {
		return s.procs[0].why()
	}
	var parts []string
	for _, p := range s.procs {
		if exited, _ := p.exited(); exited {
			parts = append(parts, p.endpoint()+p.why())
		}
	}
	if len(parts) == 0 {
		for _, p := range s.procs {
			parts = append(parts, p.endpoint()+p.why())
		}
	}
	return "; " + strings.Join(parts, "\n")
}

// tellingLines picks from the end of a log the lines that say why a server
// stopped: fatal ones before errors, each group in the order logged, at most
// whyLines, then the log's last line when it is not among them; when no line
// says why, the last whyLines lines.
func tellingLines(path string) []string {
	text := readEnd(path, whyReadBytes)
	var lines []string
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	type ranked struct {
		at, rank int
	}
	var picked []ranked
	for i, l := range lines {
		switch {
		case fatalLine.MatchString(l):
			picked = append(picked, ranked{i, 0})
		case errorLine.MatchString(l) && !lowLine.MatchString(l):
			picked = append(picked, ranked{i, 1})
		}
	}
	slices.SortStableFunc(picked, func(a, b ranked) int { return cmp.Compare(a.rank, b.rank) })
	// The latest lines of each rank are the likeliest cause: keep those.
	var out []string
	seen := map[string]bool{}
	for r := range 2 {
		var group []string
		for _, p := range picked {
			if p.rank == r && !seen[lines[p.at]] {
				seen[lines[p.at]] = true
				group = append(group, core.Shorten(lines[p.at], whyLineBytes))
			}
		}
		if room := whyLines - 1 - len(out); len(group) > room {
			group = group[len(group)-max(room, 0):]
		}
		out = append(out, group...)
	}
	if len(out) == 0 {
		// Nothing says why (a command that printed something else and exited
		// with status 0): its last lines are what there is to quote.
		for _, l := range lines[max(0, len(lines)-whyLines):] {
			out = append(out, core.Shorten(l, whyLineBytes))
		}
		return out
	}
	if last := lines[len(lines)-1]; !seen[last] {
		out = append(out, core.Shorten(last, whyLineBytes))
	}
	return out
}

// readEnd reads at most the last n bytes of a file, from the start of a line.
func readEnd(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return ""
	}
	if off > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}
