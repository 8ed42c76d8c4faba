package core

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Stats keys an adapter adds to Target.Stats, when the server tells, so that cmpbench
// can read the same facts from every product. In a cluster each key carries the
// node's suffix, as the adapter's other keys do ("cmpbench.instance@10.0.0.1:7000"),
// and readers sum or compare over the nodes.
//
// StatInstance and StatUptime tell a server that restarted between two samples:
// the instance changes when the server process changes (Redis's run_id), the
// uptime (seconds) goes down. StatConnections is how many client connections the
// node has open (cmpbench's own among them): what a phase's connections really
// were on the server. StatCalls+"GET+READ" (op kinds joined by "+", in
// core.OpKind order) is how many requests of those kinds the node has counted since
// it started, whatever their outcome: its change over a phase is set against what
// the client sent, for servers whose counters do not tell the op kinds apart.
const (
	StatInstance    = "cmpbench.instance"
	StatUptime      = "cmpbench.uptime_s"
	StatConnections = "cmpbench.connections"
	StatCalls       = "cmpbench.calls."
	// StatCallsSource says, once per sample, where the node's StatCalls counts
	// come from ("INFO commandstats: GET=get, READ=hgetall"), for the report.
	StatCallsSource = "cmpbench.calls_source"
)

// CallsKey is the StatCalls key of a group of op kinds (in OpKind order):
// "cmpbench.calls.UPDATE+INSERT".
func CallsKey(ops ...OpKind) string {
	ops = slices.Clone(ops)
	slices.Sort(ops)
	names := make([]string, len(ops))
	for i, o := range ops {
		names[i] = o.String()
	}
	return StatCalls + strings.Join(names, "+")
}

// StatTimeline names, comma-separated, the keys of a stats sample worth charting
// over a phase (without a cluster node's suffix; the report sums them over the
// nodes): memory in use, a storage engine's running compactions or defrag queue.
// The adapter chooses them (the resp adapter from its profile's timeline:), and
// the report draws them from the samples taken during each measured phase. Unlike
// the other keys it is set once per sample, not per node.
const StatTimeline = "cmpbench.timeline"

// TimelineKeys reads StatTimeline's list from a sample's value.
func TimelineKeys(value string) []string {
	var keys []string
	for _, k := range strings.Split(value, ",") {
		if k = strings.TrimSpace(k); k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// StartSlack is how much later a node's start, reckoned from a sample's time and
// the node's uptime (whole seconds, read some time after the sample began), may
// seem than in an earlier sample without the node having restarted.
const StartSlack = 5 * time.Second

// Restarted compares two stats samples of one system, taken in this order, and
// says which nodes restarted between them, or "" when none did (or the samples do
// not tell). A node restarted when its instance changed, its uptime went down, or
// it started later than it had (sample time minus uptime) by more than
// StartSlack: a node that restarted long before the second sample may by then
// have run longer than it had at the first.
func Restarted(before, after StatsSample) string {
	var found []string
	for k, b := range before.Stats {
		a, ok := after.Stats[k]
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(k, StatInstance):
			if a != b && a != "" && b != "" {
				found = append(found, fmt.Sprintf("%sinstance %s became %s", node(k, StatInstance), b, a))
			}
		case strings.HasPrefix(k, StatUptime):
			bu, err1 := strconv.ParseFloat(b, 64)
			au, err2 := strconv.ParseFloat(a, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			startedB := before.At.Add(-time.Duration(bu * float64(time.Second)))
			startedA := after.At.Add(-time.Duration(au * float64(time.Second)))
			switch {
			case au < bu:
				found = append(found, fmt.Sprintf("%suptime went from %g s to %g s", node(k, StatUptime), bu, au))
			case !before.At.IsZero() && !after.At.IsZero() && startedA.Sub(startedB) > StartSlack:
				found = append(found, fmt.Sprintf("%sstarted again %s after the first sample (uptime %g s)", node(k, StatUptime),
					max(0, startedA.Sub(before.At)).Round(time.Second), au))
			}
		}
	}
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	// One node restarted reads once, not once per key that shows it.
	return strings.Join(dedupNodes(found), "; ")
}

// RestartKeys lists the nodes a stats sample tells the restarts of: "" for a single
// server, the suffixes ("@10.0.0.1:3000") of a cluster's nodes.
func RestartKeys(sample map[string]string) []string {
	var nodes []string
	for k := range sample {
		for _, p := range []string{StatInstance, StatUptime} {
			if n, ok := strings.CutPrefix(k, p); ok && !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
	}
	sort.Strings(nodes)
	return nodes
}

// NotRestarted lists the nodes of before (RestartKeys) that after does not show
// restarted; a node missing from after has not (yet) come back.
func NotRestarted(before, after StatsSample) []string {
	var pending []string
	for _, n := range RestartKeys(before.Stats) {
		one := func(s StatsSample) StatsSample {
			return StatsSample{At: s.At, Stats: map[string]string{StatInstance: s.Stats[StatInstance+n], StatUptime: s.Stats[StatUptime+n]}}
		}
		if Restarted(one(before), one(after)) == "" {
			name := strings.TrimPrefix(n, "@")
			if name == "" {
				name = "the server"
			}
			pending = append(pending, name)
		}
	}
	return pending
}

func node(key, prefix string) string {
	if n := strings.TrimPrefix(key, prefix); n != "" {
		return "node " + strings.TrimPrefix(n, "@") + ": "
	}
	return ""
}

// dedupNodes keeps the first finding of each node (sorted: instance before uptime).
func dedupNodes(found []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range found {
		n, _, _ := strings.Cut(f, ": ")
		if !strings.HasPrefix(f, "node ") {
			n = ""
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, f)
		}
	}
	return out
}
