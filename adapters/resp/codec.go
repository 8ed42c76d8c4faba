package resp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// codec encodes requests as RESP arrays of bulk strings and parses RESP2 replies
// (and RESP3's, should a server send them) in place, without allocating unless a
// reply is an error.
type codec struct {
	profile *Profile
}

// AppendRequest implements core.Codec.
func (c codec) AppendRequest(dst []byte, op *core.Op) []byte {
	switch op.Kind {
	case core.OpGet:
		dst = appendHeader(dst, 2)
		dst = appendBulkString(dst, "GET")
		return appendBulk(dst, op.Key)
	case core.OpSet:
		if op.TTL <= 0 {
			dst = appendHeader(dst, 3)
		} else {
			dst = appendHeader(dst, 5)
		}
		dst = appendBulkString(dst, "SET")
		dst = appendBulk(dst, op.Key)
		dst = appendBulk(dst, op.Value)
		if op.TTL > 0 {
			unit, n := expiry(op.TTL)
			dst = appendBulkString(dst, unit)
			dst = appendBulkInt(dst, n)
		}
		return dst
	case core.OpDelete:
		dst = appendHeader(dst, 2)
		dst = appendBulkString(dst, "DEL")
		return appendBulk(dst, op.Key)
	case core.OpIncr:
		dst = appendHeader(dst, 3)
		dst = appendBulkString(dst, "INCRBY")
		dst = appendBulk(dst, op.Key)
		return appendBulkInt(dst, op.Delta)
	case core.OpRead:
		dst = appendHeader(dst, 2)
		dst = appendBulkString(dst, "HGETALL")
		return appendBulk(dst, op.Key)
	case core.OpUpdate:
		return c.appendRecord(dst, c.profile.updateCommand(op), op)
	case core.OpInsert:
		return c.appendRecord(dst, c.profile.Commands.Insert, op)
	case core.OpPublish:
		dst = appendHeader(dst, 3)
		dst = appendBulkString(dst, "PUBLISH")
		dst = appendBulk(dst, op.Key)
		return appendBulk(dst, op.Value)
	}
	// Never sent: Target.Connect refuses workloads with other kinds through the
	// adapter's Info. A PING keeps the stream in step if it ever happened.
	dst = appendHeader(dst, 1)
	return appendBulkString(dst, "PING")
}

// appendRecord writes op's fields with a profile's command.
func (c codec) appendRecord(dst []byte, command []string, op *core.Op) []byte {
	dst = appendHeader(dst, len(command)+1+2*len(op.Fields))
	for _, w := range command {
		dst = appendBulkString(dst, w)
	}
	dst = appendBulk(dst, op.Key)
	for i, f := range op.Fields {
		dst = appendBulk(dst, f)
		dst = appendBulk(dst, op.Values[i])
	}
	return dst
}

func appendHeader(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

func appendBulk(dst, b []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// appendBulkInt appends n as a bulk string of its decimal digits, without
// allocating.
func appendBulkInt(dst []byte, n int64) []byte {
	var digits [20]byte
	s := strconv.AppendInt(digits[:0], n, 10)
	return appendBulk(dst, s)
}

// expiry is SET's option for a TTL: EX and whole seconds when it is whole
// seconds, else PX and milliseconds (at least one).
func expiry(ttl time.Duration) (string, int64) {
	if ttl%time.Second == 0 {
		return "EX", int64(ttl / time.Second)
	}
	return "PX", max(1, int64(ttl/time.Millisecond))
}

func appendBulkString(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// errMalformed marks a reply that is not RESP.
var errMalformed = errors.New("malformed reply")

// ParseReply implements core.Codec: the outcome of op from the reply at the start
// of src, as the rueidis connection's Do reports it.
func (c codec) ParseReply(src []byte, op *core.Op) (int, error) {
	n := skip(src, 0)
	switch {
	case n == needMore:
		return 0, nil
	case n < 0:
		return len(src), &core.OpError{Class: core.ErrClassProtocol, Err: fmt.Errorf("%w: %q", errMalformed, truncate(src, 40))}
	}
	reply := src[:n]
	switch reply[0] {
	case '-', '!':
		msg := errorText(reply)
		return n, &core.OpError{Class: replyClass(msg), Err: replyError(msg)}
	case '_':
		return n, nilReply(op)
	case ':':
		if op.Kind == core.OpDelete && len(reply) == 4 && reply[1] == '0' {
			return n, core.ErrMiss // DEL removed nothing: the key was not there
		}
		if op.Kind == core.OpUpdate {
			if v, ok := parseInt(reply[1 : len(reply)-2]); ok && c.profile.updateFoundNothing(op, v) {
				return n, notFound(op)
			}
		}
		return n, nil
	case '$':
		l, _ := lineInt(reply, 0)
		if l < 0 {
			return n, nilReply(op)
		}
		if op.Kind.IsRead() {
			op.RespBytes = int(l)
		}
		return n, nil
	case '*', '%':
		count, _ := lineInt(reply, 0)
		if count < 0 {
			return n, nilReply(op)
		}
		if op.Kind != core.OpRead {
			return n, nil
		}
		fields, bytes := recordFields(reply)
		op.RespBytes = bytes
		if fields < len(op.Fields) {
			return n, incomplete(op, fields)
		}
		return n, nil
	}
	return n, nil
}

// nilReply is the outcome of a nil reply to op: a miss for a read; for an UPDATE,
// an error of class not_found (the record was not there); for other writes an
// error, since nothing was written. A write is never a miss.
func nilReply(op *core.Op) error {
	switch {
	case op.Kind.IsRead():
		return core.ErrMiss
	case op.Kind == core.OpUpdate:
		return notFound(op)
	}
	return &core.OpError{Class: core.ErrClassOther, Err: fmt.Errorf("%s %s: nil reply, nothing written", op.Kind, op.Key)}
}

func notFound(op *core.Op) error {
	return &core.OpError{Class: core.ErrClassNotFound, Err: fmt.Errorf("%s %s: no such record", op.Kind, op.Key)}
}

// recordFields counts the field/value pairs of a HGETALL reply (a RESP2 array of
// fields and values, or a RESP3 map) and sums the values' lengths.
func recordFields(reply []byte) (fields, valueBytes int) {
	count, next := lineInt(reply, 0)
	elems := int(count)
	if reply[0] == '%' {
		elems *= 2
	}
	i := next
	for k := range elems {
		if k%2 == 1 && i < len(reply) && reply[i] == '$' {
			if l, _ := lineInt(reply, i); l > 0 {
				valueBytes += int(l)
			}
		}
		i = skip(reply, i)
	}
	return elems / 2, valueBytes
}

// replyError is an error reply of the server.
type replyError string

func (e replyError) Error() string { return string(e) }

func errorText(reply []byte) string {
	if reply[0] == '!' { // RESP3 blob error: $-like
		_, next := lineInt(reply, 0)
		return strings.TrimRight(string(reply[next:]), "\r\n")
	}
	return strings.TrimRight(string(reply[1:]), "\r\n")
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// maxBulk bounds a bulk string's length (Redis' proto-max-bulk-len default): a longer
// one is not a reply this client asked for.
const maxBulk = 512 << 20

// What skip and lineInt return instead of an index.
const (
	needMore  = -1 // the value has not fully arrived
	malformed = -2 // not RESP
)

// skip returns the index just after the RESP value that starts at b[i], needMore
// when b ends before it does, malformed when it is not RESP.
func skip(b []byte, i int) int {
	if i >= len(b) {
		return needMore
	}
	n, next := lineInt(b, i)
	if next == needMore {
		return needMore
	}
	switch b[i] {
	case '+', '-', ':', '_', ',', '#', '(':
		return next
	case '$', '!', '=':
		if next == malformed {
			return malformed
		}
		if n < 0 {
			return next // null bulk string
		}
		if n > maxBulk {
			return malformed
		}
		if n > int64(len(b)-next) {
			return needMore
		}
		end := next + int(n) + 2
		if end > len(b) {
			return needMore
		}
		if b[end-2] != '\r' || b[end-1] != '\n' {
			return malformed
		}
		return end
	case '*', '~', '>', '%', '|':
		if next == malformed {
			return malformed
		}
		if n > maxBulk {
			return malformed
		}
		if n > int64(len(b)) {
			return needMore // more elements than bytes: not complete yet
		}
		elems := int(n)
		if b[i] == '%' || b[i] == '|' {
			elems *= 2
		}
		j := next
		for range max(elems, 0) {
			if j = skip(b, j); j < 0 {
				return j
			}
		}
		if b[i] == '|' { // an attribute comes before the reply it describes
			return skip(b, j)
		}
		return j
	}
	return malformed
}

// lineInt reads the line that starts at b[i] (after its type byte) as an integer
// and returns it with the index after the line's CRLF; next is needMore when the
// line has not fully arrived, malformed when a length is not a number. Lines that
// are not lengths return n = 0.
func lineInt(b []byte, i int) (n int64, next int) {
	j := i + 1
	for ; j+1 < len(b); j++ {
		if b[j] == '\r' && b[j+1] == '\n' {
			break
		}
	}
	if j+1 >= len(b) {
		return 0, needMore
	}
	switch b[i] {
	case '$', '!', '=', '*', '~', '>', '%', '|':
		v, ok := parseInt(b[i+1 : j])
		if !ok {
			return 0, malformed
		}
		return v, j + 2
	}
	return 0, j + 2
}

func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false // no digits, or more than any length a reply may have
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, len(b) > 0
}
