package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/cmd/cmpbench/internal/live"
)

// --live takes an address as its next word or after `=`, and means loopback
// and a free port alone; no other argument is taken.
func TestLiveFlagAddress(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // the address served on; "error" for bad input
	}{
		{"not asked", []string{"--systems", "r"}, ""},
		{"alone", []string{"--systems", "r", "--live"}, live.DefaultAddr},
		{"alone, before another flag", []string{"--live", "--systems", "r"}, live.DefaultAddr},
		{"with =", []string{"--live=0.0.0.0:9479", "--systems", "r"}, "0.0.0.0:9479"},
		{"as the next word", []string{"--systems", "r", "--live", "127.0.0.1:9479"}, "127.0.0.1:9479"},
		{"every address, port given", []string{"--live", ":9479"}, ":9479"},
		{"a word that is no address", []string{"--live", "fast"}, "error"},
		{"an argument without --live", []string{"127.0.0.1:9479"}, "error"},
		{"two words after --live", []string{"--live", "127.0.0.1:1", "127.0.0.1:2"}, "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var addr string
			var systems []string
			cmd := &cobra.Command{Use: "run", Args: runArgs(&addr), RunE: func(*cobra.Command, []string) error { return nil }}
			cmd.Flags().StringSliceVar(&systems, "systems", nil, "")
			liveFlag(cmd, &addr)
			cmd.SetArgs(tc.args)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			err := cmd.Execute()
			switch {
			case tc.want == "error" && err == nil:
				t.Errorf("accepted, serving on %q", addr)
			case tc.want != "error" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "error" && addr != tc.want:
				t.Errorf("serving on %q, want %q", addr, tc.want)
			case err != nil && !strings.Contains(err.Error(), "unknown command") && !strings.Contains(err.Error(), "accepts 0 arg"):
				t.Errorf("refused as %v", err)
			}
		})
	}
}

// An address --live cannot listen on is bad input, said before the run's
// directory is made or any system contacted.
func TestLiveAddressInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	writeRedisSystem(t, dir, 1) // nothing listens there: nothing may be contacted
	r := cli(t, dir, nil, "run", "--systems", "r", "--suite", "smoke", "--live", taken.Addr().String())
	if r.code != 2 || !strings.Contains(r.stderr, "--live "+taken.Addr().String()) || !strings.Contains(r.stderr, "address already in use") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "results")); len(entries) > 0 {
		t.Errorf("the run's directory was made: %v", entries)
	}
}
