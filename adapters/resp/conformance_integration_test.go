package resp

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

func TestConformanceIntegration(t *testing.T) {
	const secret = "conformance-secret-5f2a"
	srv := provisiontest.Redis(t, "--requirepass", secret)
	adaptertest.Run(t, adaptertest.Setup{
		Adapter: Adapter{},
		System:  core.SystemConfig{Name: "redis", Endpoint: srv.Endpoint(), Auth: core.AuthConfig{Password: secret}, Timeout: 2 * time.Second},
		Secret:  secret,
	})
}
