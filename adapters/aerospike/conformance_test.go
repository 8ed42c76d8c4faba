package aerospike

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/adapters/aerospike/astest"
	"github.com/cmpbench/cmpbench/core"
)

// No Aerospike server can be installed where cmpbench is tested: the suite runs the
// real client against the wire-protocol test server.
func TestConformanceOnTheTestServer(t *testing.T) {
	srv, err := astest.Start("ycsb")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	adaptertest.Run(t, adaptertest.Setup{
		Adapter: Adapter{},
		System:  core.SystemConfig{Name: "aerospike", Endpoint: srv.Addr(), Timeout: 2 * time.Second, Options: map[string]string{"namespace": "ycsb"}},
	})
}
