// Command archivestat prints the numbers the bench/ scripts compare, read from a
// run archive:
//
//	archivestat phase ARCHIVE PHASE  # one line of key=value: throughput, client CPU, latencies, the side probe's send lag, when it ran, the machine's busy cores
//	archivestat lag ARCHIVE PHASE    # side-probe send lag by position within the interval
//	archivestat rss ARCHIVE PHASE    # the largest RSS of the host and plugin processes
//
// phase reports the whole client: the CPU of the plugin process (which runs the
// load) and of the cmpbench host process, during the phase.
//
// lag groups the side probe's send lag (actual send − intended send) by the
// request's position within its 1 s reporting interval, in tenths: a client whose
// per-interval work delays senders shows a first tenth above the others. The first
// two seconds of the phase are left out (connections warming up).
package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	_ "github.com/cmpbench/cmpbench/workloads" // the built-in workloads, which archives and suites name
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: archivestat phase|lag|rss ARCHIVE PHASE")
		os.Exit(2)
	}
	a, err := archive.Open(os.Args[2])
	if err != nil {
		fail(err)
	}
	switch os.Args[1] {
	case "phase":
		phase(a, os.Args[3])
	case "lag":
		lag(a, os.Args[3])
	case "rss":
		rss(a, os.Args[3])
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "archivestat:", err)
	os.Exit(1)
}

func phase(a *archive.Archive, name string) {
	var ops int64
	var found bool
	var errs int64
	var r0 archive.SummaryRow
	lat := map[string]archive.SummaryRow{}
	for _, r := range a.Summary {
		if r.Phase != name {
			continue
		}
		if !found {
			r0, found = r, true
		}
		ops += r.Count
		errs += r.Errors
		lat[r.Op] = r
	}
	if !found {
		fail(fmt.Errorf("no phase %q in %s", name, a.Dir))
	}
	cpu := r0.ClientCPUS + r0.HostCPUS
	fmt.Printf("ops=%d errors=%d secs=%.3f ops_per_s=%.0f status=%s plugin_cpu_s=%.3f host_cpu_s=%.3f cpu_s_per_mop=%.3f client_lagged=%v client_bound=%v",
		ops, errs, r0.DurationS, r0.AchievedRate, r0.Status, r0.ClientCPUS, r0.HostCPUS, cpu/(float64(ops)/1e6), r0.ClientLagged, r0.ClientBound)
	if r0.Sustained != nil {
		fmt.Printf(" sustained=%v", *r0.Sustained)
	}
	for _, p := range a.Manifest.Phases {
		if p.Name == name && p.Repetition <= 1 {
			fmt.Printf(" started_unix_ns=%d ended_unix_ns=%d", p.Started.UnixNano(), p.Ended.UnixNano())
			if p.Host != nil {
				fmt.Printf(" host_cores=%d host_busy_cores=%.2f", p.Host.Cores, p.Host.BusyCores)
			}
			break
		}
	}
	for _, op := range []string{"GET", "SET"} {
		if r, ok := lat[op]; ok {
			fmt.Printf(" %s_resp_p99_us=%.1f %s_svc_p99_us=%.1f %s_lag_p50_us=%.1f %s_lag_p99_us=%.1f", op, us(r.RespP99), op, us(r.SvcP99), op, us(r.LagP50), op, us(r.LagP99))
			fmt.Printf(" %s_resp_p999_us=%.1f %s_svc_p999_us=%.1f", op, us(r.RespP999), op, us(r.SvcP999))
			fmt.Printf(" %s_resp_p50_us=%.1f %s_svc_p50_us=%.1f", op, us(r.RespP50), op, us(r.SvcP50))
		}
	}
	probeLag(a, name)
	fmt.Println()
}

// probeLag prints the side probe's send lag in the phase, p50 and mean, when it ran.
func probeLag(a *archive.Archive, phase string) {
	rows, err := a.Probe()
	if err != nil {
		fail(err)
	}
	var v []time.Duration
	var sum time.Duration
	for _, r := range rows {
		if r.Phase == phase {
			d := time.Duration(r.StartNs - r.IntendedNs)
			v = append(v, d)
			sum += d
		}
	}
	if len(v) == 0 {
		return
	}
	slices.Sort(v)
	fmt.Printf(" probe_lag_p50_us=%.1f probe_lag_mean_us=%.1f", us(int64(v[len(v)/2])), us(int64(sum)/int64(len(v))))
}

func us(ns int64) float64 { return float64(ns) / 1e3 }

func lag(a *archive.Archive, phase string) {
	rows, err := a.Probe()
	if err != nil {
		fail(err)
	}
	var by [10][]time.Duration
	for _, r := range rows {
		if r.Phase != phase || r.IntendedNs < int64(2*time.Second) {
			continue
		}
		tenth := (r.IntendedNs % int64(time.Second)) / int64(100*time.Millisecond)
		by[tenth] = append(by[tenth], time.Duration(r.StartNs-r.IntendedNs))
	}
	mean := func(v []time.Duration) time.Duration {
		var s time.Duration
		for _, d := range v {
			s += d
		}
		return s / time.Duration(max(len(v), 1))
	}
	var rest []time.Duration
	for i, v := range by {
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		q := func(f float64) time.Duration { return v[int(f*float64(len(v)-1))].Round(time.Microsecond) }
		fmt.Printf("  tenth %d: %5d probe requests, send lag mean %8s, p50 %8s, p90 %8s, p99 %8s, max %9s\n",
			i, len(v), mean(v).Round(time.Microsecond), q(0.5), q(0.9), q(0.99), v[len(v)-1].Round(time.Microsecond))
		if i > 0 {
			rest = append(rest, v...)
		}
	}
	if len(by[0]) > 0 && len(rest) > 0 {
		fmt.Printf("  mean send lag, first tenth / other tenths: %.2fx\n", float64(mean(by[0]))/float64(mean(rest)))
	}
}

func rss(a *archive.Archive, phase string) {
	rows, err := a.ClientStats()
	if err != nil {
		fail(err)
	}
	byProc := map[string]int64{}
	first, last := map[string]int64{}, map[string]int64{}
	for _, r := range rows {
		if r.Phase == phase {
			byProc[r.Process] = max(byProc[r.Process], r.RSSBytes)
			if first[r.Process] == 0 {
				first[r.Process] = r.RSSBytes
			}
			last[r.Process] = r.RSSBytes
		}
	}
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	fmt.Printf("host_rss_mib=%.1f plugin_rss_mib=%.1f host_rss_first_mib=%.1f host_rss_last_mib=%.1f plugin_rss_first_mib=%.1f plugin_rss_last_mib=%.1f\n",
		mib(byProc["cmpbench"]), mib(byProc["plugin"]), mib(first["cmpbench"]), mib(last["cmpbench"]), mib(first["plugin"]), mib(last["plugin"]))
}
