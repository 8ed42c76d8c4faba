package aerospike

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/cmpbench/cmpbench/core"
)

// The facts an Aerospike system's captures say of it (core.Facts), from the
// service's and the namespace's configuration (get-config): what a crash or
// power loss loses, the namespace's bound and whether it evicts, its
// replication factor and the service's threads.

// The sections Facts reads: the capture's (sectionName), a cluster's node's
// address after it ("…@10.0.0.1-3000"), and the names archives written before
// sections were named so gave them; a namespace's name follows its prefix.
var (
	serviceSections   = []string{sectionName("get-config:context=service"), "get-config:context=service"}
	namespaceSections = []string{sectionName("get-config:context=namespace;namespace="), sectionName("get-config:context=namespace;id="), "get-config:context=namespace;"}
)

// Facts implements core.FactReader: it reads the first node's service and
// namespace configuration.
func (Adapter) Facts(sections map[string]string) core.Facts {
	ns := pairs(nodeSection(sections, namespaceSections), ";\n")
	return core.Facts{Durability: durability(ns), Replication: replication(ns), Memory: memory(ns), Threads: threads(pairs(nodeSection(sections, serviceSections), ";\n"))}
}

// nodeSection is the text of the first section named one of names: the name
// itself, else the first in order that starts with it and a node's address
// ("@"), or with it where it ends in a separator (a namespace's name follows);
// "" when there is none.
func nodeSection(sections map[string]string, names []string) string {
	for _, n := range names {
		if text, ok := sections[n]; ok {
			return text
		}
	}
	sorted := slices.Sorted(maps.Keys(sections))
	for _, n := range names {
		for _, k := range sorted {
			rest, ok := strings.CutPrefix(k, n)
			if ok && (strings.HasPrefix(rest, "@") || strings.ContainsAny(n[len(n)-1:], "-;")) {
				return sections[k]
			}
		}
	}
	return ""
}

// durability: a namespace in memory without a file or a device loses every
// write on a restart; on a device or a file, a write is kept at once with
// commit-to-device, else when its write block is flushed.
func durability(ns map[string]string) core.Fact {
	engine := ns["storage-engine"]
	switch {
	case engine == "memory" && ns["storage-engine.file[0]"] == "" && ns["storage-engine.device[0]"] == "":
		return core.Fact{Words: "storage-engine memory: every write lost on a restart", Class: core.DurabilityNone}
	case ns["storage-engine.commit-to-device"] == "true":
		return core.Fact{Words: "storage-engine " + core.Quoted(engine) + ", commit-to-device true: no acknowledged write lost on power loss", Class: "always"}
	case engine != "":
		// A write block is flushed when full or flush-max-ms after its first
		// write: the class is that bound, "1s" only at Redis everysec's.
		flush := cmp.Or(ns["storage-engine.flush-max-ms"], "1000")
		class := "flush " + flush + "ms"
		if flush == "1000" {
			class = "1s"
		}
		return core.Fact{Words: "storage-engine " + core.Quoted(engine) + ", commit-to-device false: up to " + core.Quoted(flush) + " ms of writes lost on a crash or power loss", Class: class}
	}
	return core.Fact{}
}

// memory: a namespace's bound (the data size of storage-engine memory, each
// file's size on a device), where writes stop and whether it evicts.
func memory(ns map[string]string) core.Fact {
	for _, k := range []string{"storage-engine.data-size", "storage-engine.filesize", "memory-size"} {
		v := ns[k]
		if v == "" || v == "0" {
			continue
		}
		words := k + " " + core.BytesWords(v)
		if stop := ns["storage-engine.stop-writes-used-pct"]; stop != "" {
			words += ", writes stop at " + core.Quoted(stop) + "% used"
		}
		if evict := cmp.Or(ns["storage-engine.evict-used-pct"], ns["evict-used-pct"], ns["high-water-memory-pct"]); evict != "" && evict != "0" {
			return core.Fact{Words: words + ", evicts at " + core.Quoted(evict) + "%", Class: "limit evicts"}
		}
		return core.Fact{Words: words + ", no eviction", Class: "limit noeviction"}
	}
	return core.Fact{}
}

// replication is the namespace's replication factor: the copies of a record
// the cluster keeps.
func replication(ns map[string]string) core.Fact {
	rf := ns["replication-factor"]
	if rf == "" {
		return core.Fact{}
	}
	return core.Fact{Words: "replication-factor " + core.Quoted(rf), Class: rf}
}

// threads are the service's threads.
func threads(service map[string]string) core.Fact {
	if n := service["service-threads"]; n != "" {
		return core.Fact{Words: "service-threads " + core.Quoted(n)}
	}
	return core.Fact{}
}
