package host

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/plugins"
	"github.com/cmpbench/cmpbench/plugins/sdk"
	"github.com/cmpbench/cmpbench/workloads/memtier"
)

// The test binary is also the plugin of these tests: a real process speaking the
// real protocol, which misbehaves as CMPBENCH_HOST_TEST_PLUGIN says.
func TestMain(m *testing.M) {
	switch os.Getenv("CMPBENCH_HOST_TEST_PLUGIN") {
	case "":
		os.Exit(m.Run())
	case "serve":
		sdk.Serve(fake{})
	case "hang-describe":
		sdk.Serve(hangingInfo{})
	case "stuck-do":
		sdk.Serve(stuck{})
	case "stuck-open":
		sdk.Serve(stuckOpen{})
	case "exit-in-open":
		sdk.Serve(exitingOpen{})
	case "panic-describe":
		sdk.Serve(panicky{})
	case "exit-at-start":
		fmt.Fprintln(os.Stderr, "boom: cannot read my configuration")
		os.Exit(3)
	case "future-protocol":
		fmt.Fprintln(os.Stderr, "future: built with cmpbench's SDK v9")
		fmt.Printf("1|%d|tcp|127.0.0.1:1|grpc\n", plugins.ProtocolVersion+1)
		time.Sleep(time.Hour)
	case "handshake-then-sleep":
		// A plausible handshake line naming an address that accepts
		// connections and never speaks gRPC.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.Exit(3)
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
			}
		}()
		fmt.Fprintln(os.Stderr, "pretending to be a plugin")
		fmt.Printf("1|%d|tcp|%s|grpc\n", plugins.ProtocolVersion, l.Addr())
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

// hangingInfo never answers Describe.
type hangingInfo struct{ fake }

func (hangingInfo) Info() core.Info {
	fmt.Fprintln(os.Stderr, "thinking about who I am")
	select {}
}

// panicky panics when asked who it is.
type panicky struct{ fake }

func (panicky) Info() core.Info { panic("who am I") }

// stuckOpen never returns from Open.
type stuckOpen struct{ fake }

func (stuckOpen) Open(context.Context, core.SystemConfig) (core.Target, error) { select {} }

// exitingOpen says why on its stderr and exits in Open, as a plugin that cannot
// read its configuration does.
type exitingOpen struct{ fake }

func (exitingOpen) Open(context.Context, core.SystemConfig) (core.Target, error) {
	fmt.Fprintln(os.Stderr, "exiting: cannot read /etc/exiting.conf: permission denied")
	os.Exit(4)
	return nil, nil
}

// stuck's connections never return from Do.
type stuck struct{ fake }

func (stuck) Open(context.Context, core.SystemConfig) (core.Target, error) { return stuckTarget{}, nil }

type stuckTarget struct{ fakeTarget }

func (stuckTarget) Connect(context.Context) (core.Conn, error) { return stuckConn{}, nil }

type stuckConn struct{ fakeConn }

func (stuckConn) Do(context.Context, *core.Op) error { select {} }

func launchAs(t *testing.T, mode string, describe time.Duration) (*Driver, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CMPBENCH_HOST_TEST_PLUGIN="+mode)
	d, err := Launch(context.Background(), Options{Cmd: cmd, StartTimeout: 5 * time.Second, DescribeTimeout: describe})
	if d != nil {
		t.Cleanup(d.Kill)
	}
	return d, err
}

// Issue 25, bug 6: a plugin that never answers Describe, or prints a plausible
// handshake and then sleeps, used to hang cmpbench forever; the host gives up
// after its bound, saying what the plugin wrote last.
func TestLaunchIsBounded(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"hang-describe", []string{"the plugin did not answer Describe within 1s", "its last output: thinking about who I am"}},
		{"handshake-then-sleep", []string{"pretending to be a plugin"}},
		// Issue 43's weak answer: said in go-plugin's words alone.
		{"future-protocol", []string{fmt.Sprintf("the plugin speaks cmpbench's plugin protocol %d, and this cmpbench speaks %d: rebuild it", plugins.ProtocolVersion+1, plugins.ProtocolVersion),
			"its last output: future: built with cmpbench's SDK v9"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			start := time.Now()
			_, err := launchAs(t, tc.mode, time.Second)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %s", took)
			}
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v lacks %q", err, w)
				}
			}
		})
	}
}

func shortBounds(t *testing.T) {
	t.Helper()
	grace, allowance := stopGrace, phaseAllowance
	stopGrace, phaseAllowance = time.Second, time.Second
	t.Cleanup(func() { stopGrace, phaseAllowance = grace, allowance })
}

var getSpec = core.PhaseSpec{Name: "p", Kind: core.PhaseMeasured, Connections: 2, Duration: time.Second, Interval: 250 * time.Millisecond,
	Workload: memtier.Spec{GetRatio: 1, SetPattern: 'R', GetPattern: 'R', KeyMin: 1, KeyMax: 10, ValueMin: 1, ValueMax: 1}}

// Issue 25, bug 3: an adapter whose Do never returns kept a 4 s phase going past
// 100 s. The host stops it at its bound, fails it with the reason, and ends the
// plugin, which is not trusted with another phase.
func TestPhaseOfAStuckAdapterIsBounded(t *testing.T) {
	shortBounds(t)
	d, err := launchAs(t, "stuck-do", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Open(context.Background(), core.SystemConfig{Endpoint: "up"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	end, err := d.RunPhase(context.Background(), getSpec, func(core.IntervalReport) {})
	took := time.Since(start)
	if err == nil || end.Status != core.StatusFailed || !strings.Contains(end.Error, "the phase did not end within cmpbench's bound of 2.02s") {
		t.Fatalf("end %+v, err %v", end, err)
	}
	if want := 2020*time.Millisecond + stopGrace; took < want || took > want+3*time.Second {
		t.Errorf("took %s, want about %s", took, want)
	}
	for deadline := time.Now().Add(3 * time.Second); !d.Exited() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !d.Exited() {
		t.Error("the stuck plugin was left running")
	}
}

// Issue 25, bug 3: a plugin stopped (SIGSTOP) for longer than its phase's bound
// resumes and reports the phase ok, at a rate over the time it stood still; the
// host fails it instead.
func TestPhaseOfAStoppedPluginIsFailed(t *testing.T) {
	shortBounds(t)
	stopGrace = 10 * time.Second // the plugin answers once it is resumed
	d, err := launchAs(t, "serve", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Open(context.Background(), core.SystemConfig{Endpoint: "up"}); err != nil {
		t.Fatal(err)
	}
	pid := d.Pid()
	time.AfterFunc(300*time.Millisecond, func() {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
		time.AfterFunc(3*time.Second, func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	})
	end, err := d.RunPhase(context.Background(), getSpec, func(core.IntervalReport) {})
	if err != nil {
		t.Fatal(err)
	}
	if end.Status != core.StatusFailed || !strings.Contains(end.Error, "the phase did not end within cmpbench's bound") || !strings.Contains(end.Error, "the plugin reported it") {
		t.Fatalf("end %s: %s", end.Status, end.Error)
	}
	// A phase within its bound is untouched.
	end, err = d.RunPhase(context.Background(), getSpec, func(core.IntervalReport) {})
	if err != nil || end.Status != core.StatusOK {
		t.Fatalf("a phase within its bound: %s %s %v", end.Status, end.Error, err)
	}
}

func TestPhaseBound(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		spec core.PhaseSpec
		want time.Duration
	}{
		{core.PhaseSpec{Duration: 6 * time.Second, Connections: 4}, 6*time.Second + phaseAllowance + 40*time.Millisecond},
		{core.PhaseSpec{Duration: time.Minute, Connections: 1000}, time.Minute + phaseAllowance + 10*time.Second},
		{core.PhaseSpec{Duration: time.Second, Connections: 1, StartAt: now.Add(30 * time.Second)}, 31*time.Second + phaseAllowance + 10*time.Millisecond},
		{core.PhaseSpec{Duration: time.Second, Connections: 1, StartAt: now.Add(-time.Hour)}, time.Second + phaseAllowance + 10*time.Millisecond},
	} {
		if got := PhaseBound(tc.spec, now); got != tc.want {
			t.Errorf("PhaseBound(%+v) = %s, want %s", tc.spec, got, tc.want)
		}
	}
}

// Issue 25's weak answers about plugins: each failure is said in the plugin's
// own words and how its process ended, never in the transport's ("error reading
// from server: EOF", "RST_STREAM ... CANCEL") or as a stack's tail.
func TestPluginFailuresSayWhat(t *testing.T) {
	t.Run("exits at start", func(t *testing.T) {
		_, err := launchAs(t, "exit-at-start", time.Second)
		if err == nil || !strings.Contains(err.Error(), "the plugin process exited (exit status 3)") ||
			!strings.Contains(err.Error(), "boom: cannot read my configuration") || strings.Contains(err.Error(), "server") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("panics in Describe", func(t *testing.T) {
		_, err := launchAs(t, "panic-describe", 5*time.Second)
		if err == nil || !strings.Contains(err.Error(), "its last output: panic: who am I (the stack follows in its output)") {
			t.Fatalf("%v", err)
		}
	})
	// Issue 43's weak answer: a plugin that wrote why and exited in Open was said
	// to have exited, without its words (they went through go-plugin's stdio
	// stream, which the exit cut).
	t.Run("exits in Open", func(t *testing.T) {
		for range 3 {
			d, err := launchAs(t, "exit-in-open", 0)
			if err != nil {
				t.Fatal(err)
			}
			err = d.Open(context.Background(), core.SystemConfig{Endpoint: "up"})
			if err == nil || !strings.Contains(err.Error(), "the plugin process exited (exit status 4); its last output: exiting: cannot read /etc/exiting.conf: permission denied") {
				t.Fatalf("%v", err)
			}
		}
	})
	t.Run("Open never answers", func(t *testing.T) {
		d, err := launchAs(t, "stuck-open", 0)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = d.Open(ctx, core.SystemConfig{Endpoint: "up"})
		if err == nil || !strings.HasPrefix(err.Error(), "the plugin did not answer Open within 1") || strings.Contains(err.Error(), "RST_STREAM") {
			t.Fatalf("%v", err)
		}
	})
}
