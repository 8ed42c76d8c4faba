package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"slices"

	"github.com/klauspost/compress/zstd"

	"github.com/cmpbench/cmpbench/core"
)

// Compressions a trace may have, told from its first bytes.
const (
	CompressionNone = "none"
	CompressionGzip = "gzip"
	CompressionZstd = "zstd"
)

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// lineBuffer is the reader's buffer: a line longer than it is gathered in a
// buffer of its own, which grows to the longest line and stays.
const lineBuffer = 256 << 10

// lines reads a trace file line by line, decompressing as it goes: the file is
// streamed, never read whole. Its SHA-256 is of the file's bytes as stored.
type lines struct {
	name        string
	f           *os.File
	raw         *bufio.Reader // the file's bytes, through sum
	sum         hash.Hash     // nil unless asked
	zr          *zstd.Decoder
	gr          *gzip.Reader
	br          *bufio.Reader
	long        []byte
	line        int64 // number of the last line read, from 1
	compression string
	closed      bool
}

// openLines opens path; withSum also hashes every byte read.
func openLines(path string, withSum bool) (*lines, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	l := &lines{name: path, f: f}
	var raw io.Reader = f
	if withSum {
		l.sum = sha256.New()
		raw = io.TeeReader(f, l.sum)
	}
	rb := bufio.NewReaderSize(raw, 64<<10)
	l.raw = rb
	head, _ := rb.Peek(4)
	switch {
	case bytes.HasPrefix(head, zstdMagic):
		l.compression = CompressionZstd
		// One goroutine, and the least memory the format allows: a trace is
		// read start to end once.
		l.zr, err = zstd.NewReader(rb, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err == nil {
			l.br = bufio.NewReaderSize(l.zr, lineBuffer)
		}
	case bytes.HasPrefix(head, gzipMagic):
		l.compression = CompressionGzip
		l.gr, err = gzip.NewReader(rb)
		if err == nil {
			l.br = bufio.NewReaderSize(l.gr, lineBuffer)
		}
	default:
		l.compression = CompressionNone
		l.br = bufio.NewReaderSize(rb, lineBuffer)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("trace %s: %s: %w", path, l.compression, err)
	}
	return l, nil
}

// next returns the next line without its line end (valid until the next
// call), or io.EOF after the last.
func (l *lines) next() ([]byte, error) {
	b, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = l.br.ReadSlice('\n')
			l.long = append(l.long, b...)
		}
		b = l.long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, l.errorf("%w", err)
	}
	if len(b) == 0 && errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	l.line++
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r")), nil
}

// errorf is an error at the last line read: file:line.
func (l *lines) errorf(format string, a ...any) error {
	return fmt.Errorf("%s:%d: %w", l.name, l.line, fmt.Errorf(format, a...))
}

// sha256 is the hex SHA-256 of the file, once it was read to its end.
func (l *lines) sha256() (string, error) {
	if l.sum == nil {
		return "", errors.New("trace: not hashed")
	}
	// What the decompressor did not read (a trailer, bytes after the frames)
	// is part of the file too.
	if _, err := io.Copy(io.Discard, l.raw); err != nil {
		return "", fmt.Errorf("trace %s: %w", l.name, err)
	}
	return hex.EncodeToString(l.sum.Sum(nil)), nil
}

// close closes the file (and its decompressor); again does nothing.
func (l *lines) close() {
	if l.closed {
		return
	}
	l.closed = true
	if l.zr != nil {
		l.zr.Close()
	}
	_ = l.f.Close()
}

// Facts are what a trace holds, read from all of it before a run: the archive
// keeps them, so that a rerun refuses another file and verify knows what was
// replayed.
type Facts struct {
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"` // bytes, as stored (compressed)
	Compression string `json:"compression"`
	// Lines are the file's lines; Requests those holding a request (not
	// comments, headers, MONITOR's OK).
	Lines    int64 `json:"lines"`
	Requests int64 `json:"requests"`
	// FirstNs and LastNs are the earliest and latest recorded times, ns on the
	// trace's clock: the span is their difference.
	FirstNs int64 `json:"first_ns"`
	LastNs  int64 `json:"last_ns"`
	// MaxValue is the largest value size a replayed request records, in bytes:
	// what a write (or the warm-up's write for a read) writes at most.
	MaxValue int `json:"max_value"`
	// Ops is the op mix: each operation the trace names, how often, and what
	// it is replayed as ("" when skipped).
	Ops []OpCount `json:"ops"`
	// TTLs are the requests replayed as SET that record a TTL.
	TTLs int64 `json:"ttls,omitempty"`
}

var (
	getName = core.OpGet.String()
	setName = core.OpSet.String()
)

// OpCount is one operation of a trace's op mix.
type OpCount struct {
	Op    string `json:"op"`
	Count int64  `json:"count"`
	As    string `json:"as,omitempty"` // GET, SET, DELETE, INCR; "" skipped
}

// SpanNs is the recorded time from the first request to the last.
func (f Facts) SpanNs() int64 { return f.LastNs - f.FirstNs }

// Replayed is how many requests are replayed as op kind k ("" for all replayed).
func (f Facts) Replayed(k string) int64 {
	var n int64
	for _, o := range f.Ops {
		if o.As != "" && (k == "" || o.As == k) {
			n += o.Count
		}
	}
	return n
}

// Skipped is how many requests are skipped, all kinds.
func (f Facts) Skipped() int64 { return f.Requests - f.Replayed("") }

// ReadFacts reads the whole trace once, checking every line: a line that is
// not of the format is an error naming file:line.
func ReadFacts(path, format string) (Facts, error) {
	p, err := newParser(format)
	if err != nil {
		return Facts{}, err
	}
	l, err := openLines(path, true)
	if err != nil {
		return Facts{}, err
	}
	defer l.close()
	ops := map[string]*OpCount{}
	facts := Facts{Compression: l.compression}
	var r request
	for {
		line, err := l.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Facts{}, err
		}
		facts.Lines++
		switch err := p.parse(line, &r); {
		case errors.Is(err, errSkipLine):
			continue
		case err != nil:
			return Facts{}, l.errorf("%s: %w", format, err)
		}
		facts.add(&r, format, ops)
	}
	if facts.Requests == 0 {
		return Facts{}, fmt.Errorf("trace %s holds no request (%d lines of %s)", path, facts.Lines, format)
	}
	if facts.SHA256, err = l.sha256(); err != nil {
		return Facts{}, err
	}
	st, err := l.f.Stat()
	if err != nil {
		return Facts{}, fmt.Errorf("trace: %w", err)
	}
	facts.Size = st.Size()
	for _, o := range ops {
		facts.Ops = append(facts.Ops, *o)
	}
	slices.SortFunc(facts.Ops, func(a, b OpCount) int { return cmpString(a.Op, b.Op) })
	return facts, nil
}

// add counts request r.
func (f *Facts) add(r *request, format string, ops map[string]*OpCount) {
	if f.Requests == 0 || r.at < f.FirstNs {
		f.FirstNs = r.at
	}
	if f.Requests == 0 || r.at > f.LastNs {
		f.LastNs = r.at
	}
	f.Requests++
	o := ops[string(r.op)]
	if o == nil {
		o = &OpCount{Op: string(r.op)}
		if k, _, ok := mapOp(format, r.op); ok {
			o.As = k.String()
		}
		ops[o.Op] = o
	}
	o.Count++
	switch o.As {
	case setName:
		f.MaxValue = max(f.MaxValue, r.size)
		if r.ttl > 0 {
			f.TTLs++
		}
	case getName:
		f.MaxValue = max(f.MaxValue, r.size)
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
