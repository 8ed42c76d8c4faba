package resp

import (
	"strings"

	"github.com/cmpbench/cmpbench/core"
)

// What INFO says: its text as section.key fields, whatever the server's dialect,
// and which product and version the fields name.

// ParseInfo turns INFO text into section.key -> value, sections lower-cased, keys
// and values trimmed. What the servers print besides Redis' layout:
//   - A section header is "#" and one word ("# Keyspace", Pika's "#instance0_RocksDB");
//     Pika's "# Replication(MASTER)" is section replication. Other lines that start
//     with "#" are comments of the section they are in and are skipped: Kvrocks'
//     "# Last DBSIZE SCAN time: …" and "# WARN: DBSIZE SCAN never performed yet",
//     Pika's "# Time:…" and "# Duration: 0s".
//   - In commandstats every key is cmdstat_<command> and values have no spaces:
//     Pika prints "get:calls=1, usec=0.15, usec_per_call=0.15".
//   - Pika's keyspace lines "db0 Strings_keys=1, expires=0, invalid_keys=0" become
//     db0_strings -> "keys=1,expires=0,invalid_keys=0".
func ParseInfo(info string) map[string]string {
	out := map[string]string{}
	section := ""
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			if name, ok := sectionHeader(rest); ok {
				section = name
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			if k, v, ok = spacedPairs(line); !ok {
				continue
			}
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if section == "commandstats" {
			if !strings.HasPrefix(k, "cmdstat_") {
				k = "cmdstat_" + k
			}
			v = strings.ReplaceAll(v, ", ", ",")
		}
		out[section+"."+k] = v
	}
	return out
}

// sectionHeader reads what follows "#" on an INFO line: a section name when it is
// one word, lower-cased and without a parenthesised suffix (Pika's
// "Replication(MASTER)").
func sectionHeader(rest string) (string, bool) {
	name := strings.TrimSpace(rest)
	if name == "" || strings.ContainsAny(name, " \t:") {
		return "", false
	}
	if i := strings.IndexByte(name, '('); i > 0 && strings.HasSuffix(name, ")") {
		name = name[:i]
	}
	return strings.ToLower(name), true
}

// spacedPairs reads a line of Pika's keyspace section, "db0 Strings_keys=1,
// expires=0, invalid_keys=0", as db0_strings -> "keys=1,expires=0,invalid_keys=0".
func spacedPairs(line string) (string, string, bool) {
	name, pairs, ok := strings.Cut(line, " ")
	if !ok {
		return "", "", false
	}
	first, rest, _ := strings.Cut(pairs, ",")
	kind, n, ok := strings.Cut(first, "_keys=")
	if !ok || kind == "" || strings.ContainsAny(kind, " =") {
		return "", "", false
	}
	v := "keys=" + n
	if rest = strings.TrimSpace(rest); rest != "" {
		v += "," + strings.ReplaceAll(rest, ", ", ",")
	}
	return name + "_" + strings.ToLower(kind), v, true
}

// versionFields are INFO server fields naming a product version, most specific first:
// most Redis-compatible servers also report a redis_version they are compatible with.
var versionFields = []struct{ field, product string }{
	{"valkey_version", "valkey"},
	{"dragonfly_version", "dragonfly"},
	{"kvrocks_version", "kvrocks"},
	{"pika_version", "pika"},
	{"garnet_version", "garnet"},
	{"lavik_version", "lavik"},
	{"eloqkv_version", "eloqkv"},
	{"keydb_version", "keydb"},
	{"redis_version", "redis"},
}

// version finds the product and version in INFO. The profile names the product
// when one of its version fields is there, unless INFO shows a more specific
// product than that field does: a profile that reads redis_version (the default
// profile, a system that names none) on a Valkey, a Kvrocks or a KeyDB reports
// that product.
func (t *target) version(cp *core.Capture, fields map[string]string) {
	product, field, rank := detectProduct(fields)
	for _, f := range t.profile.VersionFields {
		if ver, ok := fields["server."+f]; ok {
			if fieldRank(f) <= rank {
				cp.Product, cp.Version, cp.VersionField = t.profile.Name, ver, "INFO server."+f
				return
			}
			break
		}
	}
	if product != "" {
		cp.Product, cp.Version, cp.VersionField = product, fields["server."+field], "INFO server."+field
	}
}

// fieldRank is how specific a version field is: its place in versionFields,
// most specific first; a field not there names a product of its own (0).
func fieldRank(field string) int {
	for i, v := range versionFields {
		if v.field == field {
			return i
		}
	}
	return 0
}

// detectProduct names the product from INFO alone: the most specific version
// field there, and for redis_version what Redis does not print (redisLike). The
// rank says how specific that is (fieldRank); len(versionFields) when nothing is
// found.
func detectProduct(fields map[string]string) (product, field string, rank int) {
	for i, v := range versionFields {
		if _, ok := fields["server."+v.field]; ok {
			if v.product == "redis" {
				if p := redisLike(fields); p != "redis" {
					return p, v.field, i - 1 // as specific as a keydb_version would be
				}
			}
			return v.product, v.field, i
		}
	}
	return "", "", len(versionFields)
}

// redisLike names a server that reports its version only as redis_version, by
// what Redis does not print: KeyDB 6.3.4 has a KeyDB section in INFO (mvcc_depth)
// and says in INFO memory where it keeps its data (storage_provider:flash on
// FLASH, none in memory); Tendis prints its own version there
// ("2.7.0-rocksdb-v8.5.3") and TENDIS_DEBUG (ON or OFF, how it was built) in INFO
// server (src/tendisplus/commands/debug.cpp InfoCommand::infoServer).
func redisLike(fields map[string]string) string {
	if _, ok := fields["server.TENDIS_DEBUG"]; ok {
		return "tendis"
	}
	for k := range fields {
		if strings.HasPrefix(k, "keydb.") {
			if fields["memory.storage_provider"] == "flash" {
				return "keydb-flash"
			}
			return "keydb"
		}
	}
	return "redis"
}
