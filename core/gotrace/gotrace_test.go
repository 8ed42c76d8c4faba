package gotrace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStart(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		dir     string // CMPBENCH_TRACE; "" unset
		files   int    // traces written
		wantErr string
	}{
		{name: "unset: no trace", dir: ""},
		{name: "a directory: one trace", dir: filepath.Join(t.TempDir(), "traces"), files: 1},
		{name: "not a directory", dir: notDir, wantErr: EnvVar + "=" + notDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvVar, tc.dir)
			stop, err := Start("host")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Start: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if tc.dir == "" {
				return
			}
			got, _ := filepath.Glob(filepath.Join(tc.dir, "host-*.trace"))
			if len(got) != tc.files {
				t.Fatalf("traces %v, want %d", got, tc.files)
			}
			b, err := os.ReadFile(got[0])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), "go 1.") || !strings.Contains(string(b), EndMark) {
				t.Fatalf("%s does not start like an execution trace: %q", got[0], b[:min(len(b), 16)])
			}
		})
	}
}
