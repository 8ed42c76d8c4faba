package aerospike

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/adapters/aerospike/asdtest"
	"github.com/cmpbench/cmpbench/adapters/aerospike/astest"
	"github.com/cmpbench/cmpbench/core"
)

// The suite against a real asd, started from the built-in system aerospike as a
// run starts it.
func TestConformanceIntegration(t *testing.T) {
	t.Parallel()
	srv := asdtest.Start(t, asdtest.Single, nil)
	sys := srv.Config()
	// Open until asd is ready (its first cluster forms a second or two after its
	// port opens), then leave the target to the suite, which opens its own.
	tg := srv.Open(t, Adapter{}, sys)
	tg.Close(t.Context())
	adaptertest.Run(t, adaptertest.Setup{Adapter: Adapter{}, System: sys})
}

// The suite against the test server too: the other tests of this package that use
// astest rely on it answering as asd does.
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
