package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/workloads/trace"
)

// newTraceCmd is `cmpbench trace`: request traces for the trace workload.
func newTraceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Make and read request traces for the trace workload",
		Long: `Request traces that a suite's trace: phases replay (docs/suites.md, "Replaying a
trace"): synth writes a synthetic one, facts reads one as a run would.`,
	}
	cmd.AddCommand(newTraceSynthCmd(), newTraceFactsCmd())
	return cmd
}

func newTraceSynthCmd() *cobra.Command {
	o := trace.DefaultSynth()
	var mix string
	cmd := &cobra.Command{
		Use:   "synth FILE",
		Short: "Write a synthetic trace: zipf keys, log-normal value sizes, a diurnal rate",
		Long: `Writes a trace of --requests requests over --keys keys whose popularity is zipf
(--zipf, memtier's exponent), each key's value of one size drawn from a log-normal
distribution (--value-median, --value-sigma, at most --value-max bytes), arriving
as a Poisson process whose rate follows a day (--rate on average, a sine of
--period with relative amplitude --diurnal). The mix (--mix) is of get, set,
delete, incr and decr; incr and decr count counters, keys of their own. Each set
records --ttl. The same flags and --seed write the same bytes. FILE ending in .gz is gzip, in .zst zstd; - is standard output.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return inputErr("%s: want the file to write, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Mix, err = trace.ParseMix(mix); err != nil {
				return badInput(err)
			}
			return synthTrace(o, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.Int64Var(&o.Requests, "requests", o.Requests, "requests in the trace")
	f.Int64Var(&o.Keys, "keys", o.Keys, "distinct keys")
	f.IntVar(&o.KeySize, "key-size", o.KeySize, "pad keys with zeros to this many bytes (0: as short as they are)")
	f.Float64Var(&o.Zipf, "zipf", o.Zipf, "the keys' zipf exponent, in (0, 5)")
	f.Float64Var(&o.ValueMedian, "value-median", o.ValueMedian, "median value size, bytes")
	f.Float64Var(&o.ValueSigma, "value-sigma", o.ValueSigma, "the value sizes' log-normal sigma (0: every value the median)")
	f.IntVar(&o.ValueMax, "value-max", o.ValueMax, "largest value size, bytes")
	f.Float64Var(&o.Rate, "rate", o.Rate, "mean requests/s")
	f.Float64Var(&o.Diurnal, "diurnal", o.Diurnal, "the rate's daily swing, 0 (flat) to 1")
	f.DurationVar(&o.Period, "period", o.Period, "the length of the rate's day")
	f.StringVar(&mix, "mix", "get:90,set:9,delete:1", "each operation's share: get, set, delete, incr, decr (counters, keys of their own), or others a replay skips")
	f.DurationVar(&o.TTL, "ttl", o.TTL, "the TTL each set records, whole seconds (0: none)")
	f.StringVar(&o.Format, "format", o.Format, "cmpbench-csv or twitter-cache")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "random seed")
	return cmd
}

// synthTrace writes the trace o to path, compressed as its name says.
func synthTrace(o trace.Synth, path string, stdout, stderr io.Writer) error {
	if errs := o.Validate(); len(errs) > 0 {
		return inputErr("trace synth: %v", errs)
	}
	compression := trace.CompressionNone
	switch {
	case strings.HasSuffix(path, ".gz"):
		compression = trace.CompressionGzip
	case strings.HasSuffix(path, ".zst"):
		compression = trace.CompressionZstd
	}
	if path == "-" {
		return o.Write(stdout, compression)
	}
	f, err := os.Create(path)
	if err != nil {
		return inputErr("trace synth: %v", err)
	}
	start := time.Now()
	if err := o.Write(f, compression); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("trace synth: %w", err)
	}
	fmt.Fprintf(stderr, "wrote %s: %d requests (%s) in %s\n", path, o.Requests, o.Format, time.Since(start).Round(time.Millisecond))
	return nil
}

func newTraceFactsCmd() *cobra.Command {
	format := trace.DefaultFormat
	cmd := &cobra.Command{
		Use:   "facts FILE",
		Short: "Read a trace as a run does and print its facts (SHA-256, size, lines, span, op mix) as JSON",
		Long: `Reads the whole trace, checking every line as a run does before it starts (a line
not of --format is bad input naming file:line), and prints what the archive will
record of it: SHA-256, size, compression, lines, requests, first and last recorded
time, the largest value, and the op mix with what each operation is replayed as.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return inputErr("%s: want one trace file, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			facts, err := trace.ReadFacts(args[0], format)
			if err != nil {
				return badInput(err)
			}
			b, _ := json.MarshalIndent(facts, "", "  ")
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", format, "the trace's format: "+strings.Join(trace.Formats, ", "))
	return cmd
}
