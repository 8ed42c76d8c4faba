package archive

import (
	"fmt"

	"github.com/cmpbench/cmpbench/core"
)

// PhaseImported records a whole phase that another tool ran (`cmpbench import`): its
// manifest entry as the importer describes it, its intervals (none when the source
// has no per-interval data) and its totals. The rows are laid out as a run's are,
// and the phase's interval count is the number of intervals given, so that verify
// holds an imported archive to the same account of itself as any other.
func (w *Writer) PhaseImported(pi PhaseInfo, intervals []core.IntervalReport, totals []core.OpInterval) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m.Imported == nil {
		return fmt.Errorf("phase %q of %s: only an imported run's archive takes imported phases", pi.Name, pi.System)
	}
	for i := range w.m.Phases {
		if samePhase(&w.m.Phases[i], &pi) {
			return fmt.Errorf("%s is recorded already", describe(&pi))
		}
	}
	id := phaseID{System: pi.System, Index: pi.Index, Name: pi.Name, Repetition: pi.Repetition}
	for i := range intervals {
		if err := addRows(w.spools[spoolIntervals], intervalRows(id, &intervals[i], pi.Rate > 0)); err != nil {
			return err
		}
	}
	pi.Intervals = len(intervals)
	w.m.Phases = append(w.m.Phases, pi)
	if err := addRows(w.spools[spoolSummary], summaryRows(&pi, totals)); err != nil {
		return err
	}
	for _, s := range w.spools {
		if err := s.flush(true); err != nil {
			return err
		}
	}
	return w.saveManifest()
}
