package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
)

var a0end = time.Date(2026, 12, 1, 10, 0, 40, 0, time.UTC)

var update = flag.Bool("update", false, "rewrite the golden files")

// renderRun writes a generated run and draws its report and console tables, as
// `cmpbench run` finishes one.
func renderRun(t *testing.T, opt archivetest.Options) (w *archive.Writer, files []File, tables Console) {
	t.Helper()
	w, err := archive.Create(t.TempDir(), archivetest.Header(opt), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := archivetest.Feed(w, opt, -1); err != nil {
		t.Fatal(err)
	}
	a, err := w.Finish(core.RunComplete, a0end)
	if err != nil {
		t.Fatal(err)
	}
	if files, tables, err = Render(a); err != nil {
		t.Fatal(err)
	}
	return w, files, tables
}

// fixture is the generated run's archive with its report.
func fixture(t *testing.T) string {
	t.Helper()
	return fixtureOf(t, archivetest.Options{})
}

// fixtureOf is the archive, with its report, of the run generated with opt.
func fixtureOf(t *testing.T, opt archivetest.Options) string {
	t.Helper()
	w, files, _ := renderRun(t, opt)
	for _, f := range files {
		if err := w.AddFile(f.Name, f.Data); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReportGolden(t *testing.T) {
	dir := fixture(t)
	got, _ := os.ReadFile(filepath.Join(dir, archive.ReportFile))
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("report differs from %s (go test -update to accept):\n%s", golden, got)
	}
	for _, want := range []string{
		"**NS** 4,498 of 5,000", "oom 21", "| fast | 4,999 of 5,000 |",
		"## Cost", "| slow | 1,000 | 1.00× |", "| fast | 3,000 | 3.00× |",
		"## Server-side counts", "## Caveats", "slow, rate-5000 did not sustain its target",
		"![Throughput per phase and system (closed loop)](charts/throughput.svg)",
		"![Throughput per phase and system (fixed rate)](charts/throughput-fixed-rate.svg)",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestRegenerationIsByteIdentical(t *testing.T) {
	dir := fixture(t)
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("%d files: want the report, two bar charts and a chart per measured phase", len(files))
	}
	for _, f := range files {
		old, err := a.ReadFile(f.Name)
		if err != nil || !bytes.Equal(old, f.Data) {
			t.Errorf("%s regenerated differently", f.Name)
		}
	}
}

func TestChartsParseAndShowEverySystem(t *testing.T) {
	dir := fixture(t)
	charts, _ := filepath.Glob(filepath.Join(dir, "charts", "*.svg"))
	// One closed-loop and one fixed-rate phase: their bars never share a chart;
	// each phase has its spectrum, its latency and its throughput over time.
	if len(charts) != 10 {
		t.Fatalf("charts %v: want throughput and p99.9 of each loop kind, and three charts per phase", charts)
	}
	for _, c := range charts {
		texts := svgTexts(t, c)
		switch filepath.Base(c) {
		case "throughput.svg", "p999.svg":
			if strings.Contains(texts, "rate-5000") || !strings.Contains(texts, "closed-1:10") {
				t.Errorf("%s mixes loop kinds: %s", filepath.Base(c), texts)
			}
		case "throughput-fixed-rate.svg":
			if strings.Contains(texts, "closed-1:10") || !strings.Contains(texts, "target") {
				t.Errorf("%s: want rate-5000 alone, its target drawn: %s", filepath.Base(c), texts)
			}
		}
		for _, sys := range []string{"fast", "slow"} {
			if !strings.Contains(texts, sys) {
				t.Errorf("%s has no series for %s (texts: %s)", filepath.Base(c), sys, texts)
			}
		}
	}
}

// svgTexts parses an SVG file and returns its text elements, joined.
func svgTexts(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	texts, err := chart.Texts(b)
	if err != nil {
		t.Fatalf("%s is not well-formed XML: %v", path, err)
	}
	return strings.Join(texts, "|")
}

// A phase's flags show beside its rate in the tables and are explained, with
// their numbers, in the caveats; only the flagged system's phase carries them.
func TestPhaseFlagsAreShownAndExplained(t *testing.T) {
	for _, tc := range []struct {
		flag      string
		opt       archivetest.Options
		want      []string
		notOnFast string
	}{
		{"client-lagged", archivetest.Options{Lagged: true}, []string{
			"| slow | **NS** 4,498 of 5,000 (client-lagged) |",
			"slow, rate-5000 was client-lagged: the client's send lag p99 (1.988 ms) exceeded the service time p99 (0.298 ms)",
			"**client-lagged** marks a fixed-rate phase",
		}, "fast, rate-5000 was client-lagged"},
		{"host-saturated", archivetest.Options{HostSaturated: true}, []string{
			"| slow | **NS** 4,498 of 5,000 (host-saturated) |",
			"slow, rate-5000 ran on a saturated host: 1.97 of 2 cores busy; other processes: `bash` (pid 4711) 0.88, `redis-server` (pid 4702) 0.55. The client itself used 0.50 cores.",
			"**host-saturated** marks a phase",
		}, "fast, rate-5000 ran on a saturated host"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			_, files, tables := renderRun(t, tc.opt)
			md := string(files[0].Data)
			for _, want := range tc.want {
				if !strings.Contains(md, want) {
					t.Errorf("report lacks %q", want)
				}
			}
			if strings.Contains(md, tc.notOnFast) || !strings.Contains(string(tables.Wide), "("+tc.flag+")") || !strings.Contains(string(tables.Compact), tc.flag) {
				t.Errorf("%s on the wrong system, or not in the console tables", tc.flag)
			}
		})
	}
}

func TestReportFixedRateTablesShowResponseAndServiceTime(t *testing.T) {
	_, files, tables := renderRun(t, archivetest.Options{})
	for name, text := range map[string]string{"report.md": string(files[0].Data), "console tables": string(tables.Wide)} {
		closed, fixed, _ := strings.Cut(text[strings.Index(text, "### closed-1:10"):], "### rate-5000")
		for _, want := range []string{
			// Each percentile twice, side by side: from the intended send and from the actual send.
			"| system | ops/s | GET response p50 | GET service p50 | GET response p99 | GET service p99 | GET response p99.9 | GET service p99.9 | GET response p99.99 | GET service p99.99 | SET response p50 |",
			"| fast | 4,999 of 5,000 | 0.260 | 0.150 | 0.456 | 0.248 | 0.460 | 0.250 | 0.460 | 0.250 | 0.259 | 0.150 |",
		} {
			if !strings.Contains(fixed, want) {
				t.Errorf("%s: fixed-rate table lacks %q:\n%s", name, want, fixed)
			}
		}
		for _, want := range []string{
			"| system | ops/s | GET p50 | GET p99 | GET p99.9 | GET p99.99 | SET p50 |",
		} {
			if !strings.Contains(closed, want) {
				t.Errorf("%s: closed-loop table lacks %q:\n%s", name, want, closed)
			}
		}
		// Each explanation once, not per table.
		for _, want := range []string{
			"response time, measured from each operation's intended send time",
			"service time, from its actual send",
			"Closed loop: each request is sent when the previous one returns",
			"send lag the client's own delay before sending",
		} {
			if n := strings.Count(text, want); n != 1 {
				t.Errorf("%s says %q %d times, want once", name, want, n)
			}
		}
	}
	md := string(files[0].Data)
	if want := "| rate-5000 | GET | 4,545; response 0.456 / 0.460; service 0.248 / 0.250 |"; !strings.Contains(md, want) {
		t.Errorf("side-by-side table lacks %q", want)
	}
}

// A server that restarted during a phase counts from zero: the server-side counts
// say so instead of showing millions of calls fewer than the client sent, and the
// caveats say why the phase failed.
func TestServerRestartIsNotANegativeCount(t *testing.T) {
	_, files, _ := renderRun(t, archivetest.Options{RestartPhase: "closed-1:10"})
	md := string(files[0].Data)
	for _, want := range []string{
		"| fast | closed-1:10 | 0 | GET | 3,600 | — | not comparable: the server restarted during the phase (`instance run-a became run-b`) |",
		"fast, closed-1:10 ended failed: `the server restarted during the phase",
		"| closed-1:10 | total ops/s | **failed** 2,000 | 2,000 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "| fast | closed-1:10 | 0 | GET | 3,600 | 3") || strings.Contains(md, "**-") {
		t.Errorf("a restarted server's counts are set against the client's:\n%s", md)
	}
}

// The console's default tables fit 100 columns; --wide gives report.md's.
func TestConsoleCompactFits100Columns(t *testing.T) {
	_, _, tables := renderRun(t, archivetest.Options{})
	for _, line := range strings.Split(string(tables.Compact), "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("%d columns: %s", n, line)
		}
	}
	for _, want := range []string{"rate-5000: ", "NS 4,498 of 5,000", "Latencies in ms, response", "slow errors: oom 21", "Every op and percentile: --wide"} {
		if !strings.Contains(string(tables.Compact), want) {
			t.Errorf("compact tables lack %q:\n%s", want, tables.Compact)
		}
	}
	if !strings.Contains(string(tables.Wide), "| system | ops/s | GET response p50 |") {
		t.Errorf("wide tables are not report.md's:\n%s", tables.Wide)
	}
}
