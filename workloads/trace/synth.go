package trace

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/keys"
)

// Synth is what `cmpbench trace synth` writes: a trace of Requests requests
// over Keys keys of zipf popularity, each key's value of one size drawn from a
// log-normal distribution, arriving as a Poisson process whose rate follows a
// day (a sine of period Period around Rate, Diurnal its relative amplitude).
// The same options and seed write the same bytes.
type Synth struct {
	Requests int64
	Keys     int64
	Zipf     float64 // the keys' popularity exponent, in (0, 5); memtier's
	// ValueMedian and ValueSigma shape the log-normal value sizes (bytes; sigma
	// of the log); sizes are clamped to 1..ValueMax.
	ValueMedian float64
	ValueSigma  float64
	ValueMax    int
	Rate        float64 // mean requests/s
	Diurnal     float64 // 0 (flat) to 1 (the rate touches 0 at night)
	Period      time.Duration
	// Mix is each operation's share: get, set, delete, incr, decr (or any
	// other name, which a replay skips). incr and decr count counters, keys of
	// their own ("c" and the key's number); the others address values ("k").
	Mix []OpShare
	// TTL is what each write (set, add, replace, cas) records, whole seconds;
	// 0 none.
	TTL    time.Duration
	Format string // FormatCSV or FormatTwitter
	// KeySize pads keys ("k" and the key's number) with zeros to this many
	// bytes; 0 leaves them as short as they are.
	KeySize int
	Seed    uint64
}

// OpShare is an operation and its share of a synthetic trace.
type OpShare struct {
	Op    string
	Share float64
}

// DefaultSynth is what `trace synth` writes unless told otherwise.
func DefaultSynth() Synth {
	return Synth{Requests: 100_000, Keys: 10_000, Zipf: 0.99, ValueMedian: 200, ValueSigma: 1, ValueMax: 100_000,
		Rate: 1000, Diurnal: 0.5, Period: 24 * time.Hour, Format: FormatCSV, Seed: 1,
		Mix: []OpShare{{"get", 0.9}, {"set", 0.09}, {"delete", 0.01}}}
}

// ParseMix reads "get:90,set:9,delete:1".
func ParseMix(s string) ([]OpShare, error) {
	var mix []OpShare
	for part := range strings.SplitSeq(s, ",") {
		op, share, ok := strings.Cut(strings.TrimSpace(part), ":")
		v, err := strconv.ParseFloat(share, 64)
		if !ok || err != nil || v < 0 || op == "" || strings.ContainsAny(op, ", \n") {
			return nil, fmt.Errorf("mix %q: want op:share,... such as get:90,set:9,delete:1", s)
		}
		mix = append(mix, OpShare{Op: strings.ToLower(op), Share: v})
	}
	return mix, nil
}

// Validate reports every problem with the options.
func (o Synth) Validate() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if o.Requests < 1 || o.Requests > core.MaxOps {
		add("requests %d must be from 1 to %d", o.Requests, core.MaxOps)
	}
	if o.Keys < 1 {
		add("keys %d must be at least 1", o.Keys)
	}
	if !(o.Zipf > 0 && o.Zipf < 5) {
		add("zipf %g must be in (0, 5)", o.Zipf)
	}
	if !(o.ValueMedian >= 1) || o.ValueSigma < 0 || o.ValueMax < 1 || o.ValueMax > MaxValueSize {
		add("value sizes: median %g must be at least 1, sigma %g not negative, max %d from 1 to %d", o.ValueMedian, o.ValueSigma, o.ValueMax, MaxValueSize)
	}
	if !(o.Rate > 0 && o.Rate <= core.MaxRate) {
		add("rate %g must be above 0 and at most %g", o.Rate, float64(core.MaxRate))
	}
	if o.Diurnal < 0 || o.Diurnal > 1 || o.Period <= 0 {
		add("diurnal %g must be from 0 to 1, and its period positive", o.Diurnal)
	}
	total := 0.0
	for _, m := range o.Mix {
		total += m.Share
	}
	if total <= 0 {
		add("the mix has no operation with a share above 0")
	}
	if o.TTL < 0 || o.TTL%time.Second != 0 {
		add("ttl %s must be whole seconds, not negative", o.TTL)
	}
	if o.KeySize < 0 || o.KeySize > 1000 {
		add("key size %d must be from 0 to 1000 bytes", o.KeySize)
	}
	if o.Format != FormatCSV && o.Format != FormatTwitter {
		add("format %q: synth writes %s or %s", o.Format, FormatCSV, FormatTwitter)
	}
	return errs
}

// Write writes the trace to w, compressed as compression says (CompressionNone,
// CompressionGzip, CompressionZstd).
func (o Synth) Write(w io.Writer, compression string) (err error) {
	if errs := o.Validate(); len(errs) > 0 {
		return fmt.Errorf("trace synth: %w", errors.Join(errs...))
	}
	var zw io.WriteCloser
	switch compression {
	case CompressionGzip:
		zw = gzip.NewWriter(w)
	case CompressionZstd:
		if zw, err = zstd.NewWriter(w, zstd.WithEncoderConcurrency(1)); err != nil {
			return fmt.Errorf("trace synth: %w", err)
		}
	case CompressionNone, "":
	default:
		return fmt.Errorf("trace synth: compression %q is not none, gzip or zstd", compression)
	}
	out := w
	if zw != nil {
		out = zw
	}
	bw := bufio.NewWriterSize(out, 256<<10)
	if err := o.write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("trace synth: %w", err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("trace synth: %w", err)
		}
	}
	return nil
}

// write writes the lines.
func (o Synth) write(w *bufio.Writer) error {
	rng := keys.NewRand(o.Seed, 0, 0x7472)
	zipf := keys.NewZipf(rng, 0, o.Keys-1, o.Zipf)
	total := 0.0
	for _, m := range o.Mix {
		total += m.Share
	}
	if o.Format == FormatCSV {
		_, _ = w.WriteString("# cmpbench trace synth: " + o.describe() + "\ntime,op,key,value_size,ttl\n")
	}
	kinds := make([]core.OpKind, len(o.Mix)) // what each op is replayed as (GET for none)
	for i, m := range o.Mix {
		kinds[i], _, _ = mapOp(o.Format, []byte(m.Op))
	}
	t := 0.0 // seconds
	line := make([]byte, 0, 128)
	for range o.Requests {
		// A Poisson process whose rate follows the day, at the rate of now.
		rate := o.Rate * (1 + o.Diurnal*math.Sin(2*math.Pi*t/o.Period.Seconds()))
		t += rng.ExpFloat64() / max(rate, o.Rate*1e-3)
		key := zipf.Next()
		m := len(o.Mix) - 1
		for x, i := rng.Float64()*total, 0; i < len(o.Mix); i++ {
			if x < o.Mix[i].Share {
				m = i
				break
			}
			x -= o.Mix[i].Share
		}
		line = o.appendLine(line[:0], t, o.Mix[m].Op, kinds[m], key)
		if _, err := w.Write(line); err != nil {
			return fmt.Errorf("trace synth: %w", err)
		}
	}
	return nil
}

// appendLine appends one request in the format: a write (set, add, replace,
// cas) records its value's size and the TTL, others neither; incr and decr
// address counters.
func (o Synth) appendLine(b []byte, t float64, op string, kind core.OpKind, key int64) []byte {
	size, ttl := 0, int64(0)
	if kind == core.OpSet {
		size, ttl = o.valueSize(key), int64(o.TTL/time.Second)
	}
	name := byte('k')
	if kind == core.OpIncr {
		name = 'c'
	}
	if o.Format == FormatTwitter {
		b = strconv.AppendInt(b, int64(t), 10)
		b = append(b, ',')
		from := len(b)
		b = o.appendKey(b, name, key)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(len(b)-from-1), 10)
		b = append(b, ',')
		if op != "get" && op != "gets" { // a read records the size it read
			b = strconv.AppendInt(b, int64(size), 10)
		} else {
			b = strconv.AppendInt(b, int64(o.valueSize(key)), 10)
		}
		b = append(b, ",1,"...)
		b = append(b, op...)
		b = append(b, ',')
		b = strconv.AppendInt(b, ttl, 10)
		return append(b, '\n')
	}
	b = strconv.AppendFloat(b, t, 'f', 6, 64)
	b = append(b, ',')
	b = append(b, op...)
	b = append(b, ',')
	b = o.appendKey(b, name, key)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, ttl, 10)
	return append(b, '\n')
}

// appendKey appends key's name: the letter and its number, padded with zeros
// to KeySize bytes.
func (o Synth) appendKey(b []byte, name byte, key int64) []byte {
	b = append(b, name)
	digits := 1
	for n := key; n >= 10; n /= 10 {
		digits++
	}
	for i := 1 + digits; i < o.KeySize; i++ {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, key, 10)
}

// valueSize is key's value size: the same for every request of the key.
func (o Synth) valueSize(key int64) int {
	a := core.Mix64(o.Seed ^ uint64(key)*core.SplitMixGamma)
	b := core.Mix64(a + core.SplitMixGamma)
	// Two uniforms from the key, a normal by Box-Muller.
	u1 := (float64(a>>11) + 0.5) / (1 << 53)
	u2 := float64(b>>11) / (1 << 53)
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	size := int(math.Round(o.ValueMedian * math.Exp(o.ValueSigma*z)))
	return min(max(size, 1), o.ValueMax)
}

func (o Synth) describe() string {
	var mix []string
	for _, m := range o.Mix {
		mix = append(mix, fmt.Sprintf("%s:%g", m.Op, m.Share))
	}
	return fmt.Sprintf("requests=%d keys=%d key_size=%d zipf=%g value_median=%g value_sigma=%g value_max=%d rate=%g diurnal=%g period=%s mix=%s seed=%d",
		o.Requests, o.Keys, o.KeySize, o.Zipf, o.ValueMedian, o.ValueSigma, o.ValueMax, o.Rate, o.Diurnal, o.Period, strings.Join(mix, ","), o.Seed)
}
