// Package browsertest opens a report.html in headless Chromium, as a reader
// would, and says what the browser saw: errors on its console, requests it made
// beyond the page itself, and whether every chart drew.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Width and Height are the browser window's: a laptop screen.
const (
	Width  = 1280
	Height = 800
)

// Chart is one figure.chart of the page as the browser drew it.
type Chart struct {
	ID     string `json:"id"`
	Canvas bool   `json:"canvas"` // uPlot made its canvas
	Inked  int    `json:"inked"`  // pixels of the canvas that are not transparent
	Series int    `json:"series"` // series in its legend, the x axis's entry left out
	Error  string `json:"error"`  // what the chart says instead, when it could not draw
}

// Page is what the browser saw of a page.
type Page struct {
	Errors   []string // console errors and uncaught exceptions
	Requests []string // requests other than the page's own file
	Charts   []Chart
	// Outside are the page's elements that load or lead outside it (an image,
	// a frame, a script or style from elsewhere, a link that is not to a part
	// of the page), as HTML: a report makes none.
	Outside []string
	// ScrollWidth is how wide the page is laid out at Width: wider means it
	// scrolls sideways on a laptop.
	ScrollWidth int
	// Wide are the innermost elements that reach past Width, the first few,
	// each with its tag, class, right edge and text: what made it wider.
	Wide []string
}

// Chromium is the path of a Chromium or Chrome on PATH, or "".
func Chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Need skips t when no Chromium is on PATH, saying how to get it; when CI is set
// the test must run, and fails instead.
func Need(t testing.TB) string {
	t.Helper()
	p := Chromium()
	if p == "" {
		msg := "chromium is not on PATH: apt-get install -y chromium (make test-deps does)"
		if os.Getenv("CI") != "" {
			t.Fatalf("%s (CI is set, so this test must run: .ci/run provides it)", msg)
		}
		t.Skip(msg)
	}
	return p
}

// Open loads the page at file in headless Chromium, with the network's
// background traffic off and a fresh profile, waits until its charts are drawn,
// and reports what it saw. With screenshot set, the element of the selector
// summary is captured there as a PNG.
func Open(t testing.TB, file, summary, screenshot string) Page {
	t.Helper()
	ctx, url, done := start(t, file)
	defer done()

	var mu sync.Mutex
	var p Page
	navigate(t, ctx, url, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		p.record(ev, url)
	})
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]Chart](inspect))
	if err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	var wide []string
	if width > Width {
		if wide, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(wideElements, Width))); err != nil {
			t.Fatalf("chromium on %s: %v", file, err)
		}
	}
	outside, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](outsideElements))
	if err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	var shot []byte
	if screenshot != "" {
		if shot, err = chromedp.Run(ctx, chromedp.Screenshot(summary, chromedp.NodeVisible)); err != nil {
			t.Fatalf("chromium: screenshot of %s: %v", summary, err)
		}
	}
	if screenshot != "" {
		if err := os.WriteFile(screenshot, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	p.Charts, p.ScrollWidth, p.Outside, p.Wide = charts, width, outside, wide
	return p
}

// start opens a tab of a headless Chromium (the network's background traffic
// off, a fresh profile) for the page at file; done closes it.
func start(t testing.TB, file string) (ctx context.Context, url string, done func()) {
	t.Helper()
	chromium := Need(t)
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(Width, Height))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	ctx, cancelTab := chromedp.NewContext(ctx)
	return ctx, "file://" + abs, func() { cancelTab(); cancelAlloc(); cancel() }
}

// TextsOutside opens the page at file and lists, of each SVG inlined in it
// (id and text), the texts that reach beyond the SVG's edges: a label a reader
// would see cut off.
func TextsOutside(t testing.TB, file string) []string {
	t.Helper()
	ctx, url, done := start(t, file)
	defer done()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](textsOutside))
	if err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	return out
}

const textsOutside = `(function () {
  var out = [];
  document.querySelectorAll("svg").forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.width === 0) return;
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        out.push((svg.id || "svg") + ": " + t.textContent);
    });
  });
  return out;
}())`

// record keeps what a reader must never meet: a console error, an uncaught
// exception, an error in the browser's log, a request beyond the page at url.
func (p *Page) record(ev any, url string) {
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == "error" || e.Type == "assert" {
			p.Errors = append(p.Errors, "console."+string(e.Type)+": "+args(e.Args))
		}
	case *runtime.EventExceptionThrown:
		msg := e.ExceptionDetails.Text
		if ex := e.ExceptionDetails.Exception; ex != nil {
			msg += " " + ex.Description
		}
		p.Errors = append(p.Errors, fmt.Sprintf("uncaught at %d:%d: %s", e.ExceptionDetails.LineNumber, e.ExceptionDetails.ColumnNumber, msg))
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == "error" {
			p.Errors = append(p.Errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		if u := e.Request.URL; u != url && !strings.HasPrefix(u, "data:") {
			p.Requests = append(p.Requests, u)
		}
	}
}

// wideElements lists the innermost elements whose right edge is past the
// window's width (%d), the first five.
const wideElements = `(function (w) {
  var past = function (e) { return e.getBoundingClientRect().right > w + 0.5; }, out = [];
  document.querySelectorAll("body *").forEach(function (e) {
    if (past(e) && !Array.from(e.children).some(past))
      out.push(e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined ? "." + e.className : "") +
        " to " + Math.round(e.getBoundingClientRect().right) + " px: " + (e.textContent || "").trim().slice(0, 120));
  });
  return out.slice(0, 5);
})(%[1]d)`

// outsideElements lists the page's elements that load or lead outside it, as
// HTML cut to 200 characters.
const outsideElements = `Array.from(document.querySelectorAll(
  "img, picture, image, iframe, frame, object, embed, video, audio, source, track, link, script[src], form, base, meta[http-equiv], a[href]:not([href^='#']), [srcset], [background]"
)).map(function (e) { return e.outerHTML.slice(0, 200); })`

// inspect reads, from the page, each chart's canvas: how many of its pixels
// are inked, and how many series its legend names.
const inspect = `Array.from(document.querySelectorAll("figure.chart")).map(function (fig) {
  var c = fig.querySelector("canvas"), inked = 0;
  if (c && c.width > 0 && c.height > 0) {
    var px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    for (var i = 3; i < px.length; i += 4) if (px[i] !== 0) inked++;
  }
  var plot = fig.querySelector(".plot");
  return {id: fig.getAttribute("data-chart"), canvas: !!c, inked: inked,
    series: Math.max(fig.querySelectorAll(".u-legend .u-series").length - 1, 0),
    error: c ? "" : (plot ? plot.textContent : "")};
})`

func args(list []*runtime.RemoteObject) string {
	var out []string
	for _, a := range list {
		if a.Value != nil {
			out = append(out, string(a.Value))
		} else {
			out = append(out, a.Description)
		}
	}
	return strings.Join(out, " ")
}

// Check fails t for what a reader must never meet in a report page: an error on
// the console, a request beyond the page, an element that loads or leads
// outside it, a chart that did not draw, a page
// wider than a laptop screen.
func (p Page) Check(t testing.TB, file string) {
	t.Helper()
	for _, e := range p.Errors {
		t.Errorf("%s: %s", file, e)
	}
	for _, r := range p.Requests {
		t.Errorf("%s requested %s: a report must open offline", file, r)
	}
	for _, e := range p.Outside {
		t.Errorf("%s has an element that loads or leads outside it: %s", file, e)
	}
	for _, c := range p.Charts {
		if !c.Canvas || c.Inked == 0 || c.Series == 0 {
			t.Errorf("%s: chart %s did not draw (canvas %v, %d pixels inked, %d series) %s", file, c.ID, c.Canvas, c.Inked, c.Series, c.Error)
		}
	}
	if p.ScrollWidth > Width {
		t.Errorf("%s is %d px wide at a %d px window: it scrolls sideways; past the window: %q", file, p.ScrollWidth, Width, p.Wide)
	}
}

// ArtifactPath is where a test keeps a file for people to look at after the
// run: in the folder CMPBENCH_ARTIFACTS names (.ci/run sets it), else in the
// test's temporary folder. The test's log says where.
func ArtifactPath(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("CMPBENCH_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	t.Logf("artifact: %s", p)
	return p
}

// Spec is a chart of a report.html as its data says: what the page's script
// draws.
type Spec struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	X, Y  struct {
		Label  string `json:"label"`
		Log    bool   `json:"log"`
		Format string `json:"format"`
	}
	Series []Series  `json:"series"`
	Xs     []float64 `json:"xs"`
	Bands  []struct {
		From  float64 `json:"from"`
		To    float64 `json:"to"`
		Label string  `json:"label"`
	} `json:"bands"`
	HLines []struct {
		Y     float64 `json:"y"`
		Label string  `json:"label"`
	} `json:"hlines"`
	Marks []struct {
		X, Y  float64
		Label string `json:"label"`
	} `json:"marks"`
}

// Series is one series of a chart.
type Series struct {
	Label string     `json:"label"`
	Dash  bool       `json:"dash"`
	Ys    []*float64 `json:"ys"` // nil where the series has no value
}

// Labels are the chart's series' labels, in order.
func (s Spec) Labels() []string {
	var out []string
	for _, x := range s.Series {
		out = append(out, x.Label)
	}
	return out
}

var chartData = regexp.MustCompile(`(?s)<script type="application/json" id="chart-data">(.*?)</script>`)

// Specs reads the charts' data out of a report.html.
func Specs(page []byte) ([]Spec, error) {
	m := chartData.FindSubmatch(page)
	if m == nil {
		return nil, fmt.Errorf("no chart data in the page")
	}
	var out []Spec
	err := json.Unmarshal(m[1], &out)
	return out, err
}

// LivePage is a page served over HTTP (cmpbench run --live) open in headless
// Chromium, read as it changes.
type LivePage struct {
	ctx  context.Context
	done func()
	mu   sync.Mutex
	page Page
}

// OpenURL opens the page at url in headless Chromium (a fresh profile, the
// network's background traffic off) and keeps what a reader must never meet:
// console errors, uncaught exceptions, and requests beyond the page's own
// server.
func OpenURL(t testing.TB, url string) *LivePage {
	t.Helper()
	ctx, _, done := start(t, "")
	p := &LivePage{ctx: ctx, done: done}
	origin := url
	if i := strings.Index(strings.TrimPrefix(url, "http://"), "/"); i >= 0 {
		origin = url[:len("http://")+i+1]
	}
	navigate(t, ctx, url, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && strings.HasPrefix(e.Request.URL, origin) {
			return // the page and its events
		}
		p.page.record(ev, url)
	})
	return p
}

// navigate has the tab of ctx tell listen of its console, its log and its
// requests, then opens url in it and waits for its body.
func navigate(t testing.TB, ctx context.Context, url string, listen func(ev any)) {
	t.Helper()
	if err := chromedp.Listen(ctx, listen); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("chromium: network: %v", err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("chromium: log: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium on %s: %v", url, err)
	}
}

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](t testing.TB, p *LivePage, js string) T {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("chromium: %s: %v", js, err)
	}
	return v
}

// Seen is what the browser met so far: errors, and requests beyond the page's
// server.
func (p *LivePage) Seen() (errors, requests []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.page.Errors), slices.Clone(p.page.Requests)
}

// Close closes the browser.
func (p *LivePage) Close() { p.done() }
