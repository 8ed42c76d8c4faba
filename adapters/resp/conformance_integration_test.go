package resp

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// The suite runs over every data path: raw connections through the codec (the
// default for plain TCP), the codec over TLS (the default with TLS), and rueidis
// connections, plain and over TLS.
func TestConformanceIntegration(t *testing.T) {
	const secret = "conformance-secret-5f2a"
	for _, tc := range []struct {
		name   string
		tls    bool
		driver string
	}{
		{"raw", false, ""},
		{"rueidis", false, "rueidis"},
		{"tls", true, ""},
		{"tls rueidis", true, "rueidis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := core.SystemConfig{Name: "redis", Auth: core.AuthConfig{Password: secret}, Timeout: 2 * time.Second, Options: map[string]string{}}
			if tc.driver != "" {
				sys.Options["driver"] = tc.driver
			}
			if tc.tls {
				files := provisiontest.TLS(t, t.TempDir())
				sys.Endpoint = provisiontest.RedisTLS(t, files, false, "--requirepass", secret).Endpoint()
				sys.TLS = core.TLSConfig{Enabled: true, CAFile: files.CA}
			} else {
				sys.Endpoint = provisiontest.Redis(t, "--requirepass", secret).Endpoint()
			}
			adaptertest.Run(t, adaptertest.Setup{Adapter: Adapter{}, System: sys, Secret: secret})
		})
	}
}
