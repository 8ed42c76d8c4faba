package trace

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// The formats a trace may be written in.
const (
	// FormatTwitter is Twitter's anonymised cache traces (twitter/cache-trace):
	// timestamp (whole seconds), key, key size, value size, client id,
	// operation, TTL.
	FormatTwitter = "twitter-cache"
	// FormatMonitor is the output of Redis MONITOR (redis-cli monitor):
	// `1339518083.107412 [0 127.0.0.1:60866] "set" "key" "value"`.
	FormatMonitor = "monitor"
	// FormatCSV is cmpbench's own: time (seconds, up to nine decimals), op,
	// key, value size, TTL (seconds, optional); `#` starts a comment line.
	FormatCSV = "cmpbench-csv"
)

// Formats are the formats known, as a suite names them.
var Formats = []string{FormatCSV, FormatTwitter, FormatMonitor}

// request is one line of a trace, parsed: its slices point into the line (or
// into the parser's scratch buffer) and are valid until the next line.
type request struct {
	at   int64  // recorded time, ns on the trace's clock
	op   []byte // the operation as the trace names it, lower case
	key  []byte
	size int           // value size in bytes (what a write writes)
	ttl  time.Duration // a write's; 0 none
	// delta is what an incr adds (a decr's is negated by mapOp): 1 unless
	// the trace says (MONITOR's INCRBY and DECRBY).
	delta int64
}

// parser reads one line of a format into a request. It keeps what it needs
// between lines (a scratch buffer), so that parsing allocates nothing.
type parser struct {
	format  string
	scratch []byte
	fields  [][]byte
}

func newParser(format string) (*parser, error) {
	switch format {
	case FormatCSV, FormatTwitter, FormatMonitor:
	default:
		return nil, fmt.Errorf("format %q is not one of %v", format, Formats)
	}
	return &parser{format: format, scratch: make([]byte, 0, 256), fields: make([][]byte, 0, 8)}, nil
}

// errSkipLine is a line that holds no request: a comment, a header, MONITOR's
// OK. It is neither counted nor replayed.
var errSkipLine = errors.New("not a request")

// parse reads line (without its line end) into r.
func (p *parser) parse(line []byte, r *request) error {
	if len(line) == 0 || line[0] == '#' {
		return errSkipLine
	}
	switch p.format {
	case FormatTwitter:
		return p.twitter(line, r)
	case FormatMonitor:
		return p.monitor(line, r)
	}
	return p.csv(line, r)
}

// csvHeader is the optional first line of cmpbench's CSV.
var csvHeader = []byte("time,op,key,value_size")

func (p *parser) csv(line []byte, r *request) error {
	if bytes.HasPrefix(line, csvHeader) {
		return errSkipLine
	}
	f := p.split(line, ',')
	if len(f) != 4 && len(f) != 5 {
		return fmt.Errorf("want time,op,key,value_size[,ttl]: %d fields", len(f))
	}
	var err error
	if r.at, err = seconds(f[0]); err != nil {
		return err
	}
	r.op, r.key = f[1], f[2]
	if r.size, err = atoi(f[3], "value size"); err != nil {
		return err
	}
	r.ttl, r.delta = 0, 1
	if len(f) == 5 && len(f[4]) > 0 {
		if r.ttl, err = ttlSeconds(f[4]); err != nil {
			return err
		}
	}
	return checkRequest(r)
}

func (p *parser) twitter(line []byte, r *request) error {
	f := p.split(line, ',')
	if len(f) != 7 {
		return fmt.Errorf("want timestamp,key,key_size,value_size,client_id,operation,ttl: %d fields", len(f))
	}
	s, err := atoi(f[0], "timestamp")
	if err != nil {
		return err
	}
	r.at = int64(s) * 1e9
	r.key, r.op = f[1], f[5]
	if r.size, err = atoi(f[3], "value size"); err != nil {
		return err
	}
	if r.ttl, err = ttlSeconds(f[6]); err != nil {
		return err
	}
	r.delta = 1
	return checkRequest(r)
}

// monitor reads `<seconds.micros> [<db> <client>] "cmd" "arg" ...`: the key
// is the first argument, the size of a SET the value's (the second), unquoted
// as Redis quoted it (sdscatrepr).
func (p *parser) monitor(line []byte, r *request) error {
	if bytes.Equal(line, []byte("OK")) {
		return errSkipLine
	}
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return fmt.Errorf("want a MONITOR line: `<time> [<db> <client>] \"command\" ...`")
	}
	var err error
	if r.at, err = seconds(line[:sp]); err != nil {
		return err
	}
	rest := line[sp+1:]
	if len(rest) == 0 || rest[0] != '[' {
		return fmt.Errorf("want [<db> <client>] after the time")
	}
	end := bytes.IndexByte(rest, ']')
	if end < 0 {
		return fmt.Errorf("the client's [<db> <client>] is not closed")
	}
	p.scratch = p.scratch[:0]
	args, err := p.unquoteArgs(rest[end+1:])
	if err != nil {
		return err
	}
	if args == 0 {
		return fmt.Errorf("no command after the client")
	}
	r.op, r.key, r.size, r.ttl, r.delta = p.fields[0], nil, 0, 0, 1
	lowerASCII(r.op)
	if args > 1 {
		r.key = p.fields[1]
	}
	if args > 2 {
		r.size = len(p.fields[2])
	}
	switch a := p.fields[:args]; string(r.op) {
	case "set":
		// SET key value [EX seconds | PX milliseconds | ...]: the expiry, if
		// any, is kept; the other options are not replayed.
		for i := 3; i+1 < args; i++ {
			switch string(bytes.ToLower(a[i])) {
			case "ex":
				r.ttl, _ = ttlIn(a[i+1], time.Second)
			case "px":
				r.ttl, _ = ttlIn(a[i+1], time.Millisecond)
			}
		}
	case "setex", "psetex":
		// SETEX key seconds value; PSETEX key milliseconds value
		if args > 3 {
			r.size = len(a[3])
			unit := time.Second
			if string(r.op) == "psetex" {
				unit = time.Millisecond
			}
			r.ttl, _ = ttlIn(a[2], unit)
		}
	case "incrby", "decrby":
		// INCRBY key increment: the increment, or the line is not replayed.
		if args != 3 {
			r.op = opOther
		} else if n, err := strconv.ParseInt(string(a[2]), 10, 64); err != nil {
			r.op = opOther
		} else {
			r.delta = n
		}
	case "del", "unlink":
		if args > 2 {
			r.op = opMultiDel // one request, several keys: not one DELETE
		}
	}
	return nil
}

// Names that MONITOR lines are counted under when they are not replayed as
// the command they name.
var (
	opMultiDel = []byte("del (several keys)")
	opOther    = []byte("incrby (malformed)")
)

// unquoteArgs reads MONITOR's quoted arguments into p.fields (slices of
// p.scratch) and returns how many there are.
func (p *parser) unquoteArgs(s []byte) (int, error) {
	p.fields = p.fields[:0]
	// The scratch buffer must not move while fields point into it.
	if need := len(s); cap(p.scratch) < need {
		p.scratch = make([]byte, 0, 2*need)
	}
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			i++
			continue
		}
		if s[i] != '"' {
			return 0, fmt.Errorf("argument %d is not quoted", len(p.fields)+1)
		}
		from := len(p.scratch)
		j, err := p.unquote(s, i+1)
		if err != nil {
			return 0, fmt.Errorf("argument %d: %w", len(p.fields)+1, err)
		}
		p.fields = append(p.fields, p.scratch[from:len(p.scratch):len(p.scratch)])
		i = j
	}
	return len(p.fields), nil
}

// unquote appends the quoted string starting at s[i] (after its opening
// quote) to p.scratch and returns the index after its closing quote.
func (p *parser) unquote(s []byte, i int) (int, error) {
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c != '\\':
			p.scratch = append(p.scratch, c)
			i++
			continue
		case i+1 >= len(s):
			return 0, fmt.Errorf("ends in a backslash")
		}
		switch e := s[i+1]; e {
		case 'n', 'r', 't', 'a', 'b', '\\', '"':
			p.scratch = append(p.scratch, unescaped[e])
			i += 2
		case 'x':
			if i+3 >= len(s) {
				return 0, fmt.Errorf("a \\x escape needs two hex digits")
			}
			v, err := strconv.ParseUint(string(s[i+2:i+4]), 16, 8)
			if err != nil {
				return 0, fmt.Errorf("a \\x escape needs two hex digits")
			}
			p.scratch = append(p.scratch, byte(v))
			i += 4
		default:
			return 0, fmt.Errorf("unknown escape \\%c", e)
		}
	}
	return 0, fmt.Errorf("the quote is not closed")
}

var unescaped = [256]byte{'n': '\n', 'r': '\r', 't': '\t', 'a': 7, 'b': 8, '\\': '\\', '"': '"'}

// split cuts line at sep into p.fields.
func (p *parser) split(line []byte, sep byte) [][]byte {
	p.fields = p.fields[:0]
	for {
		i := bytes.IndexByte(line, sep)
		if i < 0 {
			return append(p.fields, line)
		}
		p.fields = append(p.fields, line[:i])
		line = line[i+1:]
	}
}

func checkRequest(r *request) error {
	switch {
	case len(r.op) == 0:
		return fmt.Errorf("no operation")
	case len(r.key) == 0:
		return fmt.Errorf("no key")
	case r.size < 0:
		return fmt.Errorf("value size %d is negative", r.size)
	case r.size > MaxValueSize:
		return fmt.Errorf("value size %d is above the %d MiB limit", r.size, MaxValueSize>>20)
	}
	lowerASCII(r.op)
	return nil
}

// MaxValueSize bounds a value a trace writes.
const MaxValueSize = 64 << 20

// seconds reads a decimal number of seconds ("12", "12.000345") as ns,
// without floating point (a day's trace keeps its nanoseconds).
func seconds(b []byte) (int64, error) {
	whole, frac, _ := bytes.Cut(b, []byte("."))
	s, err := atoi(whole, "time")
	if err != nil {
		return 0, err
	}
	if len(frac) > 9 {
		return 0, fmt.Errorf("time %q has more than nine decimals", b)
	}
	ns := int64(0)
	for i := range 9 {
		ns *= 10
		if i < len(frac) {
			c := frac[i]
			if c < '0' || c > '9' {
				return 0, fmt.Errorf("time %q is not a number of seconds", b)
			}
			ns += int64(c - '0')
		}
	}
	if int64(s) > (1<<62)/int64(time.Second) {
		return 0, fmt.Errorf("time %q is too large", b)
	}
	return int64(s)*1e9 + ns, nil
}

// atoi reads a non-negative decimal integer.
func atoi(b []byte, what string) (int, error) {
	if len(b) == 0 || len(b) > 18 {
		return 0, fmt.Errorf("%s %q is not a number", what, b)
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%s %q is not a non-negative whole number", what, b)
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

func lowerASCII(b []byte) {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
}

// mapOp says what a trace's operation is replayed as, per format, and the
// sign of an INCR's delta: get and gets as GET; set, add, replace and cas as
// SET with a value of the recorded size and its TTL; delete as DELETE; incr
// and decr as INCR by 1 and -1. MONITOR: get; set, setex, psetex; del and
// unlink of one key; incr, decr, incrby, decrby. Anything else (append,
// prepend, touch, MONITOR's other commands) has no cmpbench operation: it is
// skipped, and counted by its name in the trace's facts. So are the kinds an
// adapter lacks (Spec.Fit).
func mapOp(format string, op []byte) (core.OpKind, int64, bool) {
	if format == FormatMonitor {
		switch string(op) {
		case "get":
			return core.OpGet, 0, true
		case "set", "setex", "psetex":
			return core.OpSet, 0, true
		case "del", "unlink":
			return core.OpDelete, 0, true
		case "incr", "incrby":
			return core.OpIncr, 1, true
		case "decr", "decrby":
			return core.OpIncr, -1, true
		}
		return 0, 0, false
	}
	switch string(op) {
	case "get", "gets":
		return core.OpGet, 0, true
	case "set", "add", "replace", "cas":
		return core.OpSet, 0, true
	case "delete":
		return core.OpDelete, 0, true
	case "incr":
		return core.OpIncr, 1, true
	case "decr":
		return core.OpIncr, -1, true
	}
	return 0, 0, false
}

// ttlSeconds reads a TTL in whole seconds.
func ttlSeconds(b []byte) (time.Duration, error) { return ttlIn(b, time.Second) }

// ttlIn reads a TTL of whole units.
func ttlIn(b []byte, unit time.Duration) (time.Duration, error) {
	n, err := atoi(b, "ttl")
	if err != nil {
		return 0, err
	}
	if int64(n) > math.MaxInt64/int64(unit) {
		return 0, fmt.Errorf("ttl %q is too large", b)
	}
	return time.Duration(n) * unit, nil
}
