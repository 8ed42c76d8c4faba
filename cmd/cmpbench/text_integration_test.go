package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// A server that writes Markdown and HTML that fetch, ANSI colours, a CR, BEL
// and a right-to-left override to its log and exits as it starts: the run's
// console shows its log as text, control characters visible; report.md is
// inert as GitHub renders it; report.html opens in Chromium without a request
// (a local server counts them) and without an element the report did not make;
// the report regenerates byte-identical.
func TestServerTextIsDataIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	dir := t.TempDir()
	logLine := fmt.Sprintf(`\033[31mERROR\033[0m ![x](%[1]s/leak.png) [y](%[1]s/link) <img src=%[1]s/i.png> <script>alert(1)</script>\rFAKE\a \342\200\256evil`, srv.URL)
	writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf(`systems:
  bad:
    adapter: resp
    provision:
      command: [sh, -c, 'printf "%s\n" >&2; exit 1', "{port}"]
  r:
    adapter: resp
    provision:
      command: [redis-server, --port, "{port}", --bind, 127.0.0.1, --save, ""]
`, logLine))
	r := cli(t, dir, nil, "run", "--systems", "bad,r", "--suite", "smoke", "--scale", "0.05", "--quiet")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (a system did not start)\n%s", r.code, r.stderr)
	}
	acts := regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u202e]")
	if loc := acts.FindStringIndex(r.stderr); loc != nil {
		t.Errorf("a control character reached the console at %d:\n%q", loc[0], r.stderr)
	}
	if !strings.Contains(r.stderr, "␛[31mERROR␛[0m") || !strings.Contains(r.stderr, "␍FAKE␇ [U+202E]evil") {
		t.Errorf("the console does not show the server's log, its control characters visible:\n%s", r.stderr)
	}
	a := archiveOf(t, r)
	md, err := a.ReadFile(archive.ReportFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md, []byte("␛[31mERROR␛[0m")) || acts.Match(md) {
		t.Errorf("report.md does not show the server's log as text, control characters visible")
	}
	var rendered bytes.Buffer
	gfm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := gfm.Convert(md, &rendered); err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?i)<[a-z]+[^>]*\s(src|href)="?http[^>]*>|<script>alert`).Find(rendered.Bytes()); m != nil {
		t.Errorf("report.md, rendered as GitHub does, holds markup from the server's log: %s", m)
	}
	checkPage(t, a, "server-text")
	if n := hits.Load(); n > 0 {
		t.Errorf("report.html made %d requests to %s", n, srv.URL)
	}
	if r := cli(t, dir, nil, "report", a.Dir); r.code != 0 || !strings.Contains(r.stdout, "byte-identical") {
		t.Errorf("report regeneration: %d %s %s", r.code, r.stdout, r.stderr)
	}
}
