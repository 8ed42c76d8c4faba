package resp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/cmpbench/cmpbench/core"
)

// node is one server of the system: the only one, or a shard of a cluster.
type node struct {
	addr   string
	client rueidis.Client
}

// nodes lists the servers; for a cluster, masters only when masters is set.
func (t *target) nodes(ctx context.Context, masters bool) []node {
	if !t.cluster {
		return []node{{t.sys.Endpoint, t.client}}
	}
	all := t.client.Nodes()
	var out []node
	for _, a := range slices.Sorted(maps.Keys(all)) {
		n := node{a, all[a]}
		if masters {
			info, err := t.infoOf(ctx, n.client, []string{"replication"})
			if err == nil && !strings.Contains(info, "role:master") {
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

// suffix names a node's sections and stats in a cluster; empty for a single server.
func (t *target) suffix(n node) string {
	if !t.cluster {
		return ""
	}
	return "@" + n.addr
}

// restricted reports whether the profile says the service refuses a command: an
// entry names a command ("DEBUG") or a command with its first arguments
// ("CONFIG GET").
func (t *target) restricted(cmd ...string) bool {
	return slices.ContainsFunc(t.profile.Restricted, func(r string) bool {
		words := strings.Fields(r)
		if len(words) == 0 || len(words) > len(cmd) {
			return false
		}
		for i, w := range words {
			if !strings.EqualFold(w, cmd[i]) {
				return false
			}
		}
		return true
	})
}

// Count sums the profile's count command (DBSIZE by default) over the masters. A
// profile whose count reports the result of a background scan (Kvrocks, Pika)
// triggers that scan first and waits until its result is ready.
func (t *target) Count(ctx context.Context) (int64, error) {
	var total int64
	for _, n := range t.nodes(ctx, true) {
		if len(t.profile.Count.Trigger) > 0 {
			if err := t.triggerCount(ctx, n); err != nil {
				return 0, err
			}
		}
		cctx, cancel := context.WithTimeout(ctx, t.timeout)
		v, err := n.client.Do(cctx, n.client.B().Arbitrary(t.profile.Count.Command...).Build()).AsInt64()
		cancel()
		if err != nil {
			return 0, fmt.Errorf("%s on %s: %w", strings.Join(t.profile.Count.Command, " "), n.addr, err)
		}
		total += v
	}
	return total, nil
}

// countPoll is how often a triggered count's progress is read.
const countPoll = 100 * time.Millisecond

// triggerCount starts the profile's background key count on one node and waits
// until its result is ready. The result must come from a scan that started after
// the count was asked for (after the writes it counts): a scan already running
// then is waited for, never taken — a profile's wait.ready says when none runs
// (Pika), and its count.busy says which refusals of the trigger mean one runs
// (Kvrocks' "ERR scanning the db now", with dbsize-scan-cron set).
func (t *target) triggerCount(ctx context.Context, n node) error {
	w := t.profile.Count.Wait
	trigger := strings.Join(t.profile.Count.Trigger, " ")
	deadline := time.Now().Add(w.Timeout)
	for {
		if w.ready != nil {
			// A scan queued or running shows a line that is not ready yet.
			if err := t.pollCount(ctx, n, deadline, "a scan already running had not ended", func(now string, present bool) bool {
				return !present || w.ready.MatchString(now)
			}); err != nil {
				return err
			}
		}
		info, err := t.infoOf(ctx, n.client, []string{w.Info})
		if err != nil {
			return fmt.Errorf("INFO %s on %s before %s: %w", w.Info, n.addr, trigger, err)
		}
		before, _ := w.value(info)
		if w.Changed {
			// The watched value may be a time in whole seconds (Kvrocks' last scan
			// time): a scan ending within the second the previous one ended would
			// look unchanged. Let a second pass first.
			if err := sleep(ctx, time.Second); err != nil {
				return err
			}
		}
		cctx, cancel := context.WithTimeout(ctx, t.timeout)
		err = n.client.Do(cctx, n.client.B().Arbitrary(t.profile.Count.Trigger...).Build()).Error()
		cancel()
		if err == nil {
			return t.pollCount(ctx, n, deadline, "the key count was not ready", func(now string, present bool) bool {
				return w.done(now, present, before)
			})
		}
		if !t.profile.Count.busy(err) {
			return fmt.Errorf("%s on %s (starts the key count): %w", trigger, n.addr, err)
		}
		// Another scan runs, perhaps since before the last writes: let it end,
		// then start one of our own.
		if w.Changed {
			if err := t.pollCount(ctx, n, deadline, "a scan already running (the trigger answered "+err.Error()+") had not ended", func(now string, present bool) bool {
				return present && now != before
			}); err != nil {
				return err
			}
			continue
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s on %s: still refused after %v: %w", trigger, n.addr, w.Timeout, err)
		}
		if err := sleep(ctx, countPoll); err != nil {
			return err
		}
	}
}

// pollCount reads the watched INFO line of one node until done says so, or the
// deadline passes; what says what had not happened by then.
func (t *target) pollCount(ctx context.Context, n node, deadline time.Time, what string, done func(now string, present bool) bool) error {
	w := t.profile.Count.Wait
	trigger := strings.Join(t.profile.Count.Trigger, " ")
	for {
		info, err := t.infoOf(ctx, n.client, []string{w.Info})
		if err != nil {
			return fmt.Errorf("INFO %s on %s, polled for %s: %w", w.Info, n.addr, trigger, err)
		}
		now, present := w.value(info)
		if done(now, present) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s on %s: %s after %v (INFO %s line %q is %q)", trigger, n.addr, what, w.Timeout, w.Info, w.Line, now)
		}
		if err := sleep(ctx, countPoll); err != nil {
			return err
		}
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// ReadRecord is HGETALL, routed to the key's shard in a cluster.
func (t *target) ReadRecord(ctx context.Context, key []byte) (map[string][]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	m, err := t.client.Do(cctx, t.client.B().Hgetall().Key(string(key)).Build()).AsStrMap()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out, nil
}

// Flush is FLUSHALL on every master; cmpbench calls it only for systems marked
// disposable.
func (t *target) Flush(ctx context.Context) error {
	if t.restricted("FLUSHALL") {
		return fmt.Errorf("profile %s: the service does not allow FLUSHALL", t.profile.Name)
	}
	for _, n := range t.nodes(ctx, true) {
		// FLUSHALL can take longer than an operation: Pika 4.0.1 takes 0.3 to
		// 0.7 s idle, seconds beside other work. Sent as a blocking command,
		// it is bounded by this context alone, not by the connection timeout.
		cctx, cancel := context.WithTimeout(ctx, 10*t.timeout)
		err := n.client.Do(cctx, n.client.B().Arbitrary("FLUSHALL").Blocking()).Error()
		cancel()
		if err != nil {
			return fmt.Errorf("FLUSHALL on %s: %w", n.addr, err)
		}
	}
	return nil
}

// Capture reads INFO, CONFIG GET * and the profile's capture commands from every
// node. Commands a server refuses (restricted managed services, ACL users without the
// right) are recorded as refused, never fatal.
func (t *target) Capture(ctx context.Context) (core.Capture, error) {
	cp := core.Capture{Sections: map[string]string{}}
	if c := t.profile.caveats(); c != "" {
		cp.Sections[core.CaptureCaveats] = c
	}
	for i, n := range t.nodes(ctx, false) {
		sfx := t.suffix(n)
		info, err := t.infoOf(ctx, n.client, t.profile.InfoSections)
		if err != nil {
			if _, ok := rueidis.IsRedisErr(err); !ok && !errors.Is(err, errEmptyInfo) {
				return cp, fmt.Errorf("INFO on %s: %w", n.addr, err)
			}
			cp.Refused = append(cp.Refused, "INFO"+sfx+": "+err.Error())
		} else {
			cp.Sections[sectionName("info", sfx)] = info
			if i == 0 {
				t.version(&cp, ParseInfo(info))
			}
		}
		for _, c := range t.profile.Capture {
			name := strings.Join(c, " ")
			if t.restricted(c...) {
				cp.Refused = append(cp.Refused, name+sfx+": restricted by profile "+t.profile.Name)
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, t.timeout)
			out, err := n.client.Do(cctx, n.client.B().Arbitrary(c...).Build()).ToAny()
			cancel()
			if err != nil {
				cp.Refused = append(cp.Refused, name+sfx+": "+err.Error())
				continue
			}
			cp.Sections[sectionName("cmd-"+strings.ToLower(strings.ReplaceAll(name, " ", "-")), sfx)] = fmt.Sprintf("%v\n", out)
		}
		if t.restricted("CONFIG", "GET", "*") {
			cp.Refused = append(cp.Refused, "CONFIG GET *"+sfx+": restricted by profile "+t.profile.Name)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, t.timeout)
		cfg, err := n.client.Do(cctx, n.client.B().ConfigGet().Parameter("*").Build()).AsStrMap()
		cancel()
		if err != nil {
			if _, ok := rueidis.IsRedisErr(err); !ok {
				return cp, fmt.Errorf("CONFIG GET * on %s: %w", n.addr, err)
			}
			cp.Refused = append(cp.Refused, "CONFIG GET *"+sfx+": "+err.Error())
			continue
		}
		cp.Sections[sectionName("config", sfx)] = formatConfig(cfg)
	}
	return cp, nil
}

// checkRequired refuses a server whose INFO does not show what the profile
// requires of its product (Profile.Require), on every node.
func (t *target) checkRequired(ctx context.Context) error {
	for _, r := range t.profile.Require {
		section, _, _ := strings.Cut(r.Field, ".")
		for _, n := range t.nodes(ctx, false) {
			info, err := t.infoOf(ctx, n.client, []string{section})
			if err != nil {
				return fmt.Errorf("profile %s: INFO %s on %s: %w", t.profile.Name, section, n.addr, err)
			}
			got, ok := ParseInfo(info)[r.Field]
			if ok && got == r.Value {
				continue
			}
			_, key, _ := strings.Cut(r.Field, ".")
			says := "has no " + key
			if ok {
				says = "says " + key + ":" + got
			}
			msg := fmt.Sprintf("profile %s needs INFO %s %s:%s; %s %s", t.profile.Name, section, key, r.Value, n.addr, says)
			if r.Why != "" {
				msg += ": " + r.Why
			}
			return core.Refused(errors.New(msg))
		}
	}
	return nil
}

func sectionName(name, suffix string) string {
	return name + strings.NewReplacer("@", "-", ":", "-").Replace(suffix)
}

// errEmptyInfo is an INFO that answered nothing.
var errEmptyInfo = errors.New("empty reply")

// infoOf reads INFO with the first section argument the server accepts; a plain
// INFO (also the "" entry) is the last resort. Some servers answer an argument they
// do not know with an empty reply rather than an error (Dragonfly, EloqKV): that is
// a refusal too.
func (t *target) infoOf(ctx context.Context, c rueidis.Client, sections []string) (string, error) {
	var last error
	for _, section := range append(append([]string(nil), sections...), "") {
		cctx, cancel := context.WithTimeout(ctx, t.timeout)
		cmd := c.B().Arbitrary("INFO")
		if section != "" {
			cmd = cmd.Args(strings.Fields(section)...)
		}
		s, err := c.Do(cctx, cmd.Build()).ToString()
		cancel()
		s = strings.TrimPrefix(s, "txt:") // RESP3 sends INFO as a verbatim string
		if err == nil && strings.TrimSpace(s) != "" {
			return s, nil
		}
		if err == nil {
			last = fmt.Errorf("INFO %s: %w", section, errEmptyInfo)
			continue
		}
		last = err
		if _, ok := rueidis.IsRedisErr(err); !ok {
			break
		}
	}
	return "", last
}

// Stats returns INFO of every node as section.key -> value; in a cluster each key
// is suffixed with @node. core.StatTimeline names the profile's timeline fields
// the nodes report.
func (t *target) Stats(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	var timeline []string
	for _, n := range t.nodes(ctx, false) {
		info, err := t.infoOf(ctx, n.client, t.profile.InfoSections)
		if err != nil {
			return nil, fmt.Errorf("INFO on %s: %w", n.addr, err)
		}
		sfx := t.suffix(n)
		st := ParseInfo(info)
		for k, v := range st {
			out[k+sfx] = v
		}
		// What tells cmpbench the server restarted between two samples.
		if id := st["server.run_id"]; id != "" {
			out[core.StatInstance+sfx] = id
		}
		if up := st["server.uptime_in_seconds"]; up != "" {
			out[core.StatUptime+sfx] = up
		}
		if n := st["clients.connected_clients"]; n != "" {
			out[core.StatConnections+sfx] = n
		}
		// What the node counted of each op kind's commands (core.StatCalls).
		calls, source := t.profile.calls(st)
		for k, v := range calls {
			out[k+sfx] = v
		}
		if source != "" {
			out[core.StatCallsSource] = source
		}
		// What the report charts over a phase: the profile's fields the node has.
		for _, f := range core.TimelineKeys(t.profile.timeline(st)) {
			if !slices.Contains(timeline, f) {
				timeline = append(timeline, f)
			}
		}
	}
	if len(timeline) > 0 {
		out[core.StatTimeline] = strings.Join(timeline, ",")
	}
	return out, nil
}

// RedactConfig reports whether a CONFIG parameter holds a credential: requirepass,
// masterauth, tls-key-file-pass and the like.
func RedactConfig(key string) bool {
	k := strings.ToLower(key)
	return k == "masterauth" || strings.HasSuffix(k, "pass") || strings.Contains(k, "password") ||
		strings.Contains(k, "secret") || strings.Contains(k, "token")
}

// formatConfig writes CONFIG GET * as "key value" lines, credentials
// redacted. An empty one stays empty, as Tendis quotes it too (requirepass
// ""): what the capture says of it is that there is none.
func formatConfig(cfg map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		v := cfg[k]
		if RedactConfig(k) && v != "" && v != `""` {
			v = "[redacted]"
		}
		fmt.Fprintf(&b, "%s %s\n", k, v)
	}
	return b.String()
}

// calls reads from a node's INFO commandstats how many requests of each op kind's
// commands it has counted (calls and rejected calls, whatever their outcome),
// keyed by core.CallsKey: op kinds that share a command (HSET for UPDATE and
// INSERT) form one group. Nothing when the node's INFO has no commandstats. The
// source says which commands were counted for which op kinds.
func (p *Profile) calls(info map[string]string) (map[string]string, string) {
	sampled := false
	for k := range info {
		if strings.HasPrefix(k, "commandstats.") {
			sampled = true
			break
		}
	}
	if !sampled {
		return nil, ""
	}
	commands := map[core.OpKind][]string{
		core.OpGet: {"get"}, core.OpSet: {"set"}, core.OpPublish: {"publish"}, core.OpDelete: {"del"}, core.OpIncr: {"incrby"},
		core.OpRead: firstWords(p.Commands.Read), core.OpUpdate: firstWords(p.Commands.Update, p.Commands.UpdateField),
		core.OpInsert: firstWords(p.Commands.Insert),
	}
	// Group the op kinds that share a command, and their commands.
	var groups [][]core.OpKind
	var groupCmds [][]string
	for _, op := range slices.Sorted(maps.Keys(commands)) {
		cmds := commands[op]
		if len(cmds) == 0 {
			continue
		}
		joined := -1
		for g := range groups {
			if slices.ContainsFunc(cmds, func(c string) bool { return slices.Contains(groupCmds[g], c) }) {
				joined = g
				break
			}
		}
		if joined < 0 {
			groups, groupCmds = append(groups, nil), append(groupCmds, nil)
			joined = len(groups) - 1
		}
		groups[joined] = append(groups[joined], op)
		for _, c := range cmds {
			if !slices.Contains(groupCmds[joined], c) {
				groupCmds[joined] = append(groupCmds[joined], c)
			}
		}
	}
	out := map[string]string{}
	var parts []string
	for g, ops := range groups {
		var n int64
		for _, c := range groupCmds[g] {
			n += commandCalls(info["commandstats.cmdstat_"+c])
		}
		out[core.CallsKey(ops...)] = strconv.FormatInt(n, 10)
		names := make([]string, len(ops))
		for i, o := range ops {
			names[i] = o.String()
		}
		parts = append(parts, strings.Join(names, "+")+" = "+strings.Join(groupCmds[g], " + "))
	}
	return out, "INFO commandstats, calls and rejected_calls: " + strings.Join(parts, "; ")
}

// firstWords are the command names (lower case) of command lines.
func firstWords(lines ...[]string) []string {
	var out []string
	for _, l := range lines {
		if len(l) > 0 {
			if c := strings.ToLower(l[0]); !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// commandCalls reads calls and rejected_calls from a commandstats value
// ("calls=10,usec=…,rejected_calls=0,failed_calls=0"); 0 for a command never run.
func commandCalls(v string) int64 {
	var n int64
	for _, kv := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if k == "calls" || k == "rejected_calls" {
			c, _ := strconv.ParseInt(val, 10, 64)
			n += c
		}
	}
	return n
}
