// Package astest is an Aerospike wire-protocol server for tests, because no Aerospike
// server can be installed on the machines cmpbench is developed and tested on. It
// speaks what aerospike-client-go/v8 needs of a single-node cluster: the info protocol
// (build, node, partition and peers generations, peers, the replicas map of one node
// owning all 4096 partitions, namespace statistics and config, truncation) and
// AS_MSG reads, writes and deletes of records by digest, with the record-exists
// policies CREATE_ONLY, REPLACE_ONLY, UPDATE_ONLY and CREATE_OR_REPLACE. It keeps
// records in memory and implements nothing else: no secondary indexes, UDFs,
// scans, queries, batches, transactions, TTLs or authentication.
package astest

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Protocol constants (the client's command.go and types).
const (
	protoVersion = 2
	typeInfo     = 1
	typeMsg      = 3
	headerSize   = 22 // AS_MSG header after the 8-byte proto header
	partitions   = 4096

	info1Read      = 1 << 0
	info1GetAll    = 1 << 1
	info1NoBinData = 1 << 5
	info2Write     = 1 << 0
	info2Delete    = 1 << 1
	info2Create    = 1 << 5 // CREATE_ONLY
	info3Update    = 1 << 3 // UPDATE_ONLY
	info3Replace   = 1 << 4 // CREATE_OR_REPLACE
	info3ReplOnly  = 1 << 5 // REPLACE_ONLY

	fieldNamespace = 0
	fieldSet       = 1
	fieldDigest    = 4

	opRead  = 1
	opWrite = 2

	rcOK          = 0
	rcNotFound    = 2 // KEY_NOT_FOUND_ERROR
	rcExists      = 5 // KEY_EXISTS_ERROR
	rcParameter   = 4 // PARAMETER_ERROR
	rcUnsupported = 16
)

// Build is the version the server reports; the client needs at least 4.9.
const Build = "8.0.0.0"

type bin struct {
	particle byte
	value    []byte
}

type record struct {
	set  string
	bins map[string]bin
	gen  uint32
}

// Server is a running test server.
type Server struct {
	Namespace string
	ln        net.Listener
	mu        sync.Mutex
	records   map[[20]byte]*record
	conns     map[net.Conn]bool
	wg        sync.WaitGroup
	closed    atomic.Bool
	// Requests counts AS_MSG commands by kind ("read", "write", "delete"), for tests.
	requests sync.Map
}

// Start listens on a free loopback port for a namespace.
func Start(namespace string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Namespace: namespace, ln: ln, records: map[[20]byte]*record{}, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Port is the listening port.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops the server and drops every connection.
func (s *Server) Close() error {
	s.closed.Store(true)
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// Count is the number of records held.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.records)
}

// Requests is how many commands of a kind arrived.
func (s *Server) Requests(kind string) int64 {
	v, _ := s.requests.Load(kind)
	if v == nil {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

func (s *Server) count(kind string) {
	v, _ := s.requests.LoadOrStore(kind, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// Corrupt overwrites one bin of every record whose bins include it with value, for
// tests of validation; it reports how many records it changed.
func (s *Server) Corrupt(binName string, match func(value []byte) bool, value []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.records {
		if b, ok := r.bins[binName]; ok && match(b.value) {
			r.bins[binName] = bin{particle: b.particle, value: append([]byte(nil), value...)}
			n++
		}
	}
	return n
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

func (s *Server) serve(c net.Conn) {
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriterSize(c, 64<<10)
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		v := binary.BigEndian.Uint64(hdr[:])
		version, kind, size := byte(v>>56), byte(v>>48), int(v&0xFFFFFFFFFFFF)
		if version != protoVersion || size > 128<<20 {
			return
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var out []byte
		switch kind {
		case typeInfo:
			out = s.info(body)
		case typeMsg:
			out = s.message(body)
		default:
			return
		}
		writeProto(w, kind, out)
		if err := w.Flush(); err != nil {
			return
		}
	}
}

func writeProto(w *bufio.Writer, kind byte, body []byte) {
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(protoVersion)<<56|uint64(kind)<<48|uint64(len(body)))
	w.Write(hdr[:])
	w.Write(body)
}

// info answers name\tvalue lines for each requested name.
func (s *Server) info(body []byte) []byte {
	var b strings.Builder
	for _, name := range strings.Split(strings.TrimRight(string(body), "\n"), "\n") {
		if name == "" {
			continue
		}
		value, ok := s.infoValue(name)
		if !ok {
			value = "ERROR::unsupported by the cmpbench test server"
		}
		b.WriteString(name + "\t" + value + "\n")
	}
	return []byte(b.String())
}

func (s *Server) infoValue(name string) (string, bool) {
	ns := s.Namespace
	switch name {
	case "build":
		return Build, true
	case "edition":
		return "Aerospike Community Edition (cmpbench test server)", true
	case "version":
		return "Aerospike Community Edition build " + Build + " (cmpbench test server)", true
	case "node":
		return "BB9CMPBENCH0001", true
	case "partition-generation", "peers-generation":
		return "1", true
	case "cluster-name":
		return "cmpbench-test", true
	case "features":
		return "", true
	case "peers-clear-std", "peers-clear-alt", "peers-tls-std", "peers-tls-alt":
		return fmt.Sprintf("1,%d,[]", s.Port()), true
	case "service-clear-std", "service-clear-alt":
		return fmt.Sprintf("127.0.0.1:%d", s.Port()), true
	case "replicas":
		all := make([]byte, partitions/8)
		for i := range all {
			all[i] = 0xFF
		}
		return ns + ":0,1," + base64.StdEncoding.EncodeToString(all) + ";", true
	case "namespaces":
		return ns, true
	case "namespace/" + ns:
		n := s.Count()
		return fmt.Sprintf("objects=%d;master_objects=%d;prole_objects=0;replication-factor=1;stop-writes=false;storage-engine=memory", n, n), true
	case "statistics":
		return fmt.Sprintf("cluster_size=1;objects=%d;client_connections=%d", s.Count(), s.connCount()), true
	case "get-config:context=service":
		return "cluster-name=cmpbench-test;proto-fd-max=15000;service-threads=2", true
	case "get-config:context=namespace;id=" + ns:
		return "replication-factor=1;default-ttl=0;storage-engine=memory", true
	case "truncate-namespace:namespace=" + ns:
		s.mu.Lock()
		s.records = map[[20]byte]*record{}
		s.mu.Unlock()
		return "ok", true
	}
	if set, ok := strings.CutPrefix(name, "truncate:namespace="+ns+";set="); ok {
		s.mu.Lock()
		for d, r := range s.records {
			if r.set == set {
				delete(s.records, d)
			}
		}
		s.mu.Unlock()
		return "ok", true
	}
	return "", false
}

func (s *Server) connCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// message executes one AS_MSG and returns the reply message.
func (s *Server) message(body []byte) []byte {
	if len(body) < headerSize || body[0] != headerSize {
		return reply(rcParameter, 0, nil)
	}
	info1, info2, info3 := body[1], body[2], body[3]
	nFields := int(binary.BigEndian.Uint16(body[18:]))
	nOps := int(binary.BigEndian.Uint16(body[20:]))
	off := headerSize
	var ns, set string
	var digest [20]byte
	haveDigest := false
	for range nFields {
		if off+5 > len(body) {
			return reply(rcParameter, 0, nil)
		}
		size := int(binary.BigEndian.Uint32(body[off:]))
		if size < 1 || off+4+size > len(body) {
			return reply(rcParameter, 0, nil)
		}
		typ := body[off+4]
		data := body[off+5 : off+4+size]
		off += 4 + size
		switch typ {
		case fieldNamespace:
			ns = string(data)
		case fieldSet:
			set = string(data)
		case fieldDigest:
			copy(digest[:], data)
			haveDigest = len(data) == 20
		}
	}
	if !haveDigest || ns != s.Namespace {
		return reply(rcParameter, 0, nil)
	}
	type op struct {
		kind     byte
		particle byte
		name     string
		value    []byte
	}
	ops := make([]op, 0, nOps)
	for range nOps {
		if off+8 > len(body) {
			return reply(rcParameter, 0, nil)
		}
		size := int(binary.BigEndian.Uint32(body[off:]))
		nameLen := int(body[off+7])
		if size < 4+nameLen || off+4+size > len(body) {
			return reply(rcParameter, 0, nil)
		}
		o := op{kind: body[off+4], particle: body[off+5]}
		o.name = string(body[off+8 : off+8+nameLen])
		o.value = append([]byte(nil), body[off+8+nameLen:off+4+size]...)
		off += 4 + size
		ops = append(ops, o)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	rec, exists := s.records[digest]
	switch {
	case info2&info2Delete != 0:
		s.count("delete")
		if !exists {
			return reply(rcNotFound, 0, nil)
		}
		delete(s.records, digest)
		return reply(rcOK, 0, nil)
	case info2&info2Write != 0:
		s.count("write")
		switch {
		case info2&info2Create != 0 && exists:
			return reply(rcExists, rec.gen, nil)
		case (info3&info3ReplOnly != 0 || info3&info3Update != 0) && !exists:
			return reply(rcNotFound, 0, nil)
		}
		for _, o := range ops {
			if o.kind != opWrite {
				return reply(rcUnsupported, 0, nil)
			}
		}
		if !exists || info3&(info3ReplOnly|info3Replace) != 0 {
			gen := uint32(0)
			if exists {
				gen = rec.gen
			}
			rec = &record{set: set, bins: map[string]bin{}, gen: gen}
			s.records[digest] = rec
		}
		for _, o := range ops {
			rec.bins[o.name] = bin{particle: o.particle, value: o.value}
		}
		rec.gen++
		return reply(rcOK, rec.gen, nil)
	case info1&info1Read != 0:
		s.count("read")
		if !exists {
			return reply(rcNotFound, 0, nil)
		}
		if info1&info1NoBinData != 0 {
			return reply(rcOK, rec.gen, nil)
		}
		var names []string
		if info1&info1GetAll != 0 || len(ops) == 0 {
			for n := range rec.bins {
				names = append(names, n)
			}
			sort.Strings(names)
		} else {
			for _, o := range ops {
				if _, ok := rec.bins[o.name]; ok {
					names = append(names, o.name)
				}
			}
		}
		out := make([]bin, len(names))
		for i, n := range names {
			out[i] = rec.bins[n]
		}
		return reply(rcOK, rec.gen, binOps(names, out))
	}
	return reply(rcUnsupported, 0, nil)
}

// binOps encodes bins as read operations.
func binOps(names []string, bins []bin) []byte {
	var b []byte
	for i, n := range names {
		var h [8]byte
		binary.BigEndian.PutUint32(h[:], uint32(4+len(n)+len(bins[i].value)))
		h[4], h[5], h[6], h[7] = opRead, bins[i].particle, 0, byte(len(n))
		b = append(b, h[:]...)
		b = append(b, n...)
		b = append(b, bins[i].value...)
	}
	return b
}

// reply builds an AS_MSG reply: the 22-byte header, no fields, ops when given.
func reply(code byte, gen uint32, ops []byte) []byte {
	nOps := 0
	for off := 0; off < len(ops); {
		off += 4 + int(binary.BigEndian.Uint32(ops[off:]))
		nOps++
	}
	m := make([]byte, headerSize, headerSize+len(ops))
	m[0] = headerSize
	m[5] = code
	binary.BigEndian.PutUint32(m[6:], gen)
	binary.BigEndian.PutUint16(m[20:], uint16(nOps))
	return append(m, ops...)
}
