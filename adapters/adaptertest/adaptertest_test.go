package adaptertest_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/adapters/resp"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// notReadyFront stands before a real server as a server does that accepts
// connections before it can serve them (etcd without a leader, Redis loading its
// dataset): until ready, every connection is answered -LOADING to whatever it
// sends; from then on connections go through to the server.
type notReadyFront struct {
	ln      net.Listener
	backend string
	ready   time.Time
	early   int // connections turned away
	mu      sync.Mutex
}

func startNotReadyFront(t *testing.T, backend string, notReadyFor time.Duration) *notReadyFront {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &notReadyFront{ln: ln, backend: backend, ready: time.Now().Add(notReadyFor)}
	t.Cleanup(func() { ln.Close() })
	go f.serve()
	return f
}

func (f *notReadyFront) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		if time.Now().Before(f.ready) {
			f.mu.Lock()
			f.early++
			f.mu.Unlock()
			go loading(c)
			continue
		}
		go pipe(c, f.backend)
	}
}

func (f *notReadyFront) turnedAway() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.early
}

// loading answers every read with Redis's error for a server still loading.
func loading(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	buf := make([]byte, 4096)
	for {
		if _, err := r.Read(buf); err != nil {
			return
		}
		if _, err := io.WriteString(c, "-LOADING Redis is loading the dataset in memory\r\n"); err != nil {
			return
		}
	}
}

func pipe(c net.Conn, backend string) {
	defer c.Close()
	b, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer b.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(b, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, b); done <- struct{}{} }()
	<-done
}

// A server that accepts connections before it is ready passes the suite every
// time: Run retries Open as cmpbench does, instead of failing on the first try.
func TestRunWaitsForAServerThatIsNotReadyIntegration(t *testing.T) {
	srv := provisiontest.Redis(t)
	for i := range 20 {
		front := startNotReadyFront(t, srv.Endpoint(), 150*time.Millisecond)
		ok := t.Run("", func(t *testing.T) {
			adaptertest.Run(t, adaptertest.Setup{
				Adapter: resp.Adapter{},
				System:  core.SystemConfig{Name: "not-ready", Adapter: "resp", Endpoint: front.ln.Addr().String(), Timeout: 300 * time.Millisecond},
			})
		})
		if !ok {
			t.Fatalf("run %d of 20 failed", i+1)
		}
		if front.turnedAway() == 0 {
			t.Fatalf("run %d: no connection came while the server was not ready: the test tests nothing", i+1)
		}
	}
}

// A refusal (a wrong password) is not retried: it fails at once.
func TestOpenDoesNotRetryARefusal(t *testing.T) {
	calls := 0
	a := refusingAdapter{calls: &calls}
	start := time.Now()
	tg, err := adaptertest.OpenWhenReady(t.Context(), adaptertest.Setup{Adapter: a, Ready: 5 * time.Second})
	if tg != nil || !errors.Is(err, core.ErrRefused) {
		t.Fatalf("OpenWhenReady = %v, %v; want the refusal", tg, err)
	}
	if calls != 1 || time.Since(start) > time.Second {
		t.Fatalf("Open called %d times in %s; a refusal is not retried", calls, time.Since(start))
	}
}

// An Open that keeps failing is retried until Ready has passed, and its last
// error returned.
func TestOpenRetriesUntilReady(t *testing.T) {
	calls := 0
	a := failingAdapter{calls: &calls}
	start := time.Now()
	_, err := adaptertest.OpenWhenReady(t.Context(), adaptertest.Setup{Adapter: a, Ready: 500 * time.Millisecond})
	if err == nil || err.Error() != "not ready" {
		t.Fatalf("OpenWhenReady: %v; want the last error", err)
	}
	if calls < 3 || time.Since(start) < 500*time.Millisecond {
		t.Fatalf("Open called %d times in %s; want retries for 500ms", calls, time.Since(start))
	}
}

type refusingAdapter struct {
	core.Adapter
	calls *int
}

func (refusingAdapter) Info() core.Info { return core.Info{Name: "refusing"} }

func (a refusingAdapter) Open(ctx context.Context, sys core.SystemConfig) (core.Target, error) {
	*a.calls++
	return nil, core.Refused(errors.New("WRONGPASS invalid username-password pair"))
}

type failingAdapter struct {
	core.Adapter
	calls *int
}

func (failingAdapter) Info() core.Info { return core.Info{Name: "failing"} }

func (a failingAdapter) Open(ctx context.Context, sys core.SystemConfig) (core.Target, error) {
	*a.calls++
	return nil, errors.New("not ready")
}
