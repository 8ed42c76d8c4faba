package report

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/archive/report/browsertest"
	"github.com/cmpbench/cmpbench/core"
)

// hostile is a server's log as an attacker, or an unlucky server, writes it:
// Markdown that fetches (an image), links, raw HTML and a script, emphasis, a
// backtick and a pipe, ANSI colours, a CR that overwrites the line, BEL, NUL
// and a right-to-left override; url is where the image and link point.
func hostile(url string) string {
	return "\x1b[31mERROR\x1b[0m ![x](" + url + "/leak.png) [click](" + url + "/link) <" + url + "/auto> www.example.com <img src=\"" + url + "/img.png\"> " +
		"<script>alert(1)</script> **bold** _em_ `tick` a|b &amp; \rFAKE \a\x00 \u202Eevil\n# heading\n- item"
}

// gfm renders Markdown as GitHub does, and more: raw HTML passed through,
// bare URLs and www. linked. Text that is inert in it is inert everywhere.
var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))

// actsRe matches what text from a server must never bring into an output: a
// control character other than a line feed or a tab, a bidirectional control.
var actsRe = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

// jsonActsRe matches such a character escaped in the page's chart data (JSON).
var jsonActsRe = regexp.MustCompile(`\\u00(0[0-8bcef]|1[0-9a-f]|7f)`)

// Markup that came from the text rather than from the report (whose own are
// links to the page's parts and report.md's charts).
var markupRe = regexp.MustCompile(`(?i)<[a-z]+[^>]*\s(src|href)="?http|<img src="[^c]|<a href="[^#]|<script>alert|<strong>bold|<em>em|<h1>heading|<li>item`)

// Text from a server (literal) and a sentence holding another tool's words
// (prose) show as written in any Markdown reader, in a list and in a table's
// cell: no emphasis, code, link, image, HTML, entity or heading made of them.
func TestLiteralIsInertMarkdown(t *testing.T) {
	for _, tc := range []struct{ name, in, show string }{
		{"plain", "OOM command not allowed", "OOM command not allowed"},
		{"image", "![x](http://127.0.0.1:18999/leak.png)", "![x](http://127.0.0.1:18999/leak.png)"},
		{"link and autolink", "[a](http://x/) <http://y/> http://z/ www.example.com", "[a](http://x/) <http://y/> http://z/ www.example.com"},
		{"raw HTML", `<img src="http://x/a.png"><script>alert(1)</script>`, `<img src="http://x/a.png"><script>alert(1)</script>`},
		{"emphasis and entity", "**b** _e_ &amp; &#60;", "**b** _e_ &amp; &#60;"},
		{"backticks", "a `b` ``c`` `", "a `b` ``c`` `"},
		{"pipes", "|a|b||", "|a|b||"},
		{"lines", "one\n# two\n- three", "one # two - three"},
		{"ANSI, CR, BEL, NUL, RLO", "\x1b[1mx\ry\az\x00\u202Ew", "␛[1mx␍y␇z␀[U+202E]w"},
		{"spaces around", " a ", " a "},
		{"trailing backslash", `a\`, `a\`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []struct {
				name  string
				quote func(string) string
			}{{"literal", literal}, {"prose", prose}} {
				q := f.quote(tc.in)
				for _, md := range []string{"- " + q + "\n", "| h |\n|---|\n| " + q + " |\n"} {
					var b bytes.Buffer
					if err := gfm.Convert([]byte(md), &b); err != nil {
						t.Fatal(err)
					}
					got, want := textOf(cellOf(b.String())), tc.show
					if f.name == "prose" {
						got, want = strings.TrimSpace(got), strings.TrimSpace(want) // a sentence's ends
					}
					if got != want {
						t.Errorf("%s(%q) as %q renders %q, shows %q, want %q", f.name, tc.in, md, b.String(), got, want)
					}
					// GitHub links a bare URL in a sentence (prose), never in a code span.
					if m := regexp.MustCompile(`<img|<a |<script|<strong|<em|<h1`).FindString(b.String()); m != "" && (f.name == "literal" || m != "<a ") {
						t.Errorf("%s(%q) renders %s: %q", f.name, tc.in, m, b.String())
					}
				}
			}
		})
	}
}

// A fact's words show as written in any Markdown reader, in a list and in a
// table's cell: each value the adapter quoted as code, the rest as text, and
// no emphasis, link, image, HTML or heading made of either, whatever the
// adapter sends.
func TestFactTextIsInertMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name, words, show string
		codes             int
	}{
		{"values", "storage-engine `device`, up to `1000` ms", "storage-engine device, up to 1000 ms", 2},
		{"a hostile value", "no limit (" + core.Quoted("**b** `t` a|b <b>x</b> [l](http://x/) ![i](http://x/i.png)") + ")",
			"no limit (**b** `t` a|b <b>x</b> [l](http://x/) ![i](http://x/i.png))", 2},
		{"a value of spaces and backticks", "x " + core.Quoted(" `a` ") + " y", "x  `a`  y", 1},
		{"hostile words", "**bold** _em_ <i>x</i> [l](http://x/) # not a heading", "**bold** _em_ <i>x</i> [l](http://x/) # not a heading", 0},
		{"backticks that open nothing", "a `` b ` c", "a `` b ` c", 0},
		{"a code span the words hold", "a ` b ``c` d", "a  b ``c d", 1},
		{"lines", "one\n# two", "one # two", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := factText(tc.words)
			for _, md := range []string{"- " + q + "\n", "| h |\n|---|\n| " + q + " |\n"} {
				var b bytes.Buffer
				if err := gfm.Convert([]byte(md), &b); err != nil {
					t.Fatal(err)
				}
				if got := textOf(cellOf(b.String())); got != tc.show {
					t.Errorf("%q as %q renders %q, shows %q, want %q", tc.words, md, b.String(), got, tc.show)
				}
				if m := regexp.MustCompile(`<img|<a |<script|<strong|<em|<h1|<i>|<b>`).FindString(b.String()); m != "" {
					t.Errorf("%q renders %s: %q", tc.words, m, b.String())
				}
				if n := strings.Count(b.String(), "<code>"); n != tc.codes {
					t.Errorf("%q renders %d code spans, want %d: %q", tc.words, n, tc.codes, b.String())
				}
			}
		})
	}
}

// cellOf is the content of a rendered list's item or table's cell.
func cellOf(page string) string {
	m := regexp.MustCompile(`(?s)<(li|td)>(.*)</(li|td)>`).FindStringSubmatch(page)
	if m == nil {
		return page
	}
	return m[2]
}

// textOf is what a rendered fragment shows: its text, tags dropped, entities
// read.
func textOf(fragment string) string {
	s := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(fragment, "")
	s = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&amp;", "&").Replace(s)
	return s
}

// Text from servers and plugins is data in every output: in report.md (as any
// Markdown reader renders it, GitHub's included), report.html, the console's
// tables and the audit, it shows as it was written, control characters made
// visible, and is never markup.
func TestTextFromServersIsData(t *testing.T) {
	if testing.Short() {
		t.Skip("renders a whole soak's report (16 s under -race): the run without -short has it")
	}
	text := hostile("http://127.0.0.1:18999")
	_, files, tables := renderRun(t, archivetest.Options{Hostile: text, Soak: true})
	outputs := map[string][]byte{"console": tables.Compact, "console --wide": tables.Wide}
	for _, f := range files {
		outputs[f.Name] = f.Data // report.md, report.html, charts/*.svg
		if strings.HasSuffix(f.Name, ".svg") {
			if err := xml.Unmarshal(f.Data, new(struct{})); err != nil {
				t.Errorf("%s is not XML: %v", f.Name, err)
			}
		}
	}
	if !bytes.Contains(outputs["charts/server-3-soak.svg"], []byte("␛[31mERROR")) {
		t.Errorf("the server field's chart does not name it, its ESC made visible")
	}
	var md bytes.Buffer
	if err := gfm.Convert(outputs[archive.ReportFile], &md); err != nil {
		t.Fatal(err)
	}
	outputs["report.md rendered"] = md.Bytes()
	for name, out := range outputs {
		loc := actsRe.FindIndex(out)
		if loc == nil && name == HTMLFile {
			loc = jsonActsRe.FindIndex(out)
		}
		if loc != nil {
			t.Errorf("%s holds a control character %q at %d: %q", name, out[loc[0]:loc[1]], loc[0], around(out, loc[0]))
		}
		if name != archive.ReportFile && !strings.HasSuffix(name, ".svg") {
			if loc := markupRe.FindIndex(out); loc != nil {
				t.Errorf("%s made markup of a server's text: %q", name, around(out, loc[0]))
			}
		}
	}
	for _, name := range []string{archive.ReportFile, HTMLFile} {
		if !bytes.Contains(outputs[name], []byte("␛[31mERROR␛[0m")) {
			t.Errorf("%s does not show the server's text, its ESC made visible", name)
		}
	}
	if n := bytes.Count(outputs[HTMLFile], []byte("<script")); n != 3 {
		t.Errorf("report.html has %d scripts, want its own 3 (chart data, uPlot, its script)", n)
	}
}

func around(b []byte, i int) string {
	return string(b[max(0, i-60):min(len(b), i+60)])
}

// The page of an archive whose server wrote Markdown and HTML that fetch opens
// in Chromium without a request beyond itself and without an element the
// report did not make: the text shows, as text.
func TestTextFromServersInChromium(t *testing.T) {
	browsertest.Need(t)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	_, files, _ := renderRun(t, archivetest.Options{Hostile: hostile(srv.URL)})
	file := filepath.Join(t.TempDir(), HTMLFile)
	for _, f := range files {
		if f.Name == HTMLFile {
			if err := os.WriteFile(file, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := browsertest.Open(t, file, "#summary", "")
	p.Check(t, file)
	if n := hits.Load(); n > 0 {
		t.Errorf("the page made %d requests to %s", n, srv.URL)
	}
}
