package report

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// shardLine describes, in the report's header, the shards an archive holds: a
// shard's own archive, or a merge of them.
func (d *data) shardLine() string {
	s := d.m.Shard
	if s == nil {
		return ""
	}
	shards := make([]string, len(s.Shards))
	for i, n := range s.Shards {
		shards[i] = fmt.Sprint(n)
	}
	line := fmt.Sprintf("- Sharded run (plan `%s`, %d shards, first phase at %s): ", s.PlanHash, s.Count, s.StartAt.UTC().Format("2006-01-02 15:04:05 MST"))
	switch {
	case len(s.Parts) == 0:
		line += fmt.Sprintf("this archive is shard %s alone; `cmpbench merge` combines the shards", shards[0])
	case s.Complete():
		line += fmt.Sprintf("merged from all %d shards", s.Count)
	default:
		line += fmt.Sprintf("merged from shards %s only", strings.Join(shards, ", "))
	}
	if len(s.Parts) > 0 {
		var hosts []string
		for _, p := range s.Parts {
			if !slices.Contains(hosts, p.Host.Hostname) {
				hosts = append(hosts, p.Host.Hostname)
			}
		}
		line += fmt.Sprintf("; client hosts %s", strings.Join(hosts, ", "))
	}
	return line + "\n"
}

// processesCaveats: more load processes per system (run --processes) than the
// client's CPUs, which then measure the client's own contention.
func (d *data) processesCaveats() []string {
	k, cpus := d.m.Processes, d.m.Host.CPUs
	if cpus <= 0 || k <= cpus {
		return nil
	}
	return []string{fmt.Sprintf("The load came from %d load processes per system on a client with %d CPUs (--processes %d): with more load processes than cores they waited for CPUs, and the numbers measure the client's own contention as much as the systems'.", k, cpus, k)}
}

// shardCaveats: an archive that is not the whole run, how far apart the shards'
// phase clocks started, and each shard's own client-bound, client-lagged and
// host-saturated flags.
func (d *data) shardCaveats() []string {
	s := d.m.Shard
	if s == nil {
		return nil
	}
	var out []string
	if !s.Complete() {
		out = append(out, fmt.Sprintf("This archive holds %d of the %d shards of its run: its rates and counts are that part's, not the whole run's.", len(s.Shards), s.Count))
	}
	var worst time.Duration
	var where string
	for _, p := range d.m.Phases {
		if sk := time.Duration(p.StartSkewNs); sk > worst {
			worst, where = sk, fmt.Sprintf("%s, %s", p.System, p.Name)
		}
		for _, sp := range p.Shards {
			if sp.ClientBound {
				out = append(out, fmt.Sprintf("%s, %s: shard %d was client-bound (%.2f of %d cores).", p.System, p.Name, sp.Shard, sp.ClientCores, sp.CoresAllowed))
			}
			if sp.ClientLagged {
				out = append(out, fmt.Sprintf("%s, %s: shard %d was client-lagged.", p.System, p.Name, sp.Shard))
			}
			if sp.HostSaturated && sp.Host != nil {
				out = append(out, fmt.Sprintf("%s, %s: shard %d ran on a saturated host: %s.", p.System, p.Name, sp.Shard, sp.Host.Format(literal)))
			}
		}
	}
	if worst > 0 {
		out = append(out, fmt.Sprintf("The shards' phase clocks started up to %s apart (%s): their intervals are merged by number, so an interval mixes moments that far apart.", worst.Round(time.Microsecond), where))
	}
	return out
}
