package resp

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// The suite runs over both data paths: raw connections through the codec (the
// default for plain TCP) and rueidis connections.
func TestConformanceIntegration(t *testing.T) {
	const secret = "conformance-secret-5f2a"
	for _, driver := range []string{"raw", "rueidis"} {
		t.Run(driver, func(t *testing.T) {
			srv := provisiontest.Redis(t, "--requirepass", secret)
			opts := map[string]string{}
			if driver == "rueidis" {
				opts["driver"] = "rueidis"
			}
			adaptertest.Run(t, adaptertest.Setup{
				Adapter: Adapter{},
				System:  core.SystemConfig{Name: "redis", Endpoint: srv.Endpoint(), Auth: core.AuthConfig{Password: secret}, Timeout: 2 * time.Second, Options: opts},
				Secret:  secret,
			})
		})
	}
}
