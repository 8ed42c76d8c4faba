package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core/redact"
	"github.com/cmpbench/cmpbench/suiterun"
)

func newRecoverCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "recover DIR",
		Short: "Turn the directory of a run whose cmpbench died into an archive (status interrupted)",
		Long: `A run writes into a hidden in-progress directory under --out (.<run-id>.partial) and
moves it to its final name when it finishes. When cmpbench is killed (SIGKILL, power
loss) or cannot finish (a full disk), that directory keeps every phase that had ended.
recover turns it into a normal archive with status interrupted: finished phases as
they were, the phase that was running marked partial with the intervals that reached
the disk. verify, report, compare and export then accept it.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeArchives(g, 1, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Secrets were redacted as the run wrote; the systems file, when it loads,
			// lets the final check look for them once more.
			red := &redact.Redactor{}
			if s, err := loadSystems(g); err == nil {
				red = s.Redactor()
			}
			// The archive is made beside the directory, in its parent.
			parent := output{name: "recover " + args[0] + ": its directory", path: filepath.Dir(filepath.Clean(args[0])), dir: true,
				advice: "move " + args[0] + " out of it and recover it there"}
			if err := parent.check(); err != nil {
				return err
			}
			w, err := archive.Recover(args[0], red)
			if err != nil {
				if environmentFault(err) {
					return fmt.Errorf("%w: free space (or make it writable) and recover again; nothing was lost", err)
				}
				return badInput(err)
			}
			dir, tables, err := suiterun.FinishArchive(w, w.RecoveredStatus(), w.Ended())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			out.Write(tables.Compact)
			fmt.Fprintf(out, "Recovered: %s\nReport:    %s\nPage:      %s\n", dir, filepath.Join(dir, archive.ReportFile), filepath.Join(dir, report.HTMLFile))
			return nil
		},
	}
}

// environmentFault reports whether err is the machine's (a full disk, a
// read-only or failing file system) rather than the input's: exit 1, not 2.
func environmentFault(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
