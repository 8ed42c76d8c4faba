// Command cmpbench-adapter-template is a template for a third-party cmpbench adapter:
// copy this directory, rename the adapter (name below, the Makefile's NAME, the
// module in go.mod) and replace the protocol code in conn.go with your system's.
//
// As written it benchmarks redis-server, GET and SET only, through a minimal
// hand-written RESP client, so that every part of an adapter is in view: options
// read and checked in Open, refusals, error classes, the optional Counter and
// Flusher, capture and stats, the facts the fairness audit compares (Facts), and
// a system of several servers (every node's
// address in core.SystemConfig.Nodes), over which it shards the keys. An adapter executes operations and reads the server;
// it never times, logs or prints: cmpbench's engine, running inside this process,
// does that (see ../../README.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/plugins/sdk"
)

func main() { sdk.Serve(adapter{}) }

// name is the adapter's name: the binary must be called cmpbench-adapter-<name>, and
// systems choose it with `adapter: <name>`.
const name = "template"

// defaultTimeout bounds one operation when the system gives no `timeout:`.
const defaultTimeout = 5 * time.Second

type adapter struct{}

// Info says what the adapter executes. Ops is a contract: a phase whose workload
// issues an op kind not listed here fails without running. What else cmpbench may
// call is decided by the interfaces the target implements (here core.Counter and
// core.Flusher).
func (adapter) Info() core.Info {
	return core.Info{Name: name, Version: "0.1.0", Ops: []core.OpKind{core.OpGet, core.OpSet},
		// Declared, cmpbench checks a systems file's options against them at
		// --dry-run, with file:line: an unknown name or a value of the wrong type
		// never reaches Open.
		Options: []core.Option{
			{Name: "db", Type: core.OptionInt, Default: "0", Doc: "the database to SELECT: the system is this database only"},
			{Name: "client_name", Type: core.OptionString, Default: "cmpbench", Doc: "CLIENT SETNAME of every connection, one word"},
		}}
}

// ValidateSystem implements core.SystemValidator: what the declared types cannot
// say (a negative database, a name with spaces, TLS this adapter cannot speak) is
// found at --dry-run too, without connecting.
func (adapter) ValidateSystem(sys core.SystemConfig) error {
	_, err := check(sys)
	return err
}

// check reads the system's options and refuses what this adapter cannot do.
func check(sys core.SystemConfig) (options, error) {
	opts, err := parseOptions(sys.Options)
	if err != nil {
		return opts, err
	}
	if sys.TLS.Enabled {
		// Never "TLS off" when the file asks for TLS.
		return opts, errors.New("this adapter does not speak TLS (tls.enabled is true)")
	}
	if sys.Profile != "" {
		return opts, fmt.Errorf("this adapter has no profiles (profile: %s)", sys.Profile)
	}
	return opts, nil
}

// options are the adapter's settings, from the system's `options:` in the systems
// file (core.SystemConfig.Options).
type options struct {
	db         int    // the database to SELECT: the system is this database only
	clientName string // CLIENT SETNAME of every connection, to tell them in CLIENT LIST
}

// parseOptions reads and checks the options, reporting every problem at once. An
// unknown key is an error: a misspelt option must never be silently ignored. An
// option's default is declared once, in Info: cmpbench puts it in the options
// before Open and ValidateSystem when the systems file does not give the option.
func parseOptions(m map[string]string) (options, error) {
	var o options
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch k {
		case "db":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				errs = append(errs, fmt.Errorf("option db: %q is not a database number (0, 1, ...)", v))
				continue
			}
			o.db = n
		case "client_name":
			if v == "" || strings.ContainsAny(v, " \t\r\n") {
				errs = append(errs, fmt.Errorf("option client_name: %q must be one word", v))
				continue
			}
			o.clientName = v
		default:
			errs = append(errs, fmt.Errorf("unknown option %q (this adapter has db and client_name)", k))
		}
	}
	return o, errors.Join(errs...)
}

// Open checks the system's settings and connects once to every node. Errors that
// waiting cannot fix are refusals (core.Refused): cmpbench reports them at once.
// Any other error (nothing listening yet) makes cmpbench try Open again while the
// servers start.
func (adapter) Open(ctx context.Context, sys core.SystemConfig) (core.Target, error) {
	opts, err := check(sys)
	if err != nil {
		// A refusal: cmpbench does not retry it while a server starts.
		return nil, core.Refused(err)
	}
	if len(sys.Nodes) == 0 {
		return nil, core.Refused(errors.New("no server to connect to (core.SystemConfig.Nodes is empty)"))
	}
	t := &target{sys: sys, opts: opts, timeout: sys.Timeout}
	if t.timeout <= 0 {
		t.timeout = defaultTimeout
	}
	for _, addr := range sys.Nodes {
		c, err := t.dial(ctx, addr)
		if err != nil {
			return nil, err
		}
		_ = c.Close()
	}
	return t, nil
}

// target is one system: a redis-server database, or the same database on several
// independent redis-servers (sys.Nodes, as cmpbench started them for
// `provision: {nodes: N}`), each holding the keys that hash to it. It holds no
// connection of its own: each call below dials one, which is simple and costs
// nothing measured (the engine never counts or samples inside an operation).
type target struct {
	sys     core.SystemConfig // holds the password: never print or capture it
	opts    options
	timeout time.Duration
}

// Connect opens one worker's connection, to every node; the engine owns it for a
// whole phase.
func (t *target) Connect(ctx context.Context) (core.Conn, error) {
	s := make(shards, 0, len(t.sys.Nodes))
	for _, addr := range t.sys.Nodes {
		c, err := t.dial(ctx, addr)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s = append(s, c)
	}
	return s, nil
}

// suffix names a node's stats keys and capture sections: "" for a single server,
// "@host:port" for each node of several (core/statkeys.go), so that cmpbench
// tells a restart of each node and sums their counters.
func (t *target) suffix(addr string) string {
	if len(t.sys.Nodes) == 1 {
		return ""
	}
	return "@" + addr
}

// Capture identifies the servers for the archive: product and version (the first
// node's), and every node's INFO as text. INFO holds no password; CONFIG GET would
// (requirepass), so it is not captured.
func (t *target) Capture(ctx context.Context) (core.Capture, error) {
	cp := core.Capture{Product: "redis", Sections: map[string]string{}, VersionField: "INFO server.redis_version"}
	for i, addr := range t.sys.Nodes {
		info, err := t.control(ctx, addr, "INFO")
		if err != nil {
			return core.Capture{}, fmt.Errorf("INFO on %s: %w", addr, err)
		}
		cp.Sections["info"+t.suffix(addr)] = info
		if i == 0 {
			cp.Version = parseInfo(info)["server.redis_version"]
		}
	}
	return cp, nil
}

// Facts implements core.FactReader: what the captured INFO says of the settings
// the fairness audit compares, read from the sections alone (the SDK calls it on
// every capture, and the archive keeps what it returns). The first node's INFO
// tells the copies kept and the memory limit; what a crash loses needs CONFIG
// GET, which this adapter does not capture, so durability stays unknown (a
// zero Fact), as does anything the capture does not show: never guess. A value
// the server gave is quoted (core.Quoted); Class is what must be equal between
// two systems for a fair comparison, in core.Facts' words where they fit.
func (adapter) Facts(sections map[string]string) core.Facts {
	first := sections["info"]
	for _, k := range slices.Sorted(maps.Keys(sections)) {
		if first == "" && strings.HasPrefix(k, "info@") {
			first = sections[k]
		}
	}
	info := parseInfo(first)
	var f core.Facts
	if role := info["replication.role"]; role != "" {
		replicas, _ := strconv.Atoi(info["replication.connected_slaves"])
		f.Replication = core.Fact{Words: core.Quoted(role) + ", " + strconv.Itoa(replicas) + " replica(s)", Class: strconv.Itoa(replicas + 1)}
	}
	if mm := info["memory.maxmemory"]; mm == "0" {
		f.Memory = core.Fact{Words: "no limit", Class: "unlimited"}
	} else if mm != "" {
		policy := info["memory.maxmemory_policy"]
		f.Memory = core.Fact{Words: "maxmemory " + core.BytesWords(mm) + ", " + core.Quoted(policy), Class: "limit " + policy}
	}
	return f
}

// Stats returns every node's INFO as section.key values, plus the keys every
// adapter shares (core.StatInstance, StatUptime, StatConnections) so that cmpbench
// notices a server that restarted and counts the connections the server saw. Of
// several nodes, each key carries the node's suffix (suffix); StatTimeline is said
// once, without one.
func (t *target) Stats(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, addr := range t.sys.Nodes {
		info, err := t.control(ctx, addr, "INFO")
		if err != nil {
			return nil, fmt.Errorf("INFO on %s: %w", addr, err)
		}
		st := parseInfo(info)
		for key, field := range map[string]string{
			core.StatInstance:    "server.run_id",
			core.StatUptime:      "server.uptime_in_seconds",
			core.StatConnections: "clients.connected_clients",
		} {
			if v := st[field]; v != "" {
				st[key] = v
			}
		}
		for k, v := range st {
			out[k+t.suffix(addr)] = v
		}
	}
	out[core.StatTimeline] = "memory.used_memory" // what the report charts over a phase, summed over the nodes
	return out, nil
}

// Count implements core.Counter: the keys of the system's database, summed over
// the nodes. With it cmpbench checks a load (the count must equal the successful
// writes), refuses to write to a system holding data it did not write, and checks
// the data after a restart.
func (t *target) Count(ctx context.Context) (int64, error) {
	var total int64
	for _, addr := range t.sys.Nodes {
		reply, err := t.control(ctx, addr, "DBSIZE")
		if err != nil {
			return 0, fmt.Errorf("DBSIZE on %s: %w", addr, err)
		}
		n, err := strconv.ParseInt(reply, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("DBSIZE on %s: %w", addr, err)
		}
		total += n
	}
	return total, nil
}

// Flush implements core.Flusher: cmpbench empties a system marked `disposable: true`
// that holds data before a load. FLUSHDB on every node, never FLUSHALL: the
// servers' other databases are not this system.
func (t *target) Flush(ctx context.Context) error {
	for _, addr := range t.sys.Nodes {
		if _, err := t.control(ctx, addr, "FLUSHDB"); err != nil {
			return fmt.Errorf("FLUSHDB on %s: %w", addr, err)
		}
	}
	return nil
}

func (t *target) Close(context.Context) error { return nil }

// control runs one command on a connection of its own to the node at addr and
// returns its reply.
func (t *target) control(ctx context.Context, addr string, args ...string) (string, error) {
	c, err := t.dial(ctx, addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.command(args...)
}

// parseInfo turns INFO text into section.key -> value, sections lower-cased.
func parseInfo(info string) map[string]string {
	out := map[string]string{}
	section := ""
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		if s, ok := strings.CutPrefix(line, "#"); ok {
			section = strings.ToLower(strings.TrimSpace(s))
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[section+"."+k] = v
		}
	}
	return out
}
