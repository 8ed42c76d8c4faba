#!/usr/bin/env bash
# Client CPU-seconds per million operations: cmpbench against a local redis-server
# (50 connections, SET:GET 1:10, 256 B values, 100,000 keys, 20 s closed loop), and
# memtier_benchmark with the same parameters in the same session when it is on PATH.
# The machines here are small and noisy: compare the ratio printed at the end, not
# the absolute numbers across sessions.
#
#   bench/cpu-per-mop.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
work=$(mktemp -d)
trap 'kill "$redis_pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

command -v redis-server >/dev/null || { echo "redis-server is not installed (make deps)"; exit 2; }
make -s build

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

cat >"$work/cmpbench.yaml" <<YAML
systems:
  bench:
    adapter: resp
    endpoint: 127.0.0.1:$port
YAML
cat >"$work/suite.yaml" <<YAML
name: cpu-per-mop
description: client CPU per million ops, memtier-comparable parameters
defaults:
  connections: 50
  memtier: {key_max: 100000, key_prefix: kv_, value_size: 256}
phases:
  - {name: load, kind: load, duration: 120s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: measure, duration: ${secs}s, memtier: {ratio: "1:10", key_pattern: "R:R"}}
YAML

./bin/cmpbench --config "$work/cmpbench.yaml" --out "$work/results" run --systems bench --suite "$work/suite.yaml" >"$work/run.out" 2>"$work/run.err" || {
  cat "$work/run.err"; exit 1; }
dir=$(sed -n 's/^Archive: //p' "$work/run.out")
# client_cpu_s is the CPU the load-generating (plugin) process used during the phase.
read -r ops cpu < <(./bin/cmpbench export csv "$dir" | python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(sys.stdin) if r["phase"] == "measure"]
print(sum(int(r["count"]) for r in rows), rows[0]["client_cpu_s"])')
cmp_rate=$(python3 -c "print(f'{$cpu / ($ops / 1e6):.2f}')")
printf 'cmpbench:          %9d ops in %ss, %6.2f CPU-s, %s CPU-s per million ops\n' "$ops" "$secs" "$cpu" "$cmp_rate"

if ! command -v memtier_benchmark >/dev/null; then
  echo "memtier_benchmark is not on PATH: no comparison in this session"
  exit 0
fi
# Same shape: 50 connections over 2 threads (the Go engine uses both cores too).
TIMEFORMAT='%U %S'
{ time memtier_benchmark -s 127.0.0.1 -p "$port" --protocol=redis -t 2 -c 25 --ratio=1:10 \
    --data-size=256 --key-pattern=R:R --key-minimum=1 --key-maximum=100000 --key-prefix=kv_ \
    --test-time="$secs" --hide-histogram --json-out-file="$work/memtier.json" >"$work/memtier.out" 2>&1 ; } 2>"$work/memtier.time"
read -r mops mcpu < <(python3 - "$work/memtier.json" "$work/memtier.time" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
totals = j["ALL STATS"]["Totals"]
ops = totals.get("Count") or round(totals["Ops/sec"] * j["ALL STATS"]["Runtime"]["Total duration"] / 1000)
u, s = open(sys.argv[2]).read().split()
print(int(ops), float(u) + float(s))
PY
)
mt_rate=$(python3 -c "print(f'{$mcpu / ($mops / 1e6):.2f}')")
printf 'memtier_benchmark: %9d ops in %ss, %6.2f CPU-s, %s CPU-s per million ops\n' "$mops" "$secs" "$mcpu" "$mt_rate"
python3 -c "print(f'cmpbench / memtier CPU per op: {$cmp_rate / $mt_rate:.2f}x')"
