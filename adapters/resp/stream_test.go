package resp

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// A TLS server that answers the connection's CLIENT SETNAME and then stops reading:
// a large SET fills the socket's buffers, fails as a timeout within the timeout,
// and leaves the connection closed for the next operation to reopen.
func TestStreamConnWriteTimeout(t *testing.T) {
	files := provisiontest.TLS(t, t.TempDir())
	cert, err := tls.LoadX509KeyPair(files.ServerCert, files.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	stalled := make(chan struct{})
	defer close(stalled)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for range 6 { // *3, $6 CLIENT, $7 SETNAME, $8 cmpbench: six lines
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
		}
		if _, err := c.Write([]byte("+OK\r\n")); err != nil {
			return
		}
		<-stalled // reads nothing more
	}()

	pem, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	profile, err := LoadProfile("redis", nil)
	if err != nil {
		t.Fatal(err)
	}
	tg := &target{
		sys:     core.SystemConfig{Name: "r", Endpoint: ln.Addr().String()},
		timeout: 300 * time.Millisecond,
		profile: profile,
		tls:     &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"},
	}
	c, err := tg.dialStream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// What is checked is a timeout rather than a hang: the bound leaves room for a
	// machine loaded by other packages' tests, on which encrypting and copying the
	// 64 MiB took 3.9 s in CI.
	start := time.Now()
	err = c.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: []byte("k"), Value: make([]byte, 64<<20)})
	if took := time.Since(start); core.ClassOf(err) != core.ErrClassTimeout || took > 20*time.Second {
		t.Fatalf("SET to a server that stopped reading: %v (class %v) after %s; want a timeout, not a hang", err, core.ClassOf(err), took)
	}
	if c.nc != nil {
		t.Fatal("the connection is still open after a timeout")
	}
}
