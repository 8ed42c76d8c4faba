// Package core holds the types every part of cmpbench shares: operations, outcomes,
// the adapter interfaces, phase specifications and measured results.
package core

import (
	"errors"
	"fmt"
	"time"
)

// OpKind names one kind of operation a workload issues and an adapter executes.
type OpKind uint8

// Operation kinds. The numeric values travel across the plugin boundary: append only.
const (
	OpGet     OpKind = iota // read one value by key; a missing key is a miss
	OpSet                   // write one value by key
	OpRead                  // read every field of a record (YCSB READ)
	OpUpdate                // write fields of an existing record (YCSB UPDATE); see Op.WholeRecord
	OpInsert                // create a record (YCSB INSERT)
	OpScan                  // read records in key order from a key (YCSB SCAN)
	OpPublish               // publish a message (Key: the channel, Value: the message)
	// OpDeliver is a published message arriving at a subscriber. The client never
	// sends it: subscribers record it, timed from its publication (see PubSubSpec).
	OpDeliver
	// OpDelete removes one key; a key that was not there is a miss.
	OpDelete
	// OpIncr adds Op.Delta (negative to decrement) to a key's integer value; a
	// missing key counts from 0, as Redis's INCRBY does.
	OpIncr
	NumOpKinds
)

var opNames = [NumOpKinds]string{OpGet: "GET", OpSet: "SET", OpRead: "READ", OpUpdate: "UPDATE", OpInsert: "INSERT", OpScan: "SCAN",
	OpPublish: "PUBLISH", OpDeliver: "DELIVER", OpDelete: "DELETE", OpIncr: "INCR"}

func (k OpKind) String() string {
	if k < NumOpKinds {
		return opNames[k]
	}
	return fmt.Sprintf("op(%d)", uint8(k))
}

// IsRead reports whether the op kind reads data: what its replies hold is
// counted as bytes received.
func (k OpKind) IsRead() bool { return k == OpGet || k == OpRead || k == OpScan }

// CanMiss reports whether a success of the op kind may find nothing there, so
// that hits and misses apply to it: reads, and deletes of a key that was not
// there.
func (k OpKind) CanMiss() bool { return k.IsRead() || k == OpDelete }

// Stores reports whether the op kind changes stored data (keys or records).
func (k OpKind) Stores() bool {
	return k == OpSet || k == OpUpdate || k == OpInsert || k == OpDelete || k == OpIncr
}

// Issued reports whether the client sends the op kind: its successes are the
// phase's throughput, held against its target rate. Deliveries are not issued.
func (k OpKind) Issued() bool { return k < NumOpKinds && k != OpDeliver }

// ParseOpKind is the inverse of OpKind.String.
func ParseOpKind(s string) (OpKind, error) {
	for i, n := range opNames {
		if n == s {
			return OpKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown op kind %q", s)
}

// Op is one operation. Workloads fill it in place; adapters read it and set RespBytes.
// The engine reuses one Op per worker, so adapters must not keep references to Key or
// Value after Do returns.
type Op struct {
	Kind  OpKind
	Key   []byte
	Value []byte // GET/SET
	// Fields names a record's fields and Values holds what UPDATE and INSERT write to
	// them; READ expects len(Fields) fields back, and fewer is an error.
	Fields [][]byte
	Values [][]byte
	// WholeRecord says an UPDATE's Fields are every field of the record, so the
	// adapter may replace the record (Aerospike REPLACE_ONLY, a profile's update
	// command such as LAVIK.HREPLACE). Otherwise only Fields change and the
	// record's other fields stay as they are (YCSB's default, writeallfields=false).
	WholeRecord bool
	// ScanCount is how many records a SCAN reads.
	ScanCount int
	// TTL is how long a SET's key lives (0: no expiry). Only an adapter whose
	// Info.TTL says so keeps it; workloads set it only for those (Info.Fit).
	TTL time.Duration
	// Delta is what an INCR adds.
	Delta int64
	// RespBytes is set by the adapter: payload bytes received in the reply (for reads).
	RespBytes int
}

// WriteBytes is the payload an op writes.
func (o *Op) WriteBytes() int {
	n := len(o.Value)
	for _, v := range o.Values {
		n += len(v)
	}
	return n
}

// OpSource fills in operations: a workload's stream for one worker. Each worker has
// its own source; it is never shared and must not allocate per call.
type OpSource interface {
	Next(op *Op)
}

// Scheduled is an OpSource whose operations carry their own intended send
// times and that can run out: a trace replayed at its recorded times
// (workloads/trace). Due says when the operation the next call of Next fills is
// due, in nanoseconds from the phase start, and false once the stream has no
// more; it may be asked again before Next and says the same. In a fixed-rate
// phase (PhaseSpec.Rate) the engine sends each operation at its Due instead of
// on the rate's schedule, and times its response from it; in a closed loop only
// the end counts. A connection whose stream ran out is done, and a phase whose
// streams ran out ends there, as at a count bound, not at its time bound.
type Scheduled interface {
	Due() (at int64, ok bool)
}

// Acknowledger is an OpSource that is told when each operation it filled in has
// finished, whatever its outcome: once per operation, in the order they were
// filled in (a connection answers in order). One at a time, an operation is
// acknowledged before the next is asked for; a pipelined connection
// (PhaseSpec.Pipeline) asks for up to its depth before the first is
// acknowledged (and more, on a cluster connection whose nodes answer out of
// order: the engine still acknowledges in the order filled in). YCSB's latest distribution reads only records whose inserts
// have finished (its AcknowledgedCounterGenerator).
type Acknowledger interface {
	Acknowledge()
}

// ErrMiss is returned by Conn.Do when a read found no value. It is an outcome, not an error.
var ErrMiss = errors.New("miss")

// ErrUnsupported is returned by optional features an adapter does not implement.
var ErrUnsupported = errors.New("unsupported")

// ErrorClass groups operation errors the way the reports count them.
type ErrorClass uint8

// Error classes. The numeric values travel across the plugin boundary: append only.
const (
	ErrClassOther      ErrorClass = iota // anything not covered below
	ErrClassOOM                          // the server refused a write for lack of memory or device capacity
	ErrClassTimeout                      // no reply within the timeout
	ErrClassConnection                   // connect, reset, broken pipe, closed connection
	ErrClassProtocol                     // a reply that could not be parsed or was unexpected
	ErrClassNotFound                     // an update or read of a record that does not exist
	ErrClassExists                       // an insert of a record that already exists
	// ErrClassOverload: the server turned the request away because it was busy, not
	// full: back-pressure (Aerospike DEVICE_OVERLOAD and KEY_BUSY, Redis BUSY). The
	// same request could succeed a moment later.
	ErrClassOverload
	// ErrClassInDoubt: a write that was sent and then timed out or lost its
	// connection: it may or may not have been applied (Aerospike's in-doubt), so a
	// key count after it may be higher than the successful writes.
	ErrClassInDoubt
	NumErrorClasses
)

var errClassNames = [NumErrorClasses]string{
	ErrClassOther: "other", ErrClassOOM: "oom", ErrClassTimeout: "timeout",
	ErrClassConnection: "connection", ErrClassProtocol: "protocol",
	ErrClassNotFound: "not_found", ErrClassExists: "exists",
	ErrClassOverload: "overload", ErrClassInDoubt: "in_doubt",
}

func (c ErrorClass) String() string {
	if c < NumErrorClasses {
		return errClassNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// OpError is an operation error that carries its class. Adapters return it (or any error
// implementing ErrorClass) so the engine can count errors by class without parsing text.
type OpError struct {
	Class ErrorClass
	Err   error
}

func (e *OpError) Error() string          { return e.Class.String() + ": " + e.Err.Error() }
func (e *OpError) Unwrap() error          { return e.Err }
func (e *OpError) ErrorClass() ErrorClass { return e.Class }

// ClassOf returns the class of an operation error. Errors that do not say their class
// are classified from well-known network conditions, else ErrClassOther.
func ClassOf(err error) ErrorClass {
	var c interface{ ErrorClass() ErrorClass }
	if errors.As(err, &c) {
		return c.ErrorClass()
	}
	return classifyNetError(err)
}

// SplitMixGamma is splitmix64's increment: its state advances by it per value.
const SplitMixGamma = 0x9E3779B97F4A7C15

// Mix64 is splitmix64's output function: the value of a state. Every seed
// cmpbench derives and every value it fills comes from it, so that the same run
// seed gives the same operation streams everywhere.
func Mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}
