package report

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// The facts the fairness audit reads of each system, from what its captures
// say: which product it is, and per product what it loses on a crash or power
// loss, what it does at its memory limit, how many copies it keeps and how many
// threads serve. Products store their data differently — Pika, Kvrocks and
// KeyDB on FLASH keep it in RocksDB whatever save and appendonly say — so each
// has its own readers, chosen by what the capture shows of it (INFO's version
// fields, KeyDB's storage_provider, Aerospike's get-config). What the run saw
// of the system wins over what its configuration reads as: a restart check that
// kept every key is never "every write lost" (restartEvidence).

// captures are a system's configuration as its captures say: CONFIG GET *
// (config.txt), INFO (info.txt), and Aerospike's service and namespace
// configuration (get-config), each a map of key to value; a cluster's first
// node, in the order of the capture's file names.
type captures struct {
	config, info, asService, asNamespace map[string]string
}

// readCaptures reads the captures the audit needs of every system.
func readCaptures(a *archive.Archive, systems []archive.SystemInfo) (map[string]captures, error) {
	out := map[string]captures{}
	for _, s := range systems {
		read := func(name string) ([]byte, error) { return a.ReadFile(archive.SystemsDir + "/" + s.Name + "/" + name) }
		c, err := readSystemCaptures(read, s.Files)
		if err != nil {
			return nil, err
		}
		out[s.Name] = c
	}
	return out, nil
}

// captureFiles are the captures the audit reads: their kind, the names a
// system's file has (the adapters' names; older archives' Aerospike names
// too), and how its text parses. A cluster's nodes each have their own, the
// node's address after the name ("config-10.0.0.1-6379.txt",
// "info-get-config-context-service@10.0.0.1-3000.txt"): the first in order is
// read.
var captureFiles = []struct {
	names []string
	parse func(string) map[string]string
	into  func(*captures) *map[string]string
}{
	{[]string{"info-get-config-context-service", "get-config:context=service"}, fields, func(c *captures) *map[string]string { return &c.asService }},
	{[]string{"info-get-config-context-namespace-namespace-", "info-get-config-context-namespace-id-", "get-config:context=namespace;"}, fields,
		func(c *captures) *map[string]string { return &c.asNamespace }},
	{[]string{"config"}, pairs(" "), func(c *captures) *map[string]string { return &c.config }},
	{[]string{"info"}, pairs(":"), func(c *captures) *map[string]string { return &c.info }},
}

// readSystemCaptures reads, of a system's files (in dir), the captures the
// audit needs, read reading each. Aerospike's files are told by their names; a system that has
// them has no CONFIG GET or INFO, whose names ("info-…") its own would match.
func readSystemCaptures(read func(name string) ([]byte, error), files []string) (captures, error) {
	var c captures
	for i, cf := range captureFiles {
		if i >= 2 && (c.asService != nil || c.asNamespace != nil) {
			break // Aerospike's, read first
		}
		f := captureFile(files, cf.names)
		if f == "" {
			continue
		}
		b, err := read(f)
		if err != nil {
			return c, err
		}
		*cf.into(&c) = cf.parse(string(b))
	}
	return c, nil
}

// captureFile is the file of files that holds the capture named one of names:
// name.txt, else the first that starts with name and a node's address ("-",
// "@"), or with name where name ends in a separator (a namespace's name
// follows); "" when there is none.
func captureFile(files []string, names []string) string {
	sorted := slices.Sorted(slices.Values(files))
	for _, n := range names {
		if slices.Contains(sorted, n+".txt") {
			return n + ".txt"
		}
	}
	for _, n := range names {
		for _, f := range sorted {
			rest, ok := strings.CutPrefix(f, n)
			if !ok || !strings.HasSuffix(f, ".txt") {
				continue
			}
			if strings.ContainsAny(n[len(n)-1:], "-;") || strings.HasPrefix(rest, "@") || strings.HasPrefix(rest, "-") && startsAddress(rest[1:]) {
				return f
			}
		}
	}
	return ""
}

// startsAddress reports whether a file name's rest begins with a node's address
// as the resp adapter writes it ("10.0.0.1-6379.txt", "host-6379.txt"): a
// name and a port, never a capture of its own ("info-get-config…").
func startsAddress(rest string) bool {
	i := strings.LastIndex(strings.TrimSuffix(rest, ".txt"), "-")
	if i <= 0 {
		return false
	}
	_, err := strconv.Atoi(strings.TrimSuffix(rest, ".txt")[i+1:])
	return err == nil && !strings.HasPrefix(rest, "get-config")
}

// pairs parses lines of "key<sep>value".
func pairs(sep string) func(string) map[string]string {
	return func(text string) map[string]string {
		m := map[string]string{}
		for _, line := range strings.Split(text, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), sep); ok && !strings.HasPrefix(k, "#") {
				m[k] = strings.TrimSpace(v)
			}
		}
		return m
	}
}

// fields parses an info answer of "key=value" pairs, separated by ';' (as
// asinfo prints it) or a line each (as the adapter captures it).
func fields(text string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.FieldsFunc(text, func(r rune) bool { return r == ';' || r == '\n' }) {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
			m[k] = v
		}
	}
	return m
}

// product is a kind of server whose facts the audit reads: is tells it from
// its captures; durability and memory read what it loses on a crash and what
// it does at its memory limit, in words and as a class that must match between
// systems for a fair comparison ("" when unknown).
type product struct {
	name               string
	is                 func(captures) bool
	durability, memory func(captures) (words, class string)
}

// products are tried in order; the first whose is holds reads the facts.
// Redis' readers (CONFIG GET's appendonly, save, maxmemory) come last: Redis,
// Valkey and KeyDB in memory read so.
var products = []product{
	{"aerospike", func(c captures) bool { return c.asService != nil || c.asNamespace != nil }, aerospikeDurability, aerospikeMemory},
	{"kvrocks", infoHas("kvrocks_version"), kvrocksDurability, kvrocksMemory},
	{"pika", infoHas("pika_version"), pikaDurability, pikaMemory},
	{"keydb-flash", func(c captures) bool { return c.info["storage_provider"] == "flash" }, keydbFlashDurability, keydbFlashMemory},
	{"dragonfly", infoHas("dragonfly_version"), dragonflyDurability, dragonflyMemory},
	{"redis", func(captures) bool { return true }, redisDurability, redisMemory},
}

func infoHas(key string) func(captures) bool {
	return func(c captures) bool { _, ok := c.info[key]; return ok }
}

// product is the product c shows.
func (c captures) product() product {
	for _, p := range products {
		if p.is(c) {
			return p
		}
	}
	return products[len(products)-1]
}

// durability says in words what a system loses on a crash or power loss, and
// its class: "none" (every write lost on a restart), "shutdown" (kept only
// across a clean stop), "snapshot", "memtable", "os" (the OS flushes), "1s",
// "always", "kept" (kept across a restart, what a crash loses unknown), or ""
// when unknown.
func (c captures) durability() (words, class string) { return c.product().durability(c) }

// memory says a system's memory limit and what it does at the limit: its
// class is "unlimited", "limit <what it does>", or "" when unknown.
func (c captures) memory() (words, class string) { return c.product().memory(c) }

func redisDurability(c captures) (words, class string) {
	switch {
	case c.config["appendonly"] == "yes":
		switch c.config["appendfsync"] {
		case "always":
			return "appendfsync always: no acknowledged write lost on power loss", "always"
		case "everysec":
			return "appendfsync everysec: up to 1 s of writes lost on power loss", "1s"
		default:
			return "appendfsync no: the OS flushes (about 30 s); writes lost on power loss", "os"
		}
	case c.config["appendonly"] == "no" && c.config["save"] != "":
		return "RDB snapshots only (save " + literal(c.config["save"]) + "): writes since the last snapshot lost on a crash", "snapshot"
	case c.config["appendonly"] == "no":
		return "no persistence: every write lost on a restart", "none"
	}
	return "—", ""
}

// rocksDB is a store that keeps every write in RocksDB, its write-ahead log
// written but not synced (RocksDB's default, WriteOptions.sync false); why
// says what tells so.
func rocksDB(why string) string {
	return "RocksDB, its write-ahead log not synced (" + why + "): kept across a crash of the server, writes lost on power loss until the OS flushes"
}

// kvrocksDurability reads Kvrocks' RocksDB write options.
func kvrocksDurability(c captures) (words, class string) {
	switch {
	case c.config == nil:
		return "RocksDB (its write options not captured): kept across a restart; what a crash loses is unknown", "kept"
	case c.config["rocksdb.write_options.disable_wal"] == "yes":
		return "RocksDB without its write-ahead log (rocksdb.write_options.disable_wal yes): writes not yet flushed from memory lost on a crash", "memtable"
	case c.config["rocksdb.write_options.sync"] == "yes":
		return "RocksDB, its write-ahead log synced on every write (rocksdb.write_options.sync yes): no acknowledged write lost on power loss", "always"
	}
	return rocksDB("rocksdb.write_options.sync no"), "os"
}

// pikaDurability: Pika 4 writes RocksDB with its write-ahead log, unsynced;
// save and appendonly, which CONFIG GET answers, do not apply to its data.
// (Its DISABLEWAL command turns the log off at run time, which no capture
// shows.)
func pikaDurability(captures) (words, class string) {
	return rocksDB("Pika's save and appendonly do not apply"), "os"
}

// keydbFlashDurability: KeyDB on FLASH keeps every key in RocksDB, its log
// unsynced; with storage-cache-mode writeback a write reaches RocksDB only at
// the next flush (storage-flush-period, ms). An AOF, when on, is the more
// durable.
func keydbFlashDurability(c captures) (words, class string) {
	if c.config["appendonly"] == "yes" {
		return redisDurability(c)
	}
	if c.config["storage-cache-mode"] == "writeback" {
		period := cmp.Or(c.config["storage-flush-period"], "500")
		return "KeyDB on FLASH, storage-cache-mode writeback: writes reach RocksDB every " + literal(period) + " ms, those not yet there lost on a crash", "flush " + period
	}
	return "KeyDB on FLASH: " + rocksDB("storage-cache-mode writethrough; save and appendonly do not apply"), "os"
}

// dragonflyDurability: Dragonfly writes a snapshot (dbfilename) when it stops
// cleanly and loads it when it starts; snapshot_cron adds periodic ones.
func dragonflyDurability(c captures) (words, class string) {
	file, ok := c.config["dbfilename"]
	cron := c.config["snapshot_cron"]
	switch {
	case !ok:
		return "—", ""
	case file == "":
		return "no snapshot (dbfilename empty): every write lost on a restart", "none"
	case cron != "":
		return "snapshots (snapshot_cron " + literal(cron) + ") and on a clean stop: writes since the last snapshot lost on a crash", "snapshot"
	}
	return "a snapshot on a clean stop only (no snapshot_cron): every write since the start lost on a crash", "shutdown"
}

func aerospikeDurability(c captures) (words, class string) {
	ns := c.asNamespace
	if ns == nil {
		return "—", ""
	}
	engine := ns["storage-engine"]
	switch {
	case engine == "memory" && ns["storage-engine.file[0]"] == "" && ns["storage-engine.device[0]"] == "":
		return "storage-engine memory: every write lost on a restart", "none"
	case ns["storage-engine.commit-to-device"] == "true":
		return "storage-engine " + literal(engine) + ", commit-to-device true: no acknowledged write lost on power loss", "always"
	case engine != "":
		// A write block is flushed when full or flush-max-ms after its first
		// write: the class is that bound, "1s" only at Redis everysec's.
		flush := cmp.Or(ns["storage-engine.flush-max-ms"], "1000")
		class := "flush " + flush + "ms"
		if flush == "1000" {
			class = "1s"
		}
		return "storage-engine " + literal(engine) + ", commit-to-device false: up to " + literal(flush) + " ms of writes lost on a crash or power loss", class
	}
	return "—", ""
}

func redisMemory(c captures) (words, class string) {
	mm, ok := c.config["maxmemory"]
	if !ok {
		return "—", ""
	}
	policy := c.config["maxmemory-policy"]
	if mm == "0" {
		return "no limit" + ifStr(policy != "", " ("+literal(policy)+")"), "unlimited"
	}
	return "maxmemory " + bytesWords(mm) + ifStr(policy != "", ", "+literal(policy)), "limit " + policy
}

// onDisk is a store whose data is on disk, not bounded by memory.
const onDisk = "data on disk (RocksDB), not bounded by memory: nothing evicted"

func kvrocksMemory(c captures) (words, class string) {
	if n := c.config["max-db-size"]; n != "" && n != "0" {
		return "data on disk (RocksDB), max-db-size " + literal(n) + " GB: writes refused beyond it", "limit noeviction"
	}
	return onDisk, "unlimited"
}

// pikaMemory: Pika's maxmemory (CONFIG GET) is RocksDB's write buffer, not a
// bound on its data.
func pikaMemory(captures) (words, class string) { return onDisk, "unlimited" }

// keydbFlashMemory: maxmemory bounds the keys KeyDB keeps in memory; the others
// stay on FLASH. maxstorage bounds FLASH.
func keydbFlashMemory(c captures) (words, class string) {
	words = "data on FLASH (RocksDB)"
	if mm := c.config["maxmemory"]; mm != "" && mm != "0" {
		words += ", maxmemory " + bytesWords(mm) + " for the keys kept in memory"
	}
	if n := c.config["maxstorage"]; n != "" && n != "0" {
		return words + ", maxstorage " + bytesWords(n) + ": writes refused beyond it", "limit noeviction"
	}
	return words + ": nothing evicted", "unlimited"
}

// dragonflyMemory: Dragonfly's INFO gives maxmemory in bytes; it evicts only
// in cache mode, and refuses writes at the limit otherwise.
func dragonflyMemory(c captures) (words, class string) {
	mm, ok := c.info["maxmemory"]
	if !ok {
		return "—", ""
	}
	if c.info["cache_mode"] == "cache" {
		return "maxmemory " + bytesWords(mm) + ", cache_mode cache: evicts at the limit", "limit evicts"
	}
	return "maxmemory " + bytesWords(mm) + ", cache_mode store: writes refused at the limit", "limit noeviction"
}

// aerospikeMemory: a namespace's bound (the data size of storage-engine memory,
// each file's size on a device), where writes stop and whether it evicts.
func aerospikeMemory(c captures) (words, class string) {
	ns := c.asNamespace
	for _, k := range []string{"storage-engine.data-size", "storage-engine.filesize", "memory-size"} {
		v := ns[k]
		if v == "" || v == "0" {
			continue
		}
		words = k + " " + bytesWords(v)
		if stop := ns["storage-engine.stop-writes-used-pct"]; stop != "" {
			words += ", writes stop at " + literal(stop) + "% used"
		}
		if evict := cmp.Or(ns["storage-engine.evict-used-pct"], ns["evict-used-pct"], ns["high-water-memory-pct"]); evict != "" && evict != "0" {
			return words + ", evicts at " + literal(evict) + "%", "limit evicts"
		}
		return words + ", no eviction", "limit noeviction"
	}
	return "—", ""
}

// replication says how many copies a system keeps.
func (c captures) replication() (words, class string) {
	if rf := c.asNamespace["replication-factor"]; rf != "" {
		return "replication-factor " + literal(rf), rf
	}
	if role := c.info["role"]; role != "" {
		n := cmp.Or(c.info["connected_slaves"], "0")
		if n == "0" {
			return literal(role) + ", no replica", "1"
		}
		return literal(role) + ", " + literal(n) + " replica(s)", strconv.Itoa(atoi(n) + 1)
	}
	return "—", ""
}

// threads says how many threads a system serves requests with, as its product
// names them.
func (c captures) threads() string {
	for _, t := range []struct {
		from map[string]string
		key  string
	}{
		{c.config, "io-threads"}, {c.config, "server-threads"}, // KeyDB
		{c.config, "workers"}, {c.config, "thread-num"}, // Kvrocks, Pika
		{c.info, "thread_count"}, {c.asService, "service-threads"}, // Dragonfly, Aerospike
	} {
		if n := t.from[t.key]; n != "" {
			return t.key + " " + literal(n)
		}
	}
	return "—"
}

// restartEvidence is what the restart check saw of a system: "kept" when it
// counted every key loaded after the server's restart, "lost" when the server
// came back empty, "" when it did not run or found otherwise.
func (d *data) restartEvidence(system string) string {
	for _, v := range d.validations {
		if v.System != system || v.Point != "after restart" {
			continue
		}
		switch {
		case strings.HasPrefix(v.Note, "not restart-durable"):
			return "lost"
		case v.OK() && v.Expected > 0 && v.Counted == v.Expected:
			return "kept"
		}
	}
	return ""
}

// withEvidence is a system's durability as the restart check corrects it: a
// check that kept every key is never "every write lost", one that lost every
// key is never a durable configuration.
func withEvidence(words, class, restart string) (string, string) {
	switch {
	case restart == "kept" && class == "none":
		return "the restart check kept every key, though the configuration reads as: " + words + "; what a crash loses is unknown", "kept"
	case restart == "kept" && class == "":
		return "the restart check kept every key; what a crash loses is unknown", "kept"
	case restart == "lost" && class == "":
		return "the restart check lost every key: every write lost on a restart", "none"
	case restart == "lost" && class != "none":
		return "the restart check lost every key, though the configuration reads as: " + words, "none"
	}
	return words, class
}

func bytesWords(s string) string {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return literal(s)
	}
	return core.BytesIEC(n)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
