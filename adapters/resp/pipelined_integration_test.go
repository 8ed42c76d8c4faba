package resp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// Issue 46: over TLS and to a cluster, a pipelined connection keeps several
// requests in flight when the engine's lanes call Do at once, on one
// connection per server; every request is answered on its own, and every one
// reached a server.
func TestPipelinedIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	files := provisiontest.TLS(t, t.TempDir())
	tlsSys := sysAt(provisiontest.RedisTLS(t, files, false).Endpoint())
	tlsSys.TLS = core.TLSConfig{Enabled: true, CAFile: files.CA}
	clusterSys := sysAt(provisiontest.RedisCluster(t, 3).Endpoint())
	clusterSys.Options["cluster"] = "true"
	for _, tc := range []struct {
		name string
		sys  core.SystemConfig
	}{{"TLS", tlsSys}, {"cluster", clusterSys}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			tg, err := Adapter{}.Open(ctx, tc.sys)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close(ctx)
			c, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			const lanes, each = 8, 1000
			pc, err := c.(core.Pipeliner).Pipelined(ctx, lanes)
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			// Every lane's request at once on the one connection, while the
			// servers hold writes: the first is held, the others wait unread
			// behind it in the connection's query buffer.
			inFlight(t, tg, pc, lanes)
			var wg sync.WaitGroup
			errs := make(chan error, lanes)
			for l := range lanes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						key := []byte(fmt.Sprintf("p:%d:%d", l, i))
						if err := pc.Do(ctx, &core.Op{Kind: core.OpSet, Key: key, Value: key}); err != nil {
							errs <- fmt.Errorf("SET %s: %w", key, err)
							return
						}
						get := &core.Op{Kind: core.OpGet, Key: key}
						if err := pc.Do(ctx, get); err != nil || get.RespBytes != len(key) {
							errs <- fmt.Errorf("GET %s: %v, %d bytes (another request's reply?)", key, err, get.RespBytes)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if n, err := tg.(core.Counter).Count(ctx); err != nil || n != lanes*each+lanes {
				t.Errorf("%d keys (%v), want %d", n, err, lanes*each+lanes)
			}
		})
	}
}

// inFlight has each of lanes goroutines send one SET on c at once while every
// server holds writes back (CLIENT PAUSE WRITE): the first is parsed and held;
// with the lanes' requests in flight together, the others wait unparsed behind
// it in the one connection's query buffer, which CLIENT LIST shows.
func inFlight(t *testing.T, tg core.Target, c core.Conn, lanes int) {
	t.Helper()
	ctx := context.Background()
	nodes := tg.(*target).client.Nodes()
	admin := func(args ...string) []string {
		var out []string
		for addr, n := range nodes {
			s, err := n.Do(ctx, n.B().Arbitrary(args...).Build()).ToString()
			if err != nil {
				t.Fatalf("%s on %s: %v", strings.Join(args, " "), addr, err)
			}
			out = append(out, s)
		}
		return out
	}
	admin("CLIENT", "PAUSE", "10000", "WRITE")
	defer admin("CLIENT", "UNPAUSE")
	var wg sync.WaitGroup
	for l := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One hash tag: every request goes to one node of a cluster.
			if err := c.Do(ctx, &core.Op{Kind: core.OpSet, Key: []byte(fmt.Sprintf("{p}:%d", l)), Value: []byte("v")}); err != nil {
				t.Errorf("SET: %v", err)
			}
		}()
	}
	const request = len("*3\r\n$3\r\nSET\r\n$5\r\n{p}:0\r\n$1\r\nv\r\n")
	most := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, list := range admin("CLIENT", "LIST") {
			for _, f := range strings.Fields(list) {
				if v, ok := strings.CutPrefix(f, "qbuf="); ok {
					n, _ := strconv.Atoi(v)
					most = max(most, n)
				}
			}
		}
		if most >= (lanes-1)*request {
			break
		}
	}
	admin("CLIENT", "UNPAUSE")
	wg.Wait()
	if most < (lanes-1)*request {
		t.Errorf("at most %d bytes waited behind a held request on a connection: want the other %d requests of the lanes (%d bytes)", most, lanes-1, (lanes-1)*request)
	}
}
