package suiterun

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/sampler"
)

// processesOf checks --processes and --client-cpus against the plan, and returns
// each process's CPUs (nil: not pinned).
func processesOf(o Options, p *plan.Plan) ([][]int, error) {
	k := o.Processes
	if k < 1 || k > 64 {
		return nil, core.BadInputf("--processes must be between 1 and 64, got %d", k)
	}
	if k > 1 {
		var errs []error
		for _, st := range p.Steps {
			if st.Uses.Kind != "" {
				continue // its connections are known when the phase it uses has run
			}
			if _, err := plan.SplitSpec(st.Spec, plan.Shard{Index: 0, Count: k}, 1); err != nil {
				errs = append(errs, fmt.Errorf("phase %q cannot run on --processes %d: %w", st.Spec.Name, k, err))
			}
		}
		if len(errs) > 0 {
			return nil, core.BadInput{Err: errors.Join(errs...)}
		}
	}
	if o.ClientCPUs == "" {
		return nil, nil
	}
	cpus, err := sampler.ParseCPUList(o.ClientCPUs)
	if err != nil {
		return nil, core.BadInputf("--client-cpus: %w", err)
	}
	// Every CPU must be one this process may run on (and so its plugins): a CPU
	// that does not exist is found here, at --dry-run too, not once a server
	// has started.
	if allowed := sampler.CPUsAllowed(os.Getpid()); len(allowed) > 0 {
		var missing []string
		for _, c := range cpus {
			if !slices.Contains(allowed, c) {
				missing = append(missing, strconv.Itoa(c))
			}
		}
		if len(missing) > 0 {
			return nil, core.BadInputf("--client-cpus %s: CPU %s is not one cmpbench may run on here (allowed: %s)", o.ClientCPUs, strings.Join(missing, ", "), cpuRanges(allowed))
		}
	}
	if len(cpus) < k {
		return nil, core.BadInputf("--client-cpus %s has %d CPUs for %d processes: each needs one at least", o.ClientCPUs, len(cpus), k)
	}
	groups := make([][]int, k)
	for i := range k {
		start, n := core.Split(int64(len(cpus)), k, i)
		groups[i] = cpus[start : start+n]
	}
	return groups, nil
}

// processesWarning says when --processes asks for more load processes than the
// CPUs cmpbench may run on here (cpus, runtime.NumCPU): they then wait for CPUs,
// and the numbers measure the client's own contention as much as the systems'.
// The run goes on (two processes on one core still split one process's work),
// but it is said at --dry-run and in the run, and the archive records it
// (manifest processes) so that the report says it too.
func processesWarning(k, cpus int) string {
	if k <= cpus {
		return ""
	}
	return fmt.Sprintf("--processes %d runs %d load processes per system on %d CPUs (runtime.NumCPU): with more load processes than cores "+
		"they wait for CPUs, and the numbers measure the client's own contention as much as the systems'; the report says so (--processes %d or fewer here)", k, k, cpus, cpus)
}

// cpuRanges writes sorted CPU numbers as a taskset list: 0-3,6.
func cpuRanges(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
