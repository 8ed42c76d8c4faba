package browsertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A page wider than the window says which element made it so.
func TestWideElementIsNamed(t *testing.T) {
	Need(t)
	file := filepath.Join(t.TempDir(), "wide.html")
	page := `<!doctype html><html><body><p>fits</p><table class="t"><tr><td><code class="long">` + strings.Repeat("x", 400) + `</code></td></tr></table></body></html>`
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Open(t, file, "body", "")
	if p.ScrollWidth <= Width || len(p.Wide) == 0 || !strings.HasPrefix(p.Wide[0], "code.long to ") {
		t.Fatalf("%d px wide, past the window: %q", p.ScrollWidth, p.Wide)
	}
}
