package resp

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// dataPaths are the adapter's data paths: raw connections through the codec (the
// default for plain TCP), the codec over TLS (the default with TLS), and rueidis
// connections, plain and over TLS.
var dataPaths = []struct {
	name   string
	tls    bool
	driver string
}{
	{"raw", false, ""},
	{"rueidis", false, "rueidis"},
	{"tls", true, ""},
	{"tls-rueidis", true, "rueidis"},
}

// serverFor starts a redis-server (with args) for a data path and returns a system
// that reaches it that way.
func serverFor(tb testing.TB, tls bool, driver string, args ...string) core.SystemConfig {
	sys := core.SystemConfig{Name: "redis", Timeout: 2 * time.Second, Options: map[string]string{}}
	if driver != "" {
		sys.Options["driver"] = driver
	}
	if tls {
		files := provisiontest.TLS(tb, tb.TempDir())
		sys.Endpoint = provisiontest.RedisTLS(tb, files, false, args...).Endpoint()
		sys.TLS = core.TLSConfig{Enabled: true, CAFile: files.CA}
	} else {
		sys.Endpoint = provisiontest.Redis(tb, args...).Endpoint()
	}
	return sys
}

// The suite runs over every data path.
func TestConformanceIntegration(t *testing.T) {
	const secret = "conformance-secret-5f2a"
	for _, dp := range dataPaths {
		t.Run(dp.name, func(t *testing.T) {
			sys := serverFor(t, dp.tls, dp.driver, "--requirepass", secret)
			sys.Auth = core.AuthConfig{Password: secret}
			adaptertest.Run(t, adaptertest.Setup{Adapter: Adapter{}, System: sys, Secret: secret})
		})
	}
}
