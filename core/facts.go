package core

import (
	"fmt"
	"strconv"
	"strings"
)

// Fact is one setting that decides a comparison, as a system's adapter reads it
// from what it captured. Words say it to a reader on one line, in plain text in
// which each value the system gave (a configured value, a role, a count) is
// quoted (Quoted): the report shows a quoted value as the system's text, as it
// was written, and escapes the rest (the adapter's words are not markup
// either). Class is what must be equal between two systems for their
// comparison to be fair, "" when no class applies or it cannot be told. A Fact
// without Words is unknown: the report shows "—" and never takes it as alike.
type Fact struct {
	Words string `json:"words"`
	Class string `json:"class,omitempty"`
}

// Known reports whether the fact says anything.
func (f Fact) Known() bool { return f.Words != "" }

// Facts are what a system's configuration says of the settings the fairness
// audit compares. The classes, which a third-party adapter should use where its
// system does as a built-in one's does:
//
//   - Durability, what a crash or power loss loses: DurabilityNone (every
//     write lost on a restart), "shutdown" (kept only across a clean stop),
//     "snapshot", "memtable" (writes not yet flushed from memory),
//     "flush <N>ms" or "flush <N>" (a flush period), "os" (the OS flushes: lost
//     on power loss), "1s" (up to a second), "always" (no acknowledged write
//     lost), DurabilityKept (kept across a restart, what a crash loses
//     unknown).
//   - Replication: how many copies of each record the system keeps ("1", "2").
//   - Memory, the memory limit and what happens at it: "unlimited", "limit
//     evicts", "limit noeviction" (writes refused), or "limit <policy>" with
//     Redis' maxmemory-policy.
//   - Threads: the threads serving requests, in words only (no class: a
//     difference is not unfair by itself).
type Facts struct {
	Durability  Fact `json:"durability,omitzero"`
	Replication Fact `json:"replication,omitzero"`
	Memory      Fact `json:"memory,omitzero"`
	Threads     Fact `json:"threads,omitzero"`
}

// The durability classes the fairness audit itself reasons with: what a
// restart check saw wins over what a configuration reads as.
const (
	DurabilityNone = "none"
	DurabilityKept = "kept"
)

// Map is f with fn applied to every fact's words and class (redaction).
func (f Facts) Map(fn func(string) string) Facts {
	for _, p := range []*Fact{&f.Durability, &f.Replication, &f.Memory, &f.Threads} {
		if p.Known() {
			p.Words, p.Class = fn(p.Words), fn(p.Class)
		}
	}
	return f
}

// FactReader is implemented by adapters that read a system's facts from its
// capture sections (Capture.Sections, as archived: systems/<name>/<section>.txt).
// It needs no connection: the SDK calls it on every capture, so that the archive
// keeps the facts (systems/<name>/facts.json), and the report calls a built-in
// adapter's on the sections of an archive written before facts were kept.
// Sections of a cluster's nodes carry the node's address; a reader takes the
// first node's.
type FactReader interface {
	Facts(sections map[string]string) Facts
}

// Quoted is s, a value a system gave, as a fact's words quote it: a Markdown
// code span, fenced by one more backtick than the longest run of them in s, and
// padded with a space inside the fences where s begins or ends with a backtick
// or with a space at both ends (CommonMark strips one such pair). "" stays "".
func Quoted(s string) string {
	if s == "" {
		return ""
	}
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

// BytesIEC is a byte count as a reader takes it in: "17.7 GiB", "512 MiB".
func BytesIEC(n uint64) string {
	const gib = 1 << 30
	if n >= gib {
		return fmt.Sprintf("%.1f GiB", float64(n)/gib)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// BytesWords is a configured size as a fact's words say it: BytesIEC of a byte
// count, any other text (a size with its unit, "17.72GiB") quoted.
func BytesWords(s string) string {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return Quoted(s)
	}
	return BytesIEC(n)
}
