package provision

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The lines a failed start quotes are those that say why, fatal before errors,
// never info or warnings that merely contain an error word, then the last line;
// when no line says why, the last lines.
func TestTellingLines(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      []string
	}{
		{"empty", "", nil},
		{"nothing telling: its last lines", "starting\nlistening on 1234\n", []string{"starting", "listening on 1234"}},
		{"nothing telling: at most whyLines of them", "1\n2\n3\n4\n5\n6\n7\n8\n", []string{"3", "4", "5", "6", "7", "8"}},
		{
			// Pika with the stock maxclients: its fatal line is not its last.
			"pika: the fatal line first",
			"I20261204 16:31:04.786547 11542 base_conf.cc:336] 12 daemonize no\n" +
				"F20261204 16:31:04.786566 11542 pika.cc:194] your 'limit -n ' of 20000 is not enough for Redis to start. pika can not reconfig it(Operation not permitted), do it by yourself\n" +
				"*** Check failure stack trace: ***\n",
			[]string{
				"F20261204 16:31:04.786566 11542 pika.cc:194] your 'limit -n ' of 20000 is not enough for Redis to start. pika can not reconfig it(Operation not permitted), do it by yourself",
				"*** Check failure stack trace: ***",
			},
		},
		{
			// Aerospike warns at every start that it "failed" some checks:
			// those are not the reason; the CRITICAL line is.
			"aerospike: critical, not the warnings",
			"Dec 04 2026 16:30:19 GMT: WARNING (os): (os.c:871) failed swappiness check - swappiness not set to 0\n" +
				"Dec 04 2026 16:30:19 GMT: CRITICAL (config): (cfg.c:4011) line 3 :: unknown config parameter name 'no-such-setting'\n" +
				"Dec 04 2026 16:30:19 GMT: WARNING (as): (signal.c:206) SIGUSR1 received, aborting Aerospike Community Edition build 8.1.1.2 os debian12\n",
			[]string{
				"Dec 04 2026 16:30:19 GMT: CRITICAL (config): (cfg.c:4011) line 3 :: unknown config parameter name 'no-such-setting'",
				"Dec 04 2026 16:30:19 GMT: WARNING (as): (signal.c:206) SIGUSR1 received, aborting Aerospike Community Edition build 8.1.1.2 os debian12",
			},
		},
		{
			"redis: the error, then the last line",
			"*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 2\n>>> 'no-such-setting yes'\nBad directive or wrong number of arguments\n",
			[]string{
				"*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***",
				"Bad directive or wrong number of arguments",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.log")
			if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			got := tellingLines(path)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// At most whyLines lines, the latest of each rank, and none longer than
// whyLineBytes.
func TestTellingLinesAreBounded(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		b.WriteString("error number " + strings.Repeat("x", i*20) + "\n")
	}
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := tellingLines(path)
	if len(got) != whyLines-1 {
		t.Fatalf("%d lines: %q", len(got), got)
	}
	for _, l := range got {
		if len(l) > whyLineBytes+len("…") {
			t.Fatalf("a line of %d bytes", len(l))
		}
	}
	if !strings.HasPrefix(got[len(got)-1], "error number "+strings.Repeat("x", 100)) {
		t.Fatalf("not the latest lines: %q", got[len(got)-1][:40])
	}
}

// A server that exits at start says why, from its output and from the log file
// its configuration names; the directories it needs exist before it starts, and
// the variables and {each_line:...} are filled in.
func TestStartFailureQuotesItsLogs(t *testing.T) {
	dir := t.TempDir()
	script := `test -d work/smd && test -d udf || { echo "FATAL: no work directory" >&2; exit 3; }
echo "starting with {data_gib} GiB" > named.log
echo "CRITICAL (config): unknown config parameter 'x'" >> named.log
echo "seeds: $(cat seeds)"
exit 1`
	s, err := Start(Spec{
		Name: "s", Command: []string{"sh", "-c", script, "{port}"}, Dirs: []string{"work/smd", "udf"}, Logs: []string{"named.log"},
		Vars:  map[string]string{"{data_gib}": "7"},
		Files: map[string]string{"seeds": "{each_line:seed {port:hb}}"},
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if exited, _ := s.Exited(); exited {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the script did not exit")
		}
		time.Sleep(10 * time.Millisecond)
	}
	why := s.Why()
	for _, want := range []string{"named.log:", "CRITICAL (config): unknown config parameter 'x'", "server.log:", "seeds: seed "} {
		if !strings.Contains(why, want) {
			t.Errorf("Why() lacks %q:\n%s", want, why)
		}
	}
	if strings.Contains(why, "no work directory") {
		t.Errorf("the directories were not made before the start:\n%s", why)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Dir, "named.log")); !strings.Contains(string(b), "with 7 GiB") {
		t.Errorf("variable not filled in: %q", b)
	}
	if tail := s.LogTail(4096); !strings.Contains(tail, "== named.log ==") || !strings.Contains(tail, "== server.log ==") {
		t.Errorf("LogTail leaves out a log:\n%s", tail)
	}
}

func TestDirsMustStayInside(t *testing.T) {
	if _, err := Start(Spec{Name: "s", Command: []string{"sh", "-c", "sleep 1", "{port}"}, Dirs: []string{"../out"}}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "relative path") {
		t.Fatalf("a dir outside the server's directory: %v", err)
	}
}

// A node killed is gone at once and comes back on the same port with Relaunch.
func TestKillAndRelaunchANode(t *testing.T) {
	s, err := Start(Spec{Name: "s", Nodes: 2, Command: []string{"sh", "-c", "echo started >> runs; exec sleep 60", "{port}"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	runs := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			b, _ := os.ReadFile(filepath.Join(s.procs[1].dir, "runs"))
			if strings.Count(string(b), "started") == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("node 1 started %d times, want %d", strings.Count(string(b), "started"), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	runs(1)
	if err := s.Relaunch(1); err == nil {
		t.Fatal("Relaunch of a running node")
	}
	if err := s.Kill(1); err != nil {
		t.Fatal(err)
	}
	if exited, _ := s.procs[1].exited(); !exited {
		t.Fatal("node 1 still running after Kill")
	}
	if exited, _ := s.procs[0].exited(); exited {
		t.Fatal("node 0 was killed too")
	}
	if err := s.Relaunch(1); err != nil {
		t.Fatal(err)
	}
	runs(2)
	if err := s.Kill(5); err == nil {
		t.Fatal("Kill of a node that does not exist")
	}
}
