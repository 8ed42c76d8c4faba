package resp

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cmpbench/cmpbench/core"
)

// The facts a RESP server's captures say of it (core.Facts): what it loses on a
// crash or power loss, what it does at its memory limit, how many copies it
// keeps and how many threads serve. Products store their data differently —
// Pika, Kvrocks, Tendis and KeyDB on FLASH keep it in RocksDB whatever save and
// appendonly say (Tendis has neither) — so each has its own readers, chosen by what INFO shows of it
// (its version fields, KeyDB's storage_provider), never by the profile the run
// named: an archive's sections are all the reader has.

// Facts implements core.FactReader: it reads CONFIG GET * ("config") and INFO
// ("info") of the first node.
func (Adapter) Facts(sections map[string]string) core.Facts {
	var c captures
	if text, ok := nodeSection(sections, "config"); ok {
		c.config = parseConfig(text)
	}
	if text, ok := nodeSection(sections, "info"); ok {
		c.info = ParseInfo(text)
	}
	p := c.product()
	return core.Facts{Durability: p.durability(c), Replication: c.replication(), Memory: p.memory(c), Threads: c.threads()}
}

// captures are a server's CONFIG GET * (key -> value) and INFO (section.key ->
// value, ParseInfo); nil when not captured.
type captures struct {
	config, info map[string]string
}

// nodeSection is the section called name: the server's own, else in a cluster
// the first node's in the order of their names ("config-10.0.0.1-7000",
// sectionName).
func nodeSection(sections map[string]string, name string) (string, bool) {
	if text, ok := sections[name]; ok {
		return text, true
	}
	for _, k := range slices.Sorted(maps.Keys(sections)) {
		if rest, ok := strings.CutPrefix(k, name+"-"); ok && isAddress(rest) {
			return sections[k], true
		}
	}
	return "", false
}

// isAddress reports whether a section name's rest is a node's address as
// sectionName writes it ("10.0.0.1-6379", "host-6379"), never a capture of its
// own.
func isAddress(rest string) bool {
	i := strings.LastIndex(rest, "-")
	if i <= 0 {
		return false
	}
	_, err := strconv.Atoi(rest[i+1:])
	return err == nil
}

// parseConfig reads CONFIG GET * as formatConfig writes it: "key value" lines.
func parseConfig(text string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(text) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			m[k] = strings.TrimSpace(v)
		} else if k != "" {
			m[k] = ""
		}
	}
	return m
}

// product is a kind of server whose durability and memory its own readers
// read.
type product struct {
	durability, memory func(captures) core.Fact
}

// products are the servers read other than as Redis: Redis' readers (CONFIG
// GET's appendonly, save, maxmemory) read every other, Valkey and KeyDB in
// memory among them.
var products = map[string]product{
	"kvrocks":     {kvrocksDurability, kvrocksMemory},
	"pika":        {pikaDurability, pikaMemory},
	"tendis":      {tendisDurability, tendisMemory},
	"keydb-flash": {keydbFlashDurability, keydbFlashMemory},
	"dragonfly":   {dragonflyDurability, dragonflyMemory},
}

// product is the product c's INFO shows: its version fields (detectProduct),
// and KeyDB on FLASH by its storage_provider.
func (c captures) product() product {
	name, _, _ := detectProduct(c.info)
	if c.info["memory.storage_provider"] == "flash" {
		name = "keydb-flash"
	}
	if p, ok := products[name]; ok {
		return p
	}
	return product{redisDurability, redisMemory}
}

func redisDurability(c captures) core.Fact {
	switch {
	case c.config["appendonly"] == "yes":
		switch c.config["appendfsync"] {
		case "always":
			return core.Fact{Words: "appendfsync always: no acknowledged write lost on power loss", Class: "always"}
		case "everysec":
			return core.Fact{Words: "appendfsync everysec: up to 1 s of writes lost on power loss", Class: "1s"}
		default:
			return core.Fact{Words: "appendfsync no: the OS flushes (about 30 s); writes lost on power loss", Class: "os"}
		}
	case c.config["appendonly"] == "no" && c.config["save"] != "":
		return core.Fact{Words: "RDB snapshots only (save " + core.Quoted(c.config["save"]) + "): writes since the last snapshot lost on a crash", Class: "snapshot"}
	case c.config["appendonly"] == "no":
		return core.Fact{Words: "no persistence: every write lost on a restart", Class: core.DurabilityNone}
	}
	return core.Fact{}
}

// rocksDB is a store that keeps every write in RocksDB, its write-ahead log
// written but not synced (RocksDB's default, WriteOptions.sync false); why
// says what tells so.
func rocksDB(why string) string {
	return "RocksDB, its write-ahead log not synced (" + why + "): kept across a crash of the server, writes lost on power loss until the OS flushes"
}

// kvrocksDurability reads Kvrocks' RocksDB write options.
func kvrocksDurability(c captures) core.Fact {
	switch {
	case c.config == nil:
		return core.Fact{Words: "RocksDB (its write options not captured): kept across a restart; what a crash loses is unknown", Class: core.DurabilityKept}
	case c.config["rocksdb.write_options.disable_wal"] == "yes":
		return core.Fact{Words: "RocksDB without its write-ahead log (rocksdb.write_options.disable_wal yes): writes not yet flushed from memory lost on a crash", Class: "memtable"}
	case c.config["rocksdb.write_options.sync"] == "yes":
		return core.Fact{Words: "RocksDB, its write-ahead log synced on every write (rocksdb.write_options.sync yes): no acknowledged write lost on power loss", Class: "always"}
	}
	return core.Fact{Words: rocksDB("rocksdb.write_options.sync no"), Class: "os"}
}

// pikaDurability: Pika 4 writes RocksDB with its write-ahead log, unsynced;
// save and appendonly, which CONFIG GET answers, do not apply to its data.
// (Its DISABLEWAL command turns the log off at run time, which no capture
// shows.)
func pikaDurability(captures) core.Fact {
	return core.Fact{Words: rocksDB("Pika's save and appendonly do not apply"), Class: "os"}
}

// tendisDurability reads Tendis' RocksDB write options (rocks_kvstore.cpp:
// WriteOptions.disableWAL is rocks.disable_wal, sync is
// rocks.flush_log_at_trx_commit). Its aof-enabled is a replication setting
// (psync to Redis), not a log of its data; its INFO persistence fields are all
// -1.
func tendisDurability(c captures) core.Fact {
	switch {
	case c.config == nil:
		return core.Fact{Words: "RocksDB (its write options not captured): kept across a restart; what a crash loses is unknown", Class: core.DurabilityKept}
	case c.config["rocks.disable_wal"] == "yes":
		return core.Fact{Words: "RocksDB without its write-ahead log (rocks.disable_wal yes): writes not yet flushed from memory lost on a crash", Class: "memtable"}
	case c.config["rocks.flush_log_at_trx_commit"] == "yes":
		return core.Fact{Words: "RocksDB, its write-ahead log synced on every write (rocks.flush_log_at_trx_commit yes): no acknowledged write lost on power loss", Class: "always"}
	}
	return core.Fact{Words: rocksDB("rocks.flush_log_at_trx_commit no"), Class: "os"}
}

// keydbFlashDurability: KeyDB on FLASH keeps every key in RocksDB, its log
// unsynced; with storage-cache-mode writeback a write reaches RocksDB only at
// the next flush (storage-flush-period, ms). An AOF, when on, is the more
// durable.
func keydbFlashDurability(c captures) core.Fact {
	if c.config["appendonly"] == "yes" {
		return redisDurability(c)
	}
	if c.config["storage-cache-mode"] == "writeback" {
		period := cmp.Or(c.config["storage-flush-period"], "500")
		return core.Fact{Words: "KeyDB on FLASH, storage-cache-mode writeback: writes reach RocksDB every " + core.Quoted(period) + " ms, those not yet there lost on a crash", Class: "flush " + period}
	}
	return core.Fact{Words: "KeyDB on FLASH: " + rocksDB("storage-cache-mode writethrough; save and appendonly do not apply"), Class: "os"}
}

// dragonflyDurability: Dragonfly writes a snapshot (dbfilename) when it stops
// cleanly and loads it when it starts; snapshot_cron adds periodic ones.
func dragonflyDurability(c captures) core.Fact {
	file, ok := c.config["dbfilename"]
	cron := c.config["snapshot_cron"]
	switch {
	case !ok:
		return core.Fact{}
	case file == "":
		return core.Fact{Words: "no snapshot (dbfilename empty): every write lost on a restart", Class: core.DurabilityNone}
	case cron != "":
		return core.Fact{Words: "snapshots (snapshot_cron " + core.Quoted(cron) + ") and on a clean stop: writes since the last snapshot lost on a crash", Class: "snapshot"}
	}
	return core.Fact{Words: "a snapshot on a clean stop only (no snapshot_cron): every write since the start lost on a crash", Class: "shutdown"}
}

func redisMemory(c captures) core.Fact {
	mm, ok := c.config["maxmemory"]
	if !ok {
		return core.Fact{}
	}
	policy := c.config["maxmemory-policy"]
	if mm == "0" {
		words := "no limit"
		if policy != "" {
			words += " (" + core.Quoted(policy) + ")"
		}
		return core.Fact{Words: words, Class: "unlimited"}
	}
	words := "maxmemory " + core.BytesWords(mm)
	if policy != "" {
		words += ", " + core.Quoted(policy)
	}
	return core.Fact{Words: words, Class: "limit " + policy}
}

// onDisk is a store whose data is on disk, not bounded by memory.
var onDisk = core.Fact{Words: "data on disk (RocksDB), not bounded by memory: nothing evicted", Class: "unlimited"}

func kvrocksMemory(c captures) core.Fact {
	if n := c.config["max-db-size"]; n != "" && n != "0" {
		return core.Fact{Words: "data on disk (RocksDB), max-db-size " + core.Quoted(n) + " GB: writes refused beyond it", Class: "limit noeviction"}
	}
	return onDisk
}

// pikaMemory: Pika's maxmemory (CONFIG GET) is RocksDB's write buffer, not a
// bound on its data.
func pikaMemory(captures) core.Fact { return onDisk }

// tendisMemory: Tendis has no maxmemory (its INFO used_memory is -1); its
// memory is RocksDB's block cache (rocks.blockcachemb) and memtables, a cache
// of data kept on disk.
func tendisMemory(c captures) core.Fact {
	if mb := c.config["rocks.blockcachemb"]; mb != "" {
		return core.Fact{Words: "data on disk (RocksDB, block cache rocks.blockcachemb " + core.Quoted(mb) + " MB), not bounded by memory: nothing evicted", Class: onDisk.Class}
	}
	return onDisk
}

// keydbFlashMemory: maxmemory bounds the keys KeyDB keeps in memory; the others
// stay on FLASH. maxstorage bounds FLASH.
func keydbFlashMemory(c captures) core.Fact {
	words := "data on FLASH (RocksDB)"
	if mm := c.config["maxmemory"]; mm != "" && mm != "0" {
		words += ", maxmemory " + core.BytesWords(mm) + " for the keys kept in memory"
	}
	if n := c.config["maxstorage"]; n != "" && n != "0" {
		return core.Fact{Words: words + ", maxstorage " + core.BytesWords(n) + ": writes refused beyond it", Class: "limit noeviction"}
	}
	return core.Fact{Words: words + ": nothing evicted", Class: "unlimited"}
}

// dragonflyMemory: Dragonfly's INFO gives maxmemory in bytes; it evicts only
// in cache mode, and refuses writes at the limit otherwise.
func dragonflyMemory(c captures) core.Fact {
	mm, ok := c.info["memory.maxmemory"]
	if !ok {
		return core.Fact{}
	}
	if c.info["memory.cache_mode"] == "cache" {
		return core.Fact{Words: "maxmemory " + core.BytesWords(mm) + ", cache_mode cache: evicts at the limit", Class: "limit evicts"}
	}
	return core.Fact{Words: "maxmemory " + core.BytesWords(mm) + ", cache_mode store: writes refused at the limit", Class: "limit noeviction"}
}

// replication says how many copies a server keeps: itself and its replicas.
func (c captures) replication() core.Fact {
	role := c.info["replication.role"]
	if role == "" {
		return core.Fact{}
	}
	n := cmp.Or(c.info["replication.connected_slaves"], "0")
	if n == "0" {
		return core.Fact{Words: core.Quoted(role) + ", no replica", Class: "1"}
	}
	replicas, _ := strconv.Atoi(n)
	return core.Fact{Words: core.Quoted(role) + ", " + core.Quoted(n) + " replica(s)", Class: strconv.Itoa(replicas + 1)}
}

// threads says how many threads a server serves requests with, as its product
// names them.
func (c captures) threads() core.Fact {
	for _, t := range []struct {
		from map[string]string
		key  string
	}{
		{c.config, "io-threads"}, {c.config, "server-threads"}, // KeyDB
		{c.config, "workers"}, {c.config, "thread-num"}, // Kvrocks, Pika
		{c.config, "executorthreadnum"}, // Tendis (and netiothreadnum for the sockets)
		{c.info, "server.thread_count"}, // Dragonfly
	} {
		if n := t.from[t.key]; n != "" {
			return core.Fact{Words: strings.TrimPrefix(t.key, "server.") + " " + core.Quoted(n)}
		}
	}
	return core.Fact{}
}
