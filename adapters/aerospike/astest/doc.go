// Package astest is an Aerospike wire-protocol server for tests of what a real
// server cannot be made to do on demand: result codes injected, replies held,
// cold starts and migrations timed. The real aerospike-client-go/v8 talks to it.
// It emulates a Community Edition 8.1.2.0 cluster of one namespace in AP mode.
// The adapter's integration tests (../*_integration_test.go) run real asd.
//
// What it emulates:
//
//   - A cluster of N nodes on loopback ports (StartCluster; Start is one node),
//     replication factor RF, effective factor min(RF, nodes in the cluster). The
//     nodes share one record store; partition p (the client's and the server's
//     partition: little-endian uint32 of digest[0:4] mod 4096) has as master the
//     (p mod L)-th of the L nodes in the cluster and as replicas the next ones. Every
//     node serves every key; a node that is not the master counts the command as a
//     proxy would (client_proxy_complete; from_proxy_* on the master).
//   - Per-node counts as a node reports them: namespace objects = master + prole
//     copies on that node, master_objects, prole_objects; a set's objects likewise
//     (the server counts every record in the node's index, namespace.c
//     as_namespace_set_set_w_len), so summed over nodes they are the records times
//     the effective replication factor.
//   - Membership: a node stopping (Close, Restart) leaves the cluster and the others
//     take over its partitions at once, with new partition and peers generations and
//     cluster key. Restart closes the port for a cold start, then the node listens
//     again on the same port as an orphan (partition-generation -1, no partitions,
//     cluster_size 0, AS_MSG answered PARTITION_UNAVAILABLE as thr_tsvc.c does before
//     the first partition balance) for a warm-up, then rejoins. Its data survives
//     (device storage); its statistics and uptime start again.
//   - AS_MSG reads (all or named bins, header only), writes (CREATE_ONLY,
//     REPLACE_ONLY, UPDATE_ONLY, CREATE_OR_REPLACE, UPDATE; a null bin deletes it)
//     and deletes by digest; max-record-size (RECORD_TOO_BIG, the size computed as
//     storage/flat.c does), bin names of at most 15 bytes (BIN_NAME_TOO_LONG,
//     datamodel.h as_bin_name_check), unknown namespace INVALID_NAMESPACE.
//   - Asynchronous truncation of a set or the namespace (truncate.c): truncate_lut
//     and truncating=true at once, truncated records invisible to reads and writes
//     but still counted until ClusterOptions.TruncateDelay has passed.
//   - Namespace result counters named and bucketed as the server's (read.c,
//     write.c, delete.c *_update_stats; fail_key_busy, fail_record_too_big,
//     fail_generation), for real results and for Inject'ed ones.
//   - Info commands in the server's formats: node, build, edition, version,
//     release, cluster-name, features, status, partition-generation,
//     peers-generation, rebalance-generation, peers-clear-std/-alt (the other nodes),
//     service(-clear-std/-alt), services, replicas, namespaces, namespace/<ns>,
//     sets[/<ns>[/<set>]], statistics, get-config (service, namespace),
//     cluster-stable, truncate, truncate-namespace and their -undo; Enterprise-only
//     commands (rack-ids, peers-tls-*, ...) answer ERROR:25:enterprise only, other
//     real commands ERROR::unsupported..., unknown ones ERROR:4:unrecognized command.
//   - Test controls: Inject (result codes), Stall (held replies), Restart,
//     Connections, Records, Put, Corrupt.
//
// What it does not: secondary indexes, UDFs, scans, queries, batches, operate,
// transactions, TTLs and expiration, generation checks, eviction and stop-writes,
// racks, strong consistency, TLS, authentication, compression, XDR. Ownership moves
// at once (MigrationDelay only makes the counters and cluster-stable report
// migrations); the partition distribution is a plain rotation, not the server's
// per-partition shuffle; every node knows every set; a restarted node rejoins with
// the cluster's current data (while warming it reports, as non_replica_objects,
// what it held when it stopped).
// Statistics list only the fields astest can give meaning to.
//
// Checked against asd 8.1 (CE 8.1.2.0, reporting build 8.1.1.2) by the adapter's
// integration tests: the largest record it takes is the same to the byte; its
// info answers (cluster-stable, get-config and truncate errors, namespace/ and
// sets/ of an unknown namespace, enterprise-only commands) are the same but for
// the cluster key (asd: 12 hex digits), partition-generation and the peers
// generation of a new node (asd: 0), sindex-list (asd: empty) and the cluster
// name. asd counts a request just after it answers it; astest before.
//
// Verified against the aerospike-server source (CE 8.1.2.0): as/src/base/thr_info.c
// (command table and parsing, namespace, sets, statistics, cluster-stable, replicas,
// truncate, error strings), as/src/fabric/partition.c (replicas bitmaps),
// as/src/fabric/partition_balance.c (partition-generation -1 before the first
// balance, effective replication factor), as/src/fabric/service_list.c (peers and
// service formats), as/src/fabric/exchange.c (cluster_size, cluster_key),
// as/src/base/namespace.c (set properties and counts), as/src/base/truncate.c,
// as/src/base/cfg_info.c (get-config), as/src/base/thr_tsvc.c,
// as/src/transaction/{read,write,delete,rw_request_hash}.c (counters),
// as/src/storage/{flat.c,drv_ssd.c} and as/src/base/particle_{blob,integer}.c
// (record size), as/include/base/proto.h (result codes); and the client's
// partition_parser.go, peers_parser.go, node_validator.go, node.go and key.go.
package astest
