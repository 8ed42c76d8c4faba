package suiterun

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/runner"
)

// Again is an archived run to run again, read back from its manifest (what
// header wrote): its suite's text, seed, scale and repetitions, and the
// definitions of its systems with the profiles their systems file defined.
type Again struct {
	Suite   *plan.Suite
	Options Options
	Systems *config.Systems
	// Names are the systems run again, in order; LeftOut those that cannot
	// be, each with the warning saying why in Warnings.
	Names, LeftOut []string
	Warnings       []error
}

// Rerun reads what running m again takes: the systems only names (or all, in
// the archived order). A system that cannot be run again from what the
// archive holds (a profile an older archive lacks, a definition this cmpbench
// no longer reads) keeps out only itself: it is left out with a warning, and
// the others run. Naming it in only, or leaving nothing to run, is bad input.
func Rerun(m archive.Manifest, only []string) (*Again, error) {
	if imp := m.Imported; imp != nil {
		return nil, core.BadInputf("%s was imported from %s's output %s: it records no cmpbench suite or systems to run again", m.RunID, imp.Tool, imp.Source)
	}
	suite, err := plan.ParseSuite(fmt.Sprintf("suite.yaml of %s", m.RunID), []byte(m.Suite.YAML))
	if err != nil {
		return nil, core.BadInput{Err: err}
	}
	suite.Source = "rerun of " + m.RunID
	ag := &Again{Suite: suite, Options: Options{Scale: m.Scale, Seed: m.Seed, Repeat: max(1, m.Repeat), Stats: runner.DefaultStatsInterval, Processes: 1,
		Pins: pins(m)}}
	if err := ag.systems(m, only); err != nil {
		return nil, err
	}
	return ag, nil
}

// systems loads the archived definitions of the systems run again, each on its
// own first, so that one that cannot be loaded keeps out only itself.
func (ag *Again) systems(m archive.Manifest, only []string) error {
	var names []string
	for _, s := range m.Systems {
		names = append(names, s.Name)
	}
	for _, n := range only {
		if !slices.Contains(names, n) {
			return core.BadInputf("--systems: %s is not a system of %s (it has %s)", n, m.RunID, strings.Join(names, ", "))
		}
	}
	if len(only) > 0 {
		names = only
	}
	for _, n := range names {
		if _, err := archivedSystems(m, n); err != nil {
			ag.LeftOut, ag.Warnings = append(ag.LeftOut, n), append(ag.Warnings, err)
			continue
		}
		ag.Names = append(ag.Names, n)
	}
	if len(ag.LeftOut) > 0 && (len(only) > 0 || len(ag.Names) == 0) {
		return core.BadInput{Err: errors.Join(ag.Warnings...)}
	}
	systems, err := archivedSystems(m, ag.Names...)
	if err != nil {
		return core.BadInput{Err: err}
	}
	ag.Systems = systems
	return nil
}

// archivedSystems reads the archived definitions of the named systems, with
// the profiles their systems file defined for them, as a systems file.
func archivedSystems(m archive.Manifest, names ...string) (*config.Systems, error) {
	defs, profiles := map[string]any{}, map[string]any{}
	var missing []string
	for _, s := range m.Systems {
		if !slices.Contains(names, s.Name) {
			continue
		}
		defs[s.Name] = s.Definition
		profile, _ := s.Definition["profile"].(string)
		if s.Profile != "" {
			// As a node: the profile stays as it was written.
			var p yaml.Node
			if err := yaml.Unmarshal([]byte(s.Profile), &p); err != nil || len(p.Content) != 1 {
				return nil, fmt.Errorf("system %s of %s is not run again: its archived profile %s is not YAML: %v", s.Name, m.RunID, profile, err)
			}
			profiles[profile] = p.Content[0]
		} else if profile != "" {
			missing = append(missing, fmt.Sprintf("%s (defined in %s, profile %s)", s.Name, s.DefinedIn, profile))
		}
	}
	file := map[string]any{"systems": defs}
	if len(profiles) > 0 {
		file["profiles"] = profiles
	}
	data, err := yaml.Marshal(file)
	if err != nil {
		return nil, err
	}
	what := "the system definitions of " + m.RunID
	if len(names) == 1 {
		what = fmt.Sprintf("the definition of system %s in %s", names[0], m.RunID)
	}
	systems, err := config.LoadSystemsData(what, data)
	if err != nil && len(missing) > 0 {
		// Archives written before profiles were archived lack them.
		return nil, fmt.Errorf("system %s is not run again: %w\n(the archive does not hold the profiles its systems file defined: run it by hand with that file, REPRODUCE.md step 4)", strings.Join(missing, ", "), err)
	}
	if err != nil {
		return nil, fmt.Errorf("system %s is not run again: %w", strings.Join(names, ", "), err)
	}
	return systems, nil
}

// pins are the archived phases' pinned input (core.Pinned), by phase.
func pins(m archive.Manifest) map[string]string {
	out := map[string]string{}
	for _, ph := range m.Phases {
		if p, ok := ph.Spec.(core.Pinned); ok {
			out[ph.Name] = p.Pin()
		}
	}
	return out
}

// checkPins refuses a plan whose phases read other input than pins say (a
// rerun's: the archived run's trace files).
func checkPins(pins map[string]string, phases []core.PhaseSpec) error {
	var errs []error
	seen := map[string]bool{}
	for _, ph := range phases {
		want, ok := pins[ph.Name]
		p, pinned := ph.Workload.(core.Pinned)
		if !ok || !pinned || seen[ph.Name] {
			continue
		}
		seen[ph.Name] = true
		if got := p.Pin(); got != want {
			errs = append(errs, fmt.Errorf("phase %s reads %s, not what the archived run read: %s", ph.Name, got, want))
		}
	}
	if len(errs) > 0 {
		return core.BadInput{Err: fmt.Errorf("not run again: %w", errors.Join(errs...))}
	}
	return nil
}
