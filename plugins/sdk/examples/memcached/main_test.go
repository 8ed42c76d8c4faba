package main

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// A third-party adapter passes the same conformance suite as the built-ins.
func TestConformanceIntegration(t *testing.T) {
	provisiontest.Need(t, "memcached")
	srv := provisiontest.Start(t, "memcached", []string{"memcached", "-p", "{port}", "-l", "127.0.0.1", "-U", "0", "-m", "16", "-u", "nobody"})
	adaptertest.Run(t, adaptertest.Setup{
		Adapter: adapter{},
		System:  core.SystemConfig{Name: "memcached", Endpoint: srv.Endpoint(), Timeout: 2 * time.Second},
	})
}
