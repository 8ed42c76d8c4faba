#!/usr/bin/env bash
# cmpbench's client cost on Aerospike against the official client's own load tool
# (tools/benchmark of aerospike-client-go v8.5.0, built through the Go module
# proxy), on real asd this script starts: one node, then a three-node cluster
# (mesh heartbeat over loopback, replication factor 2). Each: 100,000 records of
# one 256-byte bin, loaded by each client into its own set, then closed loop over
# 50 connections, 1:10 update:read (the tool's RU:91), alternating cmpbench and
# the tool, ROUNDS times; printed: throughput and CPU-seconds per million
# operations of each, and the ratios of the medians. cmpbench's CPU is its whole
# process tree's during the phase (archivestat); the tool's, its process's from
# start to end, over the operations it counted. See bench/README.md.
#
#   bench/aerospike.sh [seconds]     # seconds per measured run (default 20)
#
# The machines here are small and noisy: compare the ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
secs=${1:-20}
rounds=${ROUNDS:-2}
work=$(mktemp -d)
asd_pids=()
cleanup() {
  for p in "${asd_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

command -v asd >/dev/null || { echo "asd is not on PATH: install Aerospike Server Community Edition (README.md, Servers)"; exit 2; }
build_cmpbench
go build -o "$work/archivestat" ./bench/archivestat
GOBIN=$work GOFLAGS=-mod=mod go install github.com/aerospike/aerospike-client-go/v8/tools/benchmark@v8.5.0
stat=$work/archivestat

# start_cluster N: N asd in one cluster on free loopback ports; sets ports.
start_cluster() {
  local n=$1 i seeds=""
  ports=() hb=()
  for i in $(seq "$n"); do ports+=("$(free_port)"); hb+=("$(free_port)"); done
  for i in $(seq 0 $((n - 1))); do seeds+="      mesh-seed-address-port 127.0.0.1 ${hb[$i]}"$'\n'; done
  for i in $(seq 0 $((n - 1))); do
    local d=$work/asd$n-$i
    mkdir -p "$d/work/smd" "$d/udf"
    cat >"$d/aerospike.conf" <<CONF
service {
  cluster-name bench$n
  proto-fd-max 15000
  work-directory $d/work
}
logging {
  file $d/asd.log {
    context any warning
  }
}
mod-lua {
  user-path $d/udf
}
network {
  service {
    address 127.0.0.1
    port ${ports[$i]}
    access-address 127.0.0.1
  }
  heartbeat {
    mode mesh
    address 127.0.0.1
    port ${hb[$i]}
$seeds    interval 150
    timeout 10
  }
  fabric {
    address 127.0.0.1
    port $(free_port)
  }
}
namespace bench {
  replication-factor $((n > 1 ? 2 : 1))
  storage-engine device {
    file $d/bench.dat
    filesize 2G
  }
}
CONF
    asd --foreground --config-file "$d/aerospike.conf" >"$d/stdout" 2>&1 &
    asd_pids+=($!)
  done
  cat >"$work/cmpbench.yaml" <<YAML
systems:
  as$n:
    adapter: aerospike
    endpoint: 127.0.0.1:${ports[0]}
    namespace: bench
    options: {set: cmpbench, cluster_size: "$n"}
    disposable: true
  as$n-client:
    adapter: aerospike
    endpoint: 127.0.0.1:${ports[0]}
    namespace: bench
    options: {set: cmpbench, cluster_size: "$n", driver: client}
    disposable: true
YAML
}

suite() { # name phases...
  local name=$1; shift
  { echo "name: $name"; echo "defaults:"; echo "  memtier: {key_prefix: kv_, value_size: 256, key_max: 100000}"; echo "phases:"; printf '  - %s\n' "$@"; } >"$work/$name.yaml"
}
suite load "{name: load, kind: load, connections: 50, duration: 300s, memtier: {ratio: \"1:0\", key_pattern: P}}"
suite closed "{name: measure, connections: 50, duration: ${secs}s, memtier: {ratio: \"1:10\", key_pattern: \"R:R\"}}"
cmpbench() { # system suite → archive path
  "$cmpbench" --config "$work/cmpbench.yaml" --out "$work/results" run --quiet --systems "$1" --suite "$work/$2.yaml" >"$work/$2.out" 2>"$work/$2.err" || {
    cat "$work/$2.err" "$work"/asd*/stdout >&2; return 1; }
  sed -n 's/^Archive: //p' "$work/$2.out"
}
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
tool() { # workload [seconds] → "ops cpu_s" of the official tool
  local w=$1 t=${2:-}
  TIMEFORMAT='%U %S'
  { time ${t:+timeout -s INT "$t"} "$work/benchmark" -h 127.0.0.1 -p "${ports[0]}" -n bench -s official -k 100000 -o B:256 \
      -w "$w" -c 50 -maxRetries 0 -T 5000 -maxErrorRate 0 -queueSize 64 -warmUp 50 >"$work/tool.out" 2>&1 || true; } 2>"$work/tool.time"
  python3 - "$work/tool.out" "$work/tool.time" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
counts = re.findall(r"(?:count|totalCount)=(\d+)\)", out)
errors = re.findall(r"errors=(\d+)(?:, count|\s+totalCount)", out)
u, s = open(sys.argv[2]).read().split()
print(int(counts[-1]) if counts else 0, float(u) + float(s), int(errors[-1]) if errors else 0)
PY
}

for n in 1 3; do
  start_cluster "$n"
  echo "== $n node(s): 100,000 records of one 256 B bin, closed loop, 50 connections, 1:10 update:read, ${secs} s per run"
  # Loading waits for the cluster: cmpbench retries its open until every node
  # is in (cluster_size), and the tool's insert runs after it.
  cmpbench "as$n" load >/dev/null
  read -r ops _ errs < <(tool I:100)
  echo "   loaded: cmpbench 100,000 records, the tool $ops ($errs errors)"
  declare -a c_cpu=() c_rate=() k_cpu=() k_rate=() t_cpu=() t_rate=()
  for r in $(seq "$rounds"); do
    line=$("$stat" phase "$(cmpbench "as$n" closed)" measure)
    c_rate+=("$(field ops_per_s "$line")"); c_cpu+=("$(field cpu_s_per_mop "$line")")
    printf '   round %s  cmpbench, driver wire:   %8s ops/s, %7s CPU-s per million ops, %s errors\n' "$r" "${c_rate[-1]}" "${c_cpu[-1]}" "$(field errors "$line")"
    line=$("$stat" phase "$(cmpbench "as$n-client" closed)" measure)
    k_rate+=("$(field ops_per_s "$line")"); k_cpu+=("$(field cpu_s_per_mop "$line")")
    printf '   round %s  cmpbench, driver client: %8s ops/s, %7s CPU-s per million ops, %s errors\n' "$r" "${k_rate[-1]}" "${k_cpu[-1]}" "$(field errors "$line")"
    read -r ops cpu errs < <(tool RU:91 "$secs")
    t_rate+=("$(python3 -c "print(f'{$ops / $secs:.0f}')")"); t_cpu+=("$(python3 -c "print(f'{$cpu / max($ops, 1) * 1e6:.3f}')")")
    printf '   round %s  official tool:           %8s ops/s, %7s CPU-s per million ops, %s errors\n' "$r" "${t_rate[-1]}" "${t_cpu[-1]}" "$errs"
  done
  python3 - "${c_cpu[*]}" "${k_cpu[*]}" "${t_cpu[*]}" "${c_rate[*]}" "${k_rate[*]}" "${t_rate[*]}" \
    "$(grep -h '^driver=' "$work"/results/*/systems/as$n/client-policy.txt | tail -1 | sed -E 's/^(driver=[a-z]+).*each of the ([0-9]+) nodes.*/\1, a socket to each of \2 nodes per connection/')" <<'PY'
import sys, statistics as st
c, k, t, cr, kr, tr = ([float(x) for x in a.split()] for a in sys.argv[1:7])
m = st.median
print(f"   / official tool, median of {len(c)} rounds: driver wire CPU per op {m(c)/m(t):.2f}x, throughput {m(cr)/m(tr):.2f}x ({sys.argv[7]})")
print(f"   / official tool, median of {len(c)} rounds: driver client CPU per op {m(k)/m(t):.2f}x, throughput {m(kr)/m(tr):.2f}x")
PY
  for p in "${asd_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  asd_pids=()
done
