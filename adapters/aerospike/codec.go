package aerospike

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/aerospike/aerospike-client-go/v8/pkg/ripemd160"
	"github.com/aerospike/aerospike-client-go/v8/types"

	"github.com/cmpbench/cmpbench/core"
)

// The Aerospike wire protocol of a single-record command (AS_MSG), as
// aerospike-client-go v8 writes it (command.go) and asd reads it
// (as/include/base/proto.h): an 8-byte proto header (version 2, type 3, the size
// of the rest in 48 bits, big-endian), a 22-byte message header, the fields
// (namespace, set, the key's digest), then one op per bin.
const (
	protoHeaderSize = 8
	msgHeaderSize   = 22
	protoVersion    = 2
	protoTypeMsg    = 3
	// Field types (proto.h AS_MSG_FIELD_TYPE_*).
	fieldNamespace = 0
	fieldSet       = 1
	fieldDigest    = 4
	// Op types (AS_MSG_OP_*) and particle types (AS_PARTICLE_TYPE_*).
	opRead      = 1
	opWrite     = 2
	particleNil = 0
	blobType    = 4
	// Info bits (AS_MSG_INFO1_*, INFO2_*, INFO3_*).
	info1Read       = 1 << 0
	info1GetAll     = 1 << 1
	info2Write      = 1 << 0
	info2CreateOnly = 1 << 5
	info3UpdateOnly = 1 << 3
	info3Replace    = 1 << 5
	// digestSize is a RIPEMD-160 digest's.
	digestSize = 20
	// Partitions is the number of partitions of a namespace.
	Partitions = 4096
	// particleString is a user key's type in its digest: keys are strings.
	particleString = 3
	// maxReplySize bounds the reply a record's read can be: asd's largest
	// record (write-block-size, 8 MiB at most) with room to spare.
	maxReplySize = 64 << 20
)

// Digest is the digest of a record's key in a set, as the client and the
// server compute it: RIPEMD-160 of the set name, the key's particle type
// (string) and the key.
func Digest(h *ripemd160.Digest, dst *[digestSize]byte, set string, key []byte) {
	h.Reset()
	h.Write([]byte(set))
	h.Write([]byte{particleString})
	h.Write(key)
	h.Sum(dst[:]) // the client's ripemd160 copies into dst
}

// PartitionOf is the partition of a digest: its first 4 bytes little-endian,
// modulo Partitions, as the client (key.go PartitionId) and the server
// compute it.
func PartitionOf(d *[digestSize]byte) int {
	return int(binary.LittleEndian.Uint32(d[:4])&0xFFFF) & (Partitions - 1)
}

// codec encodes the workloads' operations as AS_MSG requests and parses the
// replies into the outcomes the adapter's Do returns: GET and SET on the single
// bin, READ of every bin, UPDATE (REPLACE_ONLY of the whole record, UPDATE_ONLY of
// some bins), INSERT (CREATE_ONLY). It allocates nothing on the way of a
// successful operation.
type codec struct {
	ns, set string
	timeout time.Duration // sent as the server's transaction timeout
	// prefix is the digest's hash after the set name and the key's type, the
	// same for every key; hash is it continued with one key.
	prefix, hash ripemd160.Digest
	digest       [digestSize]byte
	pid          int   // the partition of the last request
	route        route // driver wire's routing by partition (Route)
}

func newCodec(ns, set string, timeout time.Duration) *codec {
	c := &codec{ns: ns, set: set, timeout: timeout}
	c.prefix.Reset()
	c.prefix.Write([]byte(set))
	c.prefix.Write([]byte{particleString})
	return c
}

// AppendRequest implements core.Codec. An op kind the codec does not speak
// encodes nothing: the adapter never hands it one (Do serves it).
func (c *codec) AppendRequest(dst []byte, op *core.Op) []byte {
	var info1, info2, info3 byte
	switch op.Kind {
	case core.OpGet:
		info1 = info1Read
	case core.OpRead:
		info1 = info1Read | info1GetAll
	case core.OpSet:
		info2 = info2Write
	case core.OpUpdate:
		info2, info3 = info2Write, info3UpdateOnly
		if op.WholeRecord {
			info3 = info3Replace
		}
	case core.OpInsert:
		info2 = info2Write | info2CreateOnly
	default:
		return dst
	}
	start := len(dst)
	dst = append(dst, make([]byte, protoHeaderSize+msgHeaderSize)...)
	h := dst[start+protoHeaderSize:]
	h[0], h[1], h[2], h[3] = msgHeaderSize, info1, info2, info3
	binary.BigEndian.PutUint32(h[14:], uint32(c.timeout/time.Millisecond))
	binary.BigEndian.PutUint16(h[18:], 3)
	dst = appendField(dst, fieldNamespace, c.ns)
	dst = appendField(dst, fieldSet, c.set)
	c.hash = c.prefix
	c.hash.Write(op.Key)
	c.hash.Sum(c.digest[:])
	c.pid = PartitionOf(&c.digest)
	dst = binary.BigEndian.AppendUint32(dst, 1+digestSize)
	dst = append(append(dst, fieldDigest), c.digest[:]...)
	var ops uint16
	switch op.Kind {
	case core.OpGet:
		dst, ops = appendOp(dst, opRead, particleNil, singleBin, nil), 1
	case core.OpSet:
		dst, ops = appendOp(dst, opWrite, blobType, singleBin, op.Value), 1
	case core.OpUpdate, core.OpInsert:
		for i, f := range op.Fields {
			dst = appendOp(dst, opWrite, blobType, string(f), op.Values[i])
		}
		ops = uint16(len(op.Fields))
	}
	binary.BigEndian.PutUint16(dst[start+protoHeaderSize+20:], ops)
	binary.BigEndian.PutUint64(dst[start:], uint64(len(dst)-start-protoHeaderSize)|protoVersion<<56|protoTypeMsg<<48)
	return dst
}

func appendField(dst []byte, typ byte, s string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(1+len(s)))
	return append(append(dst, typ), s...)
}

func appendOp(dst []byte, op, particle byte, bin string, value []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(4+len(bin)+len(value)))
	dst = append(dst, op, particle, 0, byte(len(bin)))
	return append(append(dst, bin...), value...)
}

// ParseReply implements core.Codec: one AS_MSG reply, its result code the
// outcome as Do classifies it (a GET of a missing key is a miss), the bytes of
// its bins' values the op's RespBytes.
func (c *codec) ParseReply(src []byte, op *core.Op) (int, error) {
	if len(src) < protoHeaderSize {
		return 0, nil
	}
	proto := binary.BigEndian.Uint64(src)
	size := int(proto & (1<<48 - 1))
	n := protoHeaderSize + size
	if proto>>56 != protoVersion || proto>>48&0xFF != protoTypeMsg || size < msgHeaderSize || size > maxReplySize {
		// The stream is not to be trusted: all of it goes, the connection with it.
		return len(src), protocolError(fmt.Errorf("not an AS_MSG reply of at most %d bytes: proto header %016x", maxReplySize, proto))
	}
	if len(src) < n {
		return 0, nil
	}
	m := src[protoHeaderSize:n]
	if int(m[0]) < msgHeaderSize || int(m[0]) > len(m) {
		return n, protocolError(fmt.Errorf("AS_MSG reply: header size %d", m[0]))
	}
	code := types.ResultCode(m[5])
	fields, ops := int(binary.BigEndian.Uint16(m[18:])), int(binary.BigEndian.Uint16(m[20:]))
	body := m[m[0]:]
	for range fields {
		if len(body) < 4 || int(binary.BigEndian.Uint32(body)) > len(body)-4 {
			return n, protocolError(errors.New("AS_MSG reply: a field overruns the message"))
		}
		body = body[4+binary.BigEndian.Uint32(body):]
	}
	values := 0
	for range ops {
		if len(body) < 8 || int(binary.BigEndian.Uint32(body)) > len(body)-4 || int(body[7]) > int(binary.BigEndian.Uint32(body))-4 {
			return n, protocolError(errors.New("AS_MSG reply: an op overruns the message"))
		}
		sz := int(binary.BigEndian.Uint32(body))
		values += sz - 4 - int(body[7])
		body = body[4+sz:]
	}
	if code != types.OK {
		return n, c.failure(code, op)
	}
	if op.Kind == core.OpRead && ops < len(op.Fields) {
		return n, &core.OpError{Class: core.ErrClassOther, Err: fmt.Errorf("record %s has %d of %d bins", op.Key, ops, len(op.Fields))}
	}
	op.RespBytes = values
	return n, nil
}

// failure is the outcome of a reply's result code: a GET's KEY_NOT_FOUND is a
// miss, a write's TIMEOUT in doubt (the server may yet apply it; the client's
// IsInDoubt says so too), any other code an error of its class (classOf).
func (c *codec) failure(code types.ResultCode, op *core.Op) error {
	switch {
	case code == types.KEY_NOT_FOUND_ERROR && op.Kind == core.OpGet:
		return core.ErrMiss
	case code == types.TIMEOUT && c.InDoubt(op):
		return &core.OpError{Class: core.ErrClassInDoubt, Err: resultError(code)}
	}
	return &core.OpError{Class: classOf(code), Err: resultError(code)}
}

// InDoubt implements core.InDoubter: a write that was sent and then timed out
// or lost its connection may have been applied.
func (c *codec) InDoubt(op *core.Op) bool { return op.Kind.Stores() }

// resultError is a reply's result code that is not OK.
type resultError types.ResultCode

func (e resultError) Error() string {
	return fmt.Sprintf("ResultCode: %s (%d): %s", types.ResultCode(e), int(e), types.ResultCodeToString(types.ResultCode(e)))
}

func protocolError(err error) error { return &core.OpError{Class: core.ErrClassProtocol, Err: err} }
