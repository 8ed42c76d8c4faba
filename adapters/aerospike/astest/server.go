package astest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Protocol constants (the client's command.go and types; the server's
// include/base/proto.h).
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
	fieldKey       = 2
	fieldDigest    = 4

	opRead  = 1
	opWrite = 2

	particleNull    = 0
	particleInteger = 1
	particleFloat   = 2
	particleBlob    = 4

	rcOK           = 0
	rcNotFound     = 2  // KEY_NOT_FOUND_ERROR
	rcGeneration   = 3  // GENERATION_ERROR
	rcParameter    = 4  // PARAMETER_ERROR
	rcExists       = 5  // KEY_EXISTS_ERROR
	rcClusterKey   = 7  // CLUSTER_KEY_MISMATCH (info: cluster-stable)
	rcTimeout      = 9  // TIMEOUT
	rcUnavailable  = 11 // PARTITION_UNAVAILABLE
	rcTooBig       = 13 // RECORD_TOO_BIG
	rcKeyBusy      = 14 // KEY_BUSY
	rcUnsupported  = 16
	rcNamespace    = 20 // INVALID_NAMESPACE
	rcBinName      = 21 // BIN_NAME_TOO_LONG
	rcEnterprise   = 25 // ENTERPRISE_ONLY
	rcFilteredOut  = 27
	binNameMaxSize = 16 // AS_BIN_NAME_MAX_SZ, with the NUL: names of at most 15 bytes
)

// Build is the server version astest reports: the aerospike-server source its
// formats were checked against. The client needs at least 4.9.
const Build = "8.1.2.0"

// Edition is what the edition command of a Community Edition server answers
// (build/gen_version: "Aerospike ${EDITION^} Edition").
const Edition = "Aerospike Community Edition"

type bin struct {
	particle byte
	value    []byte
}

const (
	stateReady   = iota // in the cluster
	stateDown           // port closed: stopped or cold-starting
	stateWarming        // port open, not yet in the cluster (partition-generation -1)
	stateClosed         // stopped for good
)

// Server is one node. Start gives a single-node cluster's node.
type Server struct {
	Namespace string
	c         *Cluster
	idx       int
	addr      string
	port      int
	id        uint64

	// guarded by c.mu
	state    int
	started  time.Time // the process start: uptime counts from here
	partGen  int64
	peersGen uint64
	epoch    int // restarts so far
	cold     coldData

	mu     sync.Mutex // guards life and inject
	life   *life
	inject map[string][]injection

	stallMu sync.Mutex
	stallD  time.Duration
	stallCh chan struct{}

	ctr         atomic.Pointer[counters] // a restart starts from zeros
	connsOpened atomic.Uint64
	connsClosed atomic.Uint64
	// requests counts AS_MSG commands by kind ("read", "write", "delete"), for tests.
	requests sync.Map
}

// coldData is what a restarting node holds on its device: what it held when it
// stopped.
type coldData struct {
	objects    int
	bytes      int64
	setObjects map[string]int
	setBytes   map[string]int64
}

// life is one run of a node's listener and connections.
type life struct {
	ln    net.Listener
	conns map[net.Conn]bool
	stop  chan struct{}
	wg    sync.WaitGroup
}

type injection struct {
	code byte
	n    int
}

func newServer(c *Cluster, i int) *Server {
	s := &Server{Namespace: c.ns, c: c, idx: i, inject: map[string][]injection{}}
	s.ctr.Store(new(counters))
	return s
}

// Start listens on a free loopback port: a one-node cluster, replication factor 1.
func Start(namespace string) (*Server, error) {
	c, err := StartCluster(namespace, ClusterOptions{})
	if err != nil {
		return nil, err
	}
	return c.Node(0), nil
}

func listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

// Addr is host:port.
func (s *Server) Addr() string { return s.addr }

// Port is the listening port; it stays the same across restarts.
func (s *Server) Port() int { return s.port }

// NodeID is the node id the node command answers (upper-case hex).
func (s *Server) NodeID() string { return fmt.Sprintf("%X", s.id) }

// Cluster is the node's cluster.
func (s *Server) Cluster() *Cluster { return s.c }

// Ready reports whether the node is in the cluster: listening and past its
// cold-start warm-up.
func (s *Server) Ready() bool {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.state == stateReady
}

// Close stops the node for good: its port closes, every connection drops, and the
// other nodes take over its partitions.
func (s *Server) Close() error {
	s.c.mu.Lock()
	if s.state == stateClosed {
		s.c.mu.Unlock()
		return nil
	}
	was := s.state
	s.state = stateClosed
	if was == stateReady {
		s.c.rebalance()
	}
	s.c.mu.Unlock()
	return s.stopLife()
}

// Restart restarts the node as asd Community Edition restarts: the listener and
// every connection close; the data stays (device storage); the port stays closed
// for coldStart (asd CE scans its device before opening it), meanwhile the other
// nodes take over its partitions. Then it listens again on the same port, and for
// a warm-up of coldStart/2 (at least 200 ms) it is an orphan joining the
// cluster: partition-generation -1, no partitions in replicas, cluster_size 0,
// cluster-stable "unstable cluster", AS_MSG commands PARTITION_UNAVAILABLE; its
// uptime counts from the restart and its statistics from zero. Then it is back in
// the cluster. Restart returns once the port listens again (or could not).
func (s *Server) Restart(coldStart time.Duration) error {
	s.c.mu.Lock()
	switch s.state {
	case stateClosed:
		s.c.mu.Unlock()
		return errors.New("astest: node is closed")
	case stateDown:
		s.c.mu.Unlock()
		return errors.New("astest: node is already restarting")
	}
	was := s.state
	if was == stateReady { // a node restarted while warming keeps what it loaded
		s.cold = coldData{setObjects: map[string]int{}, setBytes: map[string]int64{}}
		m, p, b := s.c.nodeCounts(s.idx, nil)
		s.cold.objects, s.cold.bytes = m+p, b
		for _, si := range s.c.setList {
			m, p, b := s.c.nodeCounts(s.idx, si)
			s.cold.setObjects[si.name], s.cold.setBytes[si.name] = m+p, b
		}
	}
	s.state = stateDown
	s.epoch++
	epoch := s.epoch
	s.started = time.Now()
	s.partGen, s.peersGen = -1, 0
	if was == stateReady {
		s.c.rebalance()
	}
	s.c.mu.Unlock()
	s.stopLife()
	s.ctr.Store(new(counters))
	s.connsOpened.Store(0)
	s.connsClosed.Store(0)

	time.Sleep(coldStart)
	var ln net.Listener
	var err error
	for try := 0; ; try++ { // the old socket may linger a moment
		if ln, err = listen(s.addr); err == nil || try == 20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.c.mu.Lock()
	if s.state != stateDown || s.epoch != epoch {
		s.c.mu.Unlock()
		if ln != nil {
			ln.Close()
		}
		return errors.New("astest: node closed while restarting")
	}
	if err != nil {
		s.state = stateClosed
		s.c.mu.Unlock()
		return fmt.Errorf("astest: restart: %w", err)
	}
	s.state = stateWarming
	s.c.mu.Unlock()
	s.serveOn(ln)
	warm := max(coldStart/2, 200*time.Millisecond)
	time.AfterFunc(warm, func() {
		s.c.mu.Lock()
		defer s.c.mu.Unlock()
		if s.state == stateWarming && s.epoch == epoch {
			s.state = stateReady
			s.partGen = 0
			s.c.rebalance()
		}
	})
	return nil
}

// Inject makes the next n AS_MSG commands of a kind ("read", "write" or
// "delete") arriving on this node fail with a result code (e.g. 9 TIMEOUT, 14
// KEY_BUSY, 18 DEVICE_OVERLOAD, 22 FAIL_FORBIDDEN, 8 SERVER_MEM_ERROR), counted in
// the node's namespace statistics as the server counts that code. Injections
// queue up.
func (s *Server) Inject(kind string, code int, n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inject[kind] = append(s.inject[kind], injection{code: byte(code), n: n})
}

func (s *Server) injected(kind string) (byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.inject[kind]
	if len(q) == 0 {
		return 0, false
	}
	code := q[0].code
	if q[0].n--; q[0].n == 0 {
		s.inject[kind] = q[1:]
	}
	return code, true
}

// Stall holds every reply of this node (AS_MSG and info) for d from now; 0 ends
// the stall. A new Stall, or the node stopping, releases replies being held.
func (s *Server) Stall(d time.Duration) {
	s.stallMu.Lock()
	defer s.stallMu.Unlock()
	if s.stallCh != nil {
		close(s.stallCh)
	}
	s.stallD, s.stallCh = d, make(chan struct{})
}

func (s *Server) hold(stop <-chan struct{}) {
	s.stallMu.Lock()
	d, ch := s.stallD, s.stallCh
	s.stallMu.Unlock()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ch:
	case <-stop:
	}
}

// Connections is the number of client connections open on this node now.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.life == nil {
		return 0
	}
	return len(s.life.conns)
}

// Count is the number of records this node holds, as master or replica (the
// namespace's objects statistic).
func (s *Server) Count() int {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	m, p, _ := s.c.nodeCounts(s.idx, nil)
	return m + p
}

// Requests is how many commands of a kind ("read", "write", "delete") arrived on
// this node.
func (s *Server) Requests(kind string) int64 {
	v, _ := s.requests.Load(kind)
	if v == nil {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

func (s *Server) countRequest(kind string) {
	v, _ := s.requests.LoadOrStore(kind, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// Corrupt overwrites one bin of every record of the cluster whose bins include it
// with value, for tests of validation; it reports how many records it changed.
func (s *Server) Corrupt(binName string, match func(value []byte) bool, value []byte) int {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.records {
		if b, ok := r.bins[binName]; ok && match(b.value) {
			r.bins[binName] = bin{particle: b.particle, value: append([]byte(nil), value...)}
			c.resize(r, recordSize(r))
			n++
		}
	}
	return n
}

// serveOn starts accepting on ln.
func (s *Server) serveOn(ln net.Listener) {
	l := &life{ln: ln, conns: map[net.Conn]bool{}, stop: make(chan struct{})}
	s.mu.Lock()
	s.life = l
	s.mu.Unlock()
	l.wg.Add(1)
	go s.accept(l)
}

// stopLife closes the listener and every connection and waits for them.
func (s *Server) stopLife() error {
	s.mu.Lock()
	l := s.life
	s.life = nil
	var err error
	if l != nil {
		err = l.ln.Close()
		for c := range l.conns {
			c.Close()
		}
		close(l.stop)
	}
	s.mu.Unlock()
	if l != nil {
		l.wg.Wait()
	}
	return err
}

func (s *Server) accept(l *life) {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.life != l {
			s.mu.Unlock()
			c.Close()
			return
		}
		l.conns[c] = true
		l.wg.Add(1)
		s.mu.Unlock()
		s.connsOpened.Add(1)
		go func() {
			defer l.wg.Done()
			s.serve(c, l)
			s.mu.Lock()
			delete(l.conns, c)
			s.mu.Unlock()
			c.Close()
			s.connsClosed.Add(1)
		}()
	}
}

func (s *Server) serve(c net.Conn, l *life) {
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
		s.hold(l.stop)
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

type op struct {
	kind     byte
	particle byte
	name     string
	value    []byte
}

type msg struct {
	info1, info2, info3 byte
	ns, set             string
	digest              [20]byte
	haveDigest          bool
	keySize             int
	ops                 []op
}

func parseMsg(body []byte) (*msg, bool) {
	if len(body) < headerSize || body[0] != headerSize {
		return nil, false
	}
	m := &msg{info1: body[1], info2: body[2], info3: body[3]}
	nFields := int(binary.BigEndian.Uint16(body[18:]))
	nOps := int(binary.BigEndian.Uint16(body[20:]))
	off := headerSize
	for range nFields {
		if off+5 > len(body) {
			return nil, false
		}
		size := int(binary.BigEndian.Uint32(body[off:]))
		if size < 1 || off+4+size > len(body) {
			return nil, false
		}
		typ := body[off+4]
		data := body[off+5 : off+4+size]
		off += 4 + size
		switch typ {
		case fieldNamespace:
			m.ns = string(data)
		case fieldSet:
			m.set = string(data)
		case fieldKey:
			m.keySize = len(data)
		case fieldDigest:
			copy(m.digest[:], data)
			m.haveDigest = len(data) == 20
		}
	}
	m.ops = make([]op, 0, nOps)
	for range nOps {
		if off+8 > len(body) {
			return nil, false
		}
		size := int(binary.BigEndian.Uint32(body[off:]))
		nameLen := int(body[off+7])
		if size < 4+nameLen || off+4+size > len(body) {
			return nil, false
		}
		o := op{kind: body[off+4], particle: body[off+5]}
		o.name = string(body[off+8 : off+8+nameLen])
		o.value = append([]byte(nil), body[off+8+nameLen:off+4+size]...)
		off += 4 + size
		m.ops = append(m.ops, o)
	}
	return m, true
}

// message executes one AS_MSG and returns the reply message. As the server's
// thr_tsvc.c: an unknown namespace is INVALID_NAMESPACE and a node that has not
// joined the cluster answers PARTITION_UNAVAILABLE, neither counted in the
// namespace's statistics. A node that is not the partition's master serves the
// command as the master would through a proxy: the receiving node counts
// client_proxy_complete and the master from_proxy_*.
func (s *Server) message(body []byte) []byte {
	m, ok := parseMsg(body)
	if !ok {
		return reply(rcParameter, 0, nil)
	}
	if m.ns != s.Namespace {
		return reply(rcNamespace, 0, nil)
	}
	if !m.haveDigest {
		return reply(rcParameter, 0, nil)
	}
	var kind string
	switch {
	case m.info2&info2Delete != 0:
		kind = "delete"
	case m.info2&info2Write != 0:
		kind = "write"
	case m.info1&info1Read != 0:
		kind = "read"
	default:
		return reply(rcUnsupported, 0, nil)
	}
	s.countRequest(kind)
	c := s.c
	pid := partitionOf(m.digest)
	c.mu.Lock()
	if s.state != stateReady {
		c.mu.Unlock()
		return reply(rcUnavailable, 0, nil)
	}
	exec := s
	if mi := c.master(pid); mi >= 0 && mi != s.idx {
		exec = c.nodes[mi]
	}
	c.mu.Unlock()
	if code, ok := s.injected(kind); ok {
		s.ctr.Load().result("client_", kind, code)
		return reply(code, 0, nil)
	}
	code, gen, ops := c.execute(m, kind, pid)
	if exec != s {
		s.ctr.Load().add("client_proxy_complete")
		exec.ctr.Load().result("from_proxy_", kind, code)
	} else {
		s.ctr.Load().result("client_", kind, code)
	}
	return reply(code, gen, ops)
}

// execute runs a command on the record store.
func (c *Cluster) execute(m *msg, kind string, pid int) (byte, uint32, []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.records[m.digest]
	exists := rec != nil && !c.doomed(rec)
	switch kind {
	case "delete":
		if !exists {
			return rcNotFound, 0, nil
		}
		c.remove(m.digest)
		return rcOK, 0, nil
	case "write":
		return c.write(m, pid, rec, exists)
	default: // read
		if !exists {
			return rcNotFound, 0, nil
		}
		return readBins(m, rec)
	}
}

// write runs a write on the record store (rec, when it exists): its checks, then the
// record it leaves, stored unless it is too big or has no bins left.
func (c *Cluster) write(m *msg, pid int, rec *record, exists bool) (byte, uint32, []byte) {
	for _, o := range m.ops {
		if o.kind != opWrite {
			return rcUnsupported, 0, nil
		}
		if len(o.name) >= binNameMaxSize {
			return rcBinName, 0, nil
		}
	}
	switch {
	case m.info2&info2Create != 0 && exists:
		return rcExists, rec.gen, nil
	case (m.info3&info3ReplOnly != 0 || m.info3&info3Update != 0) && !exists:
		return rcNotFound, 0, nil
	}
	n := writtenRecord(m, pid, rec, exists)
	size := flatSize(n)
	if size+endMarkSize > c.opt.RecordSizeLimit {
		return rcTooBig, 0, nil
	}
	n.size = roundRblocks(size)
	c.remove(m.digest)
	if len(n.bins) > 0 { // a write deleting the last bin deletes the record
		c.add(m.digest, n)
	}
	return rcOK, n.gen, nil
}

// writtenRecord is the record a write leaves: the next generation of rec (its bins
// kept unless the write replaces the record) with the write's bins set or, for a
// null particle, deleted.
func writtenRecord(m *msg, pid int, rec *record, exists bool) *record {
	n := &record{set: m.set, pid: pid, bins: map[string]bin{}, gen: 1, lut: time.Now().UnixNano(), keySize: m.keySize}
	if exists {
		n.gen = rec.gen + 1
		if n.keySize == 0 {
			n.keySize = rec.keySize
		}
		if m.info3&(info3ReplOnly|info3Replace) == 0 {
			for k, v := range rec.bins {
				n.bins[k] = v
			}
		}
	}
	for _, o := range m.ops {
		if o.particle == particleNull {
			delete(n.bins, o.name)
			continue
		}
		n.bins[o.name] = bin{particle: o.particle, value: o.value}
	}
	return n
}

// readBins answers a read of an existing record: its generation alone, every bin,
// or the bins the command names that it has.
func readBins(m *msg, rec *record) (byte, uint32, []byte) {
	if m.info1&info1NoBinData != 0 {
		return rcOK, rec.gen, nil
	}
	var names []string
	if m.info1&info1GetAll != 0 || len(m.ops) == 0 {
		for n := range rec.bins {
			names = append(names, n)
		}
		sort.Strings(names)
	} else {
		for _, o := range m.ops {
			if len(o.name) >= binNameMaxSize {
				return rcBinName, 0, nil
			}
			if _, ok := rec.bins[o.name]; ok {
				names = append(names, o.name)
			}
		}
	}
	out := make([]bin, len(names))
	for i, n := range names {
		out[i] = rec.bins[n]
	}
	return rcOK, rec.gen, binOps(names, out)
}

// Record size as the server's storage computes it (storage/flat.c
// as_flat_record_size, flat_record_overhead_size; the particles' *_flat_size):
// the 35-byte as_flat_record, the set name and user key when stored, the bin
// count, and per bin a name-length byte, the name and the flat particle. A write
// fails when that plus the 4-byte end mark exceeds max-record-size (drv_ssd.c
// ssd_buffer_bins); the device holds it in 16-byte rblocks.
const (
	flatRecordSize = 35
	endMarkSize    = 4
	rblockSize     = 16
)

func flatSize(r *record) int {
	n := flatRecordSize
	if r.set != "" {
		n += 1 + len(r.set)
	}
	if r.keySize > 0 {
		n += uvarSize(r.keySize) + r.keySize
	}
	if len(r.bins) > 0 {
		n += uvarSize(len(r.bins))
	}
	for name, b := range r.bins {
		n += 1 + len(name) + particleFlatSize(b)
	}
	return n
}

func recordSize(r *record) int64 { return roundRblocks(flatSize(r)) }

func roundRblocks(n int) int64 { return int64((n + rblockSize - 1) / rblockSize * rblockSize) }

func uvarSize(v int) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// particleFlatSize: blobs and strings are a type byte, a 4-byte size and the
// bytes (particle_blob.c); integers a type byte, a size byte and 1 to 8 bytes
// (particle_integer.c); floats a type byte and 8 bytes.
func particleFlatSize(b bin) int {
	switch b.particle {
	case particleInteger:
		var v uint64
		for _, x := range b.value {
			v = v<<8 | uint64(x)
		}
		switch {
		case v>>32 != 0:
			return 2 + 8
		case v>>16 != 0:
			return 2 + 4
		case v>>8 != 0:
			return 2 + 2
		}
		return 2 + 1
	case particleFloat:
		return 1 + 8
	}
	return 5 + len(b.value)
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

// counterNames are the namespace statistics astest keeps, in the order the
// server's info_get_namespace_info (base/thr_info.c) prints them.
var counterNames = []string{
	"client_tsvc_error", "client_tsvc_timeout",
	"client_proxy_complete", "client_proxy_error", "client_proxy_timeout",
	"client_read_success", "client_read_error", "client_read_timeout", "client_read_not_found", "client_read_filtered_out",
	"client_write_success", "client_write_error", "client_write_timeout", "client_write_filtered_out",
	"client_delete_success", "client_delete_error", "client_delete_timeout", "client_delete_not_found", "client_delete_filtered_out",
	"from_proxy_tsvc_error", "from_proxy_tsvc_timeout",
	"from_proxy_read_success", "from_proxy_read_error", "from_proxy_read_timeout", "from_proxy_read_not_found", "from_proxy_read_filtered_out",
	"from_proxy_write_success", "from_proxy_write_error", "from_proxy_write_timeout", "from_proxy_write_filtered_out",
	"from_proxy_delete_success", "from_proxy_delete_error", "from_proxy_delete_timeout", "from_proxy_delete_not_found", "from_proxy_delete_filtered_out",
	"fail_xdr_forbidden", "fail_key_busy", "fail_xdr_key_busy", "fail_generation", "fail_record_too_big",
	"fail_client_lost_conflict", "fail_xdr_lost_conflict",
}

var counterIndex = func() map[string]int {
	m := map[string]int{}
	for i, n := range counterNames {
		m[n] = i
	}
	return m
}()

type counters [60]atomic.Uint64

func (c *counters) add(name string) {
	i, ok := counterIndex[name]
	if !ok {
		panic("astest: no counter " + name)
	}
	c[i].Add(1)
}

func (c *counters) get(name string) uint64 { return c[counterIndex[name]].Load() }

// result counts a command's result as the server does: read.c
// client_read_update_stats, write.c client_write_update_stats, delete.c
// client_delete_update_stats (and their from_proxy_ twins), plus the special
// fail_ counters of write.c write_master_failed and rw_request_hash.c.
func (c *counters) result(prefix, kind string, code byte) {
	switch {
	case code == rcOK:
		c.add(prefix + kind + "_success")
	case code == rcTimeout:
		c.add(prefix + kind + "_timeout")
	case code == rcFilteredOut:
		c.add(prefix + kind + "_filtered_out")
	case code == rcNotFound && kind != "write":
		c.add(prefix + kind + "_not_found")
	default:
		c.add(prefix + kind + "_error")
	}
	switch code {
	case rcKeyBusy:
		c.add("fail_key_busy")
	case rcTooBig:
		c.add("fail_record_too_big")
	case rcGeneration:
		c.add("fail_generation")
	}
}
