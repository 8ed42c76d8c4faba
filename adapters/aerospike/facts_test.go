package aerospike

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/core"
)

var update = flag.Bool("update", false, "rewrite the golden facts (testdata/facts/*/facts.json)")

// The facts of a real asd's captures (testdata/facts/README.md): its
// namespace's durability, bound and replication factor and its service's
// threads, golden (facts.json, go test -update).
func TestFactsOfRealCaptures(t *testing.T) {
	f := adaptertest.FactsOfCaptures(t, Adapter{}, filepath.Join("testdata", "facts"), *update)["aerospike"]
	if !strings.Contains(f.Durability.Words, "storage-engine `device`, commit-to-device false: up to `1000` ms") || f.Durability.Class != "1s" {
		t.Errorf("durability %+v", f.Durability)
	}
	if f.Replication != (core.Fact{Words: "replication-factor `1`", Class: "1"}) {
		t.Errorf("replication %+v", f.Replication)
	}
}

// Each durability a namespace can have reads as its class; a write block is
// flushed flush-max-ms after its first write, and only the default second is
// Redis everysec's class (the review of issue 43).
func TestDurability(t *testing.T) {
	for _, tc := range []struct {
		name, ns, class, word string
	}{
		{"in memory", "storage-engine=memory", core.DurabilityNone, "storage-engine memory"},
		{"commit-to-device", "storage-engine=device\nstorage-engine.commit-to-device=true", "always", "commit-to-device true"},
		{"buffered", "storage-engine=device\nstorage-engine.commit-to-device=false", "1s", "up to `1000` ms"},
		{"flush-max-ms 1000", "storage-engine=device\nstorage-engine.device[0]=/dev/x\nstorage-engine.flush-max-ms=1000", "1s", "up to `1000` ms"},
		{"flush-max-ms 5000", "storage-engine=device\nstorage-engine.device[0]=/dev/x\nstorage-engine.flush-max-ms=5000", "flush 5000ms", "up to `5000` ms"},
		{"nothing captured", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sections := map[string]string{"info-get-config-context-namespace-namespace-test": tc.ns + "\n"}
			adaptertest.FactIs(t, Adapter{}.Facts(sections).Durability, tc.class, tc.word)
		})
	}
}

// A cluster's sections carry each node's address: the first node's are read;
// an archive of the format before names the section by its info request.
func TestFactsOfACluster(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sections map[string]string
		want     string
	}{
		{"one node", map[string]string{"info-get-config-context-service": "service-threads=4\n"}, "service-threads `4`"},
		{"the first node", map[string]string{
			"info-get-config-context-service@127.0.0.1-3001": "service-threads=8\n",
			"info-get-config-context-service@127.0.0.1-3000": "service-threads=4\n",
		}, "service-threads `4`"},
		{"an older archive", map[string]string{"get-config:context=service": "service-threads=2;proto-fd-max=15000"}, "service-threads `2`"},
		{"another capture", map[string]string{"info-get-config-context-servicex": "service-threads=2\n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Adapter{}).Facts(tc.sections).Threads.Words; got != tc.want {
				t.Errorf("threads %q, want %q", got, tc.want)
			}
		})
	}
}
