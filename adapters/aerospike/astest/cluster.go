package astest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
)

// ClusterOptions shape a test cluster. Zero values take the defaults.
type ClusterOptions struct {
	Nodes             int // default 1
	ReplicationFactor int // default 1; the effective factor is min(it, live nodes)
	// RecordSizeLimit is the namespace's max-record-size in bytes (default 1 MiB,
	// the server's default); a write whose stored record would be bigger fails with
	// RECORD_TOO_BIG (13).
	RecordSizeLimit int
	// TruncateDelay: truncation is asynchronous on a server; for this long after a
	// truncate the set (or namespace) reports truncating=true and its records are
	// still counted, though reads no longer find them; then they are gone. 0
	// truncates before the info command answers.
	TruncateDelay time.Duration
	// MigrationDelay: for this long after the membership changes (a node leaves or
	// joins) partitions migrate: the nodes report migrate_partitions_remaining > 0
	// and cluster-stable without ignore-migrations=true answers "unstable cluster".
	// Ownership and counts move at once. Default 0: migrations are instantaneous.
	MigrationDelay time.Duration
}

// DefaultRecordSizeLimit is the server's default max-record-size (namespace.c).
const DefaultRecordSizeLimit = 1 << 20

// Cluster is a running test cluster: nodes on loopback ports sharing one record
// store, each reporting what it would hold as master or replica.
type Cluster struct {
	ns  string
	opt ClusterOptions

	mu      sync.Mutex // guards everything below, and every node's membership fields
	nodes   []*Server
	records map[[20]byte]*record
	sets    map[string]*setInfo
	setList []*setInfo // in creation order, as the server's set vmap
	// objects and bytes per partition, all sets (and no set) together
	objects  [partitions]int
	bytes    [partitions]int64
	nsTrunc  int64 // namespace truncate time, Unix ns; 0: none
	nsTrunct bool  // truncating the namespace
	// replicas[p] lists the node indexes holding partition p: master first.
	replicas [partitions][]int
	effRF    int
	key      uint64 // cluster key of the live nodes
	gen      uint64 // cluster generation
	// migration bookkeeping: until migrateUntil, node i has migrating[i]
	// partitions to send (tx) and receive (rx).
	migrateUntil time.Time
	migrateTx    []int
	migrateRx    []int
}

type setInfo struct {
	name     string
	objects  [partitions]int
	bytes    [partitions]int64
	trunc    int64 // truncate time, Unix ns; 0: none
	truncing bool
}

type record struct {
	set     string
	pid     int
	bins    map[string]bin
	gen     uint32
	lut     int64 // last update, Unix ns
	keySize int   // bytes of the stored user key, 0 when none was sent
	size    int64 // bytes on the device, rounded to 16-byte rblocks
}

// StartCluster starts opt.Nodes nodes for a namespace and waits until they form a
// cluster.
func StartCluster(namespace string, opt ClusterOptions) (*Cluster, error) {
	if opt.Nodes <= 0 {
		opt.Nodes = 1
	}
	if opt.ReplicationFactor <= 0 {
		opt.ReplicationFactor = 1
	}
	if opt.RecordSizeLimit <= 0 {
		opt.RecordSizeLimit = DefaultRecordSizeLimit
	}
	if opt.Nodes > 128 {
		return nil, errors.New("astest: at most 128 nodes")
	}
	c := &Cluster{ns: namespace, opt: opt, records: map[[20]byte]*record{}, sets: map[string]*setInfo{}}
	now := time.Now()
	for i := range opt.Nodes {
		s := newServer(c, i)
		ln, err := listen("127.0.0.1:0")
		if err != nil {
			c.Close()
			return nil, err
		}
		s.addr = ln.Addr().String()
		s.port = ln.Addr().(*net.TCPAddr).Port
		s.id = nodeID(s.port, i)
		s.started = now
		s.state = stateReady
		s.partGen = 0
		c.nodes = append(c.nodes, s)
		s.serveOn(ln)
	}
	c.mu.Lock()
	c.rebalance()
	c.mu.Unlock()
	return c, nil
}

// nodeID is a node id as the server builds one when none is configured: the
// service port in the top 16 bits over a 48-bit MAC address (here a made-up
// locally administered one, distinct per node).
func nodeID(port, i int) uint64 {
	return uint64(port)<<48 | 0x02CB_0000_0000 | uint64(i+1)
}

// Seed is host:port of node 0, what a user puts in endpoint.
func (c *Cluster) Seed() string { return c.nodes[0].Addr() }

// Node is node i.
func (c *Cluster) Node(i int) *Server { return c.nodes[i] }

// Nodes is the number of nodes, live or not.
func (c *Cluster) Nodes() int { return len(c.nodes) }

// Records is the number of distinct records of a set the cluster holds ("" counts
// every set and records without one); records a truncation has not yet removed
// count.
func (c *Cluster) Records(set string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if set == "" {
		return len(c.records)
	}
	n := 0
	if si := c.sets[set]; si != nil {
		for _, v := range si.objects {
			n += v
		}
	}
	return n
}

// Put writes a record directly, bypassing the nodes (no counters move): its
// digest is the client's, as.NewKey(namespace, set, key).Digest(), and its bins
// are blobs. It replaces a record of that key.
func (c *Cluster) Put(set, key string, bins map[string][]byte) {
	k, err := as.NewKey(c.ns, set, key)
	if err != nil {
		panic(fmt.Sprintf("astest: key %q: %v", key, err))
	}
	var d [20]byte
	copy(d[:], k.Digest())
	rec := &record{set: set, pid: partitionOf(d), bins: map[string]bin{}, gen: 1, lut: time.Now().UnixNano()}
	for n, v := range bins {
		rec.bins[n] = bin{particle: particleBlob, value: append([]byte(nil), v...)}
	}
	rec.size = recordSize(rec)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(d)
	c.add(d, rec)
}

// Close stops every node.
func (c *Cluster) Close() error {
	var first error
	for _, s := range c.nodes {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// partitionOf is the partition of a digest: the server's as_partition_getid
// (fabric/partition.h), the little-endian uint32 of the first 4 digest bytes
// masked to 4096 partitions; the client's Key.PartitionId is the same.
func partitionOf(d [20]byte) int {
	return int(uint32(d[0])|uint32(d[1])<<8|uint32(d[2])<<16|uint32(d[3])<<24) & (partitions - 1)
}

// set returns a set's info, creating it as the server does on a record's first
// write; "" is the no-set bucket, never listed.
func (c *Cluster) set(name string) *setInfo {
	si := c.sets[name]
	if si == nil {
		si = &setInfo{name: name}
		c.sets[name] = si
		if name != "" {
			c.setList = append(c.setList, si)
		}
	}
	return si
}

func (c *Cluster) add(d [20]byte, r *record) {
	c.records[d] = r
	si := c.set(r.set)
	si.objects[r.pid]++
	si.bytes[r.pid] += r.size
	c.objects[r.pid]++
	c.bytes[r.pid] += r.size
}

func (c *Cluster) remove(d [20]byte) {
	r := c.records[d]
	if r == nil {
		return
	}
	delete(c.records, d)
	si := c.sets[r.set]
	si.objects[r.pid]--
	si.bytes[r.pid] -= r.size
	c.objects[r.pid]--
	c.bytes[r.pid] -= r.size
}

// resize accounts a record's new size.
func (c *Cluster) resize(r *record, size int64) {
	si := c.sets[r.set]
	si.bytes[r.pid] += size - r.size
	c.bytes[r.pid] += size - r.size
	r.size = size
}

// doomed is the server's as_record_is_doomed for truncation
// (truncate.c as_truncate_record_is_truncated): a record last updated before the
// namespace's or its set's truncate time is gone for reads and writes even while
// the truncation has not removed it. The server compares milliseconds; astest
// compares nanoseconds, so a record written before the truncate command never
// survives it.
func (c *Cluster) doomed(r *record) bool {
	if r.lut < c.nsTrunc {
		return true
	}
	si := c.sets[r.set]
	return si != nil && r.lut < si.trunc
}

// truncate starts a truncation of a set ("" with ns: the namespace) to lut, as
// truncate.c's truncate_action: a set that does not exist is left alone, a lut not
// newer than the current one is ignored. Called with c.mu held.
func (c *Cluster) truncate(set string, wholeNS bool, lut int64) {
	if wholeNS {
		if lut <= c.nsTrunc {
			return
		}
		c.nsTrunc, c.nsTrunct = lut, true
	} else {
		si := c.sets[set]
		if si == nil || set == "" || lut <= si.trunc {
			return
		}
		si.trunc, si.truncing = lut, true
	}
	if c.opt.TruncateDelay <= 0 {
		c.reduceTruncate(set, wholeNS, lut)
		return
	}
	time.AfterFunc(c.opt.TruncateDelay, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.reduceTruncate(set, wholeNS, lut)
	})
}

// reduceTruncate deletes the truncated records, unless a newer truncation took
// over (the server then abandons this one).
func (c *Cluster) reduceTruncate(set string, wholeNS bool, lut int64) {
	if wholeNS {
		if c.nsTrunc != lut {
			return
		}
		c.nsTrunct = false
	} else {
		si := c.sets[set]
		if si.trunc != lut {
			return
		}
		si.truncing = false
	}
	for d, r := range c.records {
		if r.lut < lut && (wholeNS || r.set == set) {
			c.remove(d)
		}
	}
}

// live is the indexes of the nodes in the cluster, ascending.
func (c *Cluster) live() []int {
	var l []int
	for i, s := range c.nodes {
		if s.state == stateReady {
			l = append(l, i)
		}
	}
	return l
}

// rebalance recomputes partition ownership after a membership change: the master
// of partition p is the (p mod L)-th live node, its replicas the next ones, up to
// the effective replication factor. (The server shuffles a succession list per
// partition; astest's plain rotation is easier to check.) Every live node's
// partition and peers generations move, and the cluster gets a new key. Called
// with c.mu held.
func (c *Cluster) rebalance() {
	old := c.replicas
	l := c.live()
	c.effRF = min(c.opt.ReplicationFactor, len(l))
	for p := range partitions {
		r := make([]int, c.effRF)
		for k := range r {
			r[k] = l[(p+k)%len(l)]
		}
		c.replicas[p] = r
	}
	c.key = 0
	for c.key == 0 {
		c.key = rand.Uint64() >> 4
	}
	c.gen++
	for _, i := range l {
		c.nodes[i].partGen++
		c.nodes[i].peersGen++
	}
	c.migrateTx = make([]int, len(c.nodes))
	c.migrateRx = make([]int, len(c.nodes))
	c.migrateUntil = time.Time{}
	if c.opt.MigrationDelay <= 0 || old[0] == nil {
		return
	}
	c.migrateUntil = time.Now().Add(c.opt.MigrationDelay)
	for p := range partitions {
		if equalInts(old[p], c.replicas[p]) {
			continue
		}
		for _, i := range old[p] {
			c.migrateTx[i]++
		}
		for _, i := range c.replicas[p] {
			c.migrateRx[i]++
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// migrating is node i's partitions still to send and receive.
func (c *Cluster) migrating(i int) (tx, rx int) {
	if c.migrateUntil.IsZero() || time.Now().After(c.migrateUntil) {
		return 0, 0
	}
	if c.nodes[i].state != stateReady {
		return 0, 0
	}
	return c.migrateTx[i], c.migrateRx[i]
}

// role is node i's place in partition p's replica list: 0 master, 1.. prole, -1
// none.
func (c *Cluster) role(i, p int) int {
	for k, n := range c.replicas[p] {
		if n == i {
			return k
		}
	}
	return -1
}

// nodeCounts is what node i holds: master and prole objects and bytes, of one set
// (si) or of the whole namespace (si nil). A node outside the cluster owns
// nothing.
func (c *Cluster) nodeCounts(i int, si *setInfo) (master, prole int, bytes int64) {
	if c.nodes[i].state != stateReady {
		return 0, 0, 0
	}
	objs, b := &c.objects, &c.bytes
	if si != nil {
		objs, b = &si.objects, &si.bytes
	}
	for p := range partitions {
		switch c.role(i, p) {
		case -1:
			continue
		case 0:
			master += objs[p]
		default:
			prole += objs[p]
		}
		bytes += b[p]
	}
	return master, prole, bytes
}

// master is partition p's master node.
func (c *Cluster) master(p int) int {
	if len(c.replicas[p]) == 0 {
		return -1
	}
	return c.replicas[p][0]
}
