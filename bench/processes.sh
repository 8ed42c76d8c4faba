#!/usr/bin/env bash
# One plugin process per system against two (cmpbench run --processes 2), on the
# workload of bench/client.sh's first step (closed loop, 50 connections, SET:GET
# 1:10, 256 B values, 100,000 keys), alternating, ROUNDS times (default 3), against
# a local redis-server this script starts: throughput and CPU-seconds per million
# operations of cmpbench's whole process tree (host and plugins).
#
#   bench/processes.sh [seconds]     # seconds per measured phase (default 20)
#
# The machines here are small and noisy: compare the ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
secs=${1:-20}
rounds=${ROUNDS:-3}
bench_workdir
build_cmpbench
go build -o "$work/archivestat" ./bench/archivestat
start_redis
cat >"$work/closed.yaml" <<YAML
name: closed
defaults:
  memtier: {key_prefix: kv_, value_size: 256, key_max: 100000}
phases:
  - {name: load, kind: load, connections: 50, duration: 120s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: measure, connections: 50, duration: ${secs}s, memtier: {ratio: "1:10", key_pattern: "R:R"}}
YAML
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
declare -A rate cpu
echo "== closed loop, 50 connections, 1:10, 256 B, 100,000 keys, ${secs} s per run; --processes 1 and 2 alternating"
for r in $(seq "$rounds"); do
  for k in 1 2; do
    a=$("$cmpbench" --config "$work/cmpbench.yaml" --out "$work/results" run --systems bench --suite "$work/closed.yaml" --processes "$k" 2>"$work/err" | sed -n 's/^Archive: //p') ||
      { cat "$work/err"; exit 1; }
    line=$("$work/archivestat" phase "$a" measure)
    rate[$k]+="$(field ops_per_s "$line") "; cpu[$k]+="$(field cpu_s_per_mop "$line") "
    printf '   round %s  --processes %s: %8s ops/s, %6s CPU-s per million ops (plugins %s s + host %s s)\n' "$r" "$k" \
      "$(field ops_per_s "$line")" "$(field cpu_s_per_mop "$line")" "$(field plugin_cpu_s "$line")" "$(field host_cpu_s "$line")"
  done
done
python3 - "${rate[1]}" "${rate[2]}" "${cpu[1]}" "${cpu[2]}" <<'PY'
import sys, statistics as st
r1, r2, c1, c2 = ([float(x) for x in a.split()] for a in sys.argv[1:5])
print(f"   2 processes / 1, median of {len(r1)} rounds: throughput {st.median(r2)/st.median(r1):.2f}x, CPU per op {st.median(c2)/st.median(c1):.2f}x")
PY
