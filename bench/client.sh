#!/usr/bin/env bash
# The client's own cost and fidelity, measured in one run against a local
# redis-server this script starts (see bench/README.md for what each number means
# and what was measured):
#
#   1. closed loop, 50 connections, SET:GET 1:10, 256 B values, 100,000 keys:
#      CPU-seconds per million operations of cmpbench's whole process tree (host and
#      plugin) and, when memtier_benchmark is on PATH, of memtier_benchmark -t 2 -c 25
#      with the same parameters, alternating, ROUNDS times; then once more each with
#      a CPU hog (a busy shell loop) sharing the cores, placed by the kernel, and once
#      more with the same placement for both clients (redis-server alone on one CPU,
#      the hog and the client on another; cmpbench also with GOMAXPROCS=2, as many
#      threads as memtier's -t 2);
#   2. a fixed 20,000 ops/s over 50 connections: response vs service p99, the send
#      lag, and the side probe's lag by position within the interval;
#   3. 1,000 connections at a fixed 50,000 ops/s (sustained?), and the plugin's
#      memory per 1,000 connections (5,000 connections held, against 50);
#   4. the host's memory over a long synthetic run (bench/hostpath).
#
#   bench/client.sh [seconds]        # seconds per closed-loop and fixed-rate phase (default 20)
#   ONLY=closed bench/client.sh 10   # step 1's quiet rounds alone
#   PIPELINE=16 ONLY=closed bench/client.sh 20   # step 1 with 16 requests in flight per
#                                    # connection (cmpbench's pipeline, memtier's --pipeline)
#   PIN=1 ONLY=closed bench/client.sh 20   # step 1 with redis-server alone on one CPU and
#                                    # the client on another (both clients alike)
#   DISTINCT=1 ...                   # memtier with --distinct-client-seed: each connection
#                                    # its own keys, as cmpbench's (see memtier() below)
#
# The machines here are small and noisy: compare the ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
secs=${1:-20}
rounds=${ROUNDS:-2}
pipeline=${PIPELINE:-1}
depth=""   # the suite's key, left out at 1 so that a build from before pipelining reads it
[ "$pipeline" -gt 1 ] && depth="pipeline: $pipeline, "
work=$(mktemp -d)
hog_pid=
cleanup() {
  [ -n "$hog_pid" ] && kill "$hog_pid" 2>/dev/null
  [ -n "${redis_pid:-}" ] && kill "$redis_pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

command -v redis-server >/dev/null || { echo "redis-server is not installed (make deps)"; exit 2; }
# 5,000 connections need as many descriptors in cmpbench and in redis-server.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge 6000 ] || echo "note: open-file limit $(ulimit -n): the 5,000-connection step will fail"
build_cmpbench
go build -o "$work/archivestat" ./bench/archivestat
go build -o "$work/hostpath" ./bench/hostpath
stat=$work/archivestat

start_redis --maxclients 10000
suite() { # name phases...
  local name=$1; shift
  { echo "name: $name"; echo "defaults:"; echo "  memtier: {key_prefix: kv_, value_size: 256}"; echo "phases:"; printf '  - %s\n' "$@"; } >"$work/$name.yaml"
}
pre=() # a command the clients run under (taskset, env)
run() { # suite → archive path on stdout
  "${pre[@]}" "$cmpbench" --config "$work/cmpbench.yaml" --out "$work/results" run --systems bench --suite "$work/$1.yaml" >"$work/$1.out" 2>"$work/$1.err" || {
    cat "$work/$1.err" >&2; return 1; }
  sed -n 's/^Archive: //p' "$work/$1.out"
}
field() { # key line → value
  sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"
}

load="{name: load, kind: load, connections: 50, duration: 120s, memtier: {ratio: \"1:0\", key_pattern: P, key_max: 100000}}"
suite closed "$load" "{name: measure, connections: 50, duration: ${secs}s, ${depth}memtier: {ratio: \"1:10\", key_pattern: \"R:R\", key_max: 100000}}"

# memtier's connections all draw their keys from one random sequence unless
# --distinct-client-seed: 50 connections then read the same keys in the same
# order, which the server serves from its caches at half the cost (INFO
# commandstats here: 0.46 against 0.93-1.04 us per GET). cmpbench's connections
# each have a seed of their own; DISTINCT=1 gives memtier's theirs, the same
# workload (the figures before issue 46 were measured without it).
seed=()
[ -n "${DISTINCT:-}" ] && seed=(--distinct-client-seed)
memtier() { # PORT [memtier flags] → "ops cpu_s" of the closed-loop workload
  local port=$1; shift
  TIMEFORMAT='%U %S'
  { time "${pre[@]}" memtier_benchmark -s 127.0.0.1 -p "$port" --protocol=redis "$@" "${seed[@]}" -t 2 -c 25 --pipeline="$pipeline" --ratio=1:10 \
      --data-size=256 --key-pattern=R:R --key-minimum=1 --key-maximum=100000 --key-prefix=kv_ \
      --test-time="$secs" --hide-histogram --json-out-file="$work/memtier.json" >"$work/memtier.out" 2>&1 ; } 2>"$work/memtier.time"
  python3 - "$work/memtier.json" "$work/memtier.time" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
totals = j["ALL STATS"]["Totals"]
ops = totals.get("Count") or round(totals["Ops/sec"] * j["ALL STATS"]["Runtime"]["Total duration"] / 1000)
u, s = open(sys.argv[2]).read().split()
print(int(ops), float(u) + float(s))
PY
}

declare -a c_cpu c_rate m_cpu m_rate
placed=""
if [ -n "${PIN:-}" ]; then
  # The server on the last CPU, each client on the first: neither takes the
  # other's core, and the kernel's placement, which moves throughput by a
  # third from run to run on two cores, is the same for both clients.
  read -r first last < <(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[0], c[-1])')
  [ "$first" != "$last" ] || { echo "PIN=1 needs two CPUs" >&2; exit 2; }
  taskset -a -p -c "$last" "$redis_pid" >/dev/null
  pre=(taskset -c "$first")
  placed=", redis-server on CPU $last, the client on CPU $first"
fi
echo "== 1. closed loop, 50 connections, pipeline $pipeline, 1:10, 256 B, 100,000 keys, ${secs} s per run$placed"
round() { # label
  local a line
  a=$(run closed)
  line=$("$stat" phase "$a" measure)
  c_cpu+=("$(field cpu_s_per_mop "$line")"); c_rate+=("$(field ops_per_s "$line")")
  printf '   %-9s cmpbench: %8s ops/s, %6s CPU-s per million ops (plugin %s s + host %s s)\n' "$1" \
    "$(field ops_per_s "$line")" "$(field cpu_s_per_mop "$line")" "$(field plugin_cpu_s "$line")" "$(field host_cpu_s "$line")"
  if command -v memtier_benchmark >/dev/null; then
    read -r ops cpu < <(memtier "$port")
    m_cpu+=("$(python3 -c "print(f'{$cpu / ($ops / 1e6):.3f}')")"); m_rate+=("$(python3 -c "print(f'{$ops / $secs:.0f}')")")
    printf '   %-9s memtier:  %8s ops/s, %6s CPU-s per million ops\n' "$1" "${m_rate[-1]}" "${m_cpu[-1]}"
  fi
}
for r in $(seq "$rounds"); do round "round $r"; done
have_memtier=false
command -v memtier_benchmark >/dev/null && have_memtier=true
if $have_memtier; then
  python3 - "${c_cpu[*]}" "${m_cpu[*]}" "${c_rate[*]}" "${m_rate[*]}" <<'PY'
import sys, statistics as st
c, m, cr, mr = ([float(x) for x in a.split()] for a in sys.argv[1:5])
print(f"   cmpbench / memtier, median of {len(c)} rounds: CPU per op {st.median(c)/st.median(m):.2f}x, throughput {st.median(cr)/st.median(mr):.2f}x")
PY
else
  echo "   memtier_benchmark is not on PATH: no comparison in this run"
fi
[ "${ONLY:-}" = closed ] && exit 0 # ONLY=closed: the quiet closed-loop rounds alone
[ -z "${PIN:-}" ] || { echo "PIN=1 is for step 1 alone (ONLY=closed)" >&2; exit 2; }
quiet_c=${c_rate[-1]}; quiet_m=0
$have_memtier && quiet_m=${m_rate[-1]}
( while :; do :; done ) & hog_pid=$!
round "with hog"
kill "$hog_pid"; wait "$hog_pid" 2>/dev/null || true; hog_pid=
if $have_memtier; then
  python3 -c "
c, m = ${c_rate[-1]}/$quiet_c, ${m_rate[-1]}/$quiet_m
print(f'   with a CPU hog, throughput kept: cmpbench {c:.2f}, memtier {m:.2f} of its quiet run; cmpbench/memtier: throughput {${c_rate[-1]}/${m_rate[-1]}:.2f}x, CPU per op {${c_cpu[-1]}/${m_cpu[-1]}:.2f}x')"
fi

# The same hog with the same placement for both clients: where the kernel puts the
# client's threads decides how much of the hog's CPU it gets (bench/README.md).
read -r first last < <(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[0], c[-1])')
if $have_memtier && [ "$first" != "$last" ] && command -v taskset >/dev/null; then
  echo "== 1a. the hog and the client on CPU $first, redis-server alone on CPU $last"
  mask=$(taskset -p "$redis_pid" | awk '{print $NF}')
  if taskset -a -p -c "$last" "$redis_pid" >/dev/null; then
    taskset -c "$first" sh -c 'while :; do :; done' & hog_pid=$!
    declare -a p_rate p_cpu
    for variant in "" GOMAXPROCS=2; do
      a=$(pre=(env $variant taskset -c "$first"); run closed)
      line=$("$stat" phase "$a" measure)
      p_rate+=("$(field ops_per_s "$line")"); p_cpu+=("$(field cpu_s_per_mop "$line")")
      printf '   cmpbench%-13s %8s ops/s, %6s CPU-s per million ops\n' "${variant:+ $variant}:" "${p_rate[-1]}" "${p_cpu[-1]}"
    done
    read -r ops cpu < <(pre=(taskset -c "$first"); memtier "$port")
    pm_rate=$(python3 -c "print(f'{$ops / $secs:.0f}')"); pm_cpu=$(python3 -c "print(f'{$cpu / ($ops / 1e6):.3f}')")
    printf '   memtier -t 2:          %8s ops/s, %6s CPU-s per million ops\n' "$pm_rate" "$pm_cpu"
    kill "$hog_pid"; wait "$hog_pid" 2>/dev/null || true; hog_pid=
    taskset -a -p "$mask" "$redis_pid" >/dev/null
    python3 -c "
print(f'   cmpbench/memtier with the same placement: throughput {${p_rate[0]}/$pm_rate:.2f}x (Go\'s one thread on one CPU), {${p_rate[1]}/$pm_rate:.2f}x (two threads, as memtier\'s); CPU per op {${p_cpu[0]}/$pm_cpu:.2f}x, {${p_cpu[1]}/$pm_cpu:.2f}x')"
  else
    echo "   taskset could not move redis-server to CPU $last: skipped"
  fi
fi

if command -v openssl >/dev/null; then
  echo "== 1b. the same over TLS (the codec over crypto/tls, one goroutine per connection), alternating"
  examples/gen-certs.sh "$work/certs" >/dev/null
  tport=$(free_port)
  redis-server --port 0 --tls-port "$tport" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
    --tls-cert-file "$work/certs/server.crt" --tls-key-file "$work/certs/server.key" --tls-ca-cert-file "$work/certs/ca.crt" \
    --tls-auth-clients no >"$work/redis-tls.log" 2>&1 &
  tls_pid=$!
  sleep 0.5
  cat >"$work/tls.yaml" <<YAML
systems:
  bench:
    adapter: resp
    endpoint: 127.0.0.1:$tport
    disposable: true
    tls: {enabled: true, ca_file: $work/certs/ca.crt}
YAML
  declare -a t_cpu t_rate tm_cpu tm_rate
  for r in $(seq "$rounds"); do
    a=$("$cmpbench" --config "$work/tls.yaml" --out "$work/results" run --systems bench --suite "$work/closed.yaml" 2>"$work/tls.err" | sed -n 's/^Archive: //p')
    line=$("$stat" phase "$a" measure)
    t_cpu+=("$(field cpu_s_per_mop "$line")"); t_rate+=("$(field ops_per_s "$line")")
    printf '   round %s   cmpbench: %8s ops/s, %6s CPU-s per million ops\n' "$r" "${t_rate[-1]}" "${t_cpu[-1]}"
    if $have_memtier; then
      read -r ops cpu < <(memtier "$tport" --tls --cacert "$work/certs/ca.crt")
      tm_cpu+=("$(python3 -c "print(f'{$cpu / ($ops / 1e6):.3f}')")"); tm_rate+=("$(python3 -c "print(f'{$ops / $secs:.0f}')")")
      printf '   round %s   memtier:  %8s ops/s, %6s CPU-s per million ops\n' "$r" "${tm_rate[-1]}" "${tm_cpu[-1]}"
    fi
  done
  if $have_memtier; then
    python3 - "${t_cpu[*]}" "${tm_cpu[*]}" "${t_rate[*]}" "${tm_rate[*]}" <<'PY'
import sys, statistics as st
c, m, cr, mr = ([float(x) for x in a.split()] for a in sys.argv[1:5])
print(f"   over TLS, cmpbench / memtier, median of {len(c)} rounds: CPU per op {st.median(c)/st.median(m):.2f}x, throughput {st.median(cr)/st.median(mr):.2f}x")
PY
  fi
  kill "$tls_pid"
fi

echo "== 2. fixed 20,000 ops/s, 50 connections, 1:10, 256 B, 10,000 keys, ${secs} s"
suite fixed "{name: load, kind: load, connections: 50, duration: 120s, memtier: {ratio: \"1:0\", key_pattern: P, key_max: 10000}}" \
  "{name: fixed, connections: 50, duration: ${secs}s, rate: 20000, memtier: {ratio: \"1:10\", key_pattern: \"R:R\", key_max: 10000}}"
a=$(run fixed)
line=$("$stat" phase "$a" fixed)
python3 -c "
print('   achieved %s ops/s (sustained %s), client-lagged %s' % ('$(field ops_per_s "$line")', '$(field sustained "$line")', '$(field client_lagged "$line")'))
r, s = $(field GET_resp_p99_us "$line"), $(field GET_svc_p99_us "$line")
print(f'   GET response p99 {r/1e3:.3f} ms, service p99 {s/1e3:.3f} ms: {r/s:.2f}x')
print('   send lag GET p50 %.1f us, p99 %.1f us' % ($(field GET_lag_p50_us "$line"), $(field GET_lag_p99_us "$line")))
print('   client CPU %s s per million ops' % '$(field cpu_s_per_mop "$line")')"
echo "   side probe, send lag by position within the 1 s interval:"
"$stat" lag "$a" fixed

echo "== 3. connections"
suite conns "{name: load, kind: load, connections: 50, duration: 120s, memtier: {ratio: \"1:0\", key_pattern: P, key_max: 10000}}" \
  "{name: c1000, connections: 1000, duration: 10s, rate: 50000, memtier: {ratio: \"1:10\", key_pattern: \"R:R\", key_max: 10000}}" \
  "{name: c50, connections: 50, duration: 5s, rate: 5000, memtier: {ratio: \"1:10\", key_pattern: \"R:R\", key_max: 10000}}" \
  "{name: c5000, connections: 5000, duration: 5s, rate: 5000, memtier: {ratio: \"1:10\", key_pattern: \"R:R\", key_max: 10000}}"
a=$(run conns)
line=$("$stat" phase "$a" c1000)
echo "   1,000 connections at 50,000 ops/s: achieved $(field ops_per_s "$line") ops/s, sustained $(field sustained "$line"), GET send lag p99 $(field GET_lag_p99_us "$line") us, service p99 $(field GET_svc_p99_us "$line") us"
if $have_memtier; then
  memtier_benchmark -s 127.0.0.1 -p "$port" --protocol=redis -t 2 -c 500 --ratio=1:10 --data-size=256 --key-pattern=R:R \
    --key-minimum=1 --key-maximum=10000 --key-prefix=kv_ --test-time=10 --rate-limiting=50 --hide-histogram \
    --json-out-file="$work/memtier1000.json" >"$work/memtier1000.out" 2>&1
  python3 -c "
import json; t = json.load(open('$work/memtier1000.json'))['ALL STATS']['Totals']
print(f'   memtier_benchmark -t 2 -c 500 --rate-limiting=50 (the same target): {t[\"Ops/sec\"]:.0f} ops/s')"
fi
r50=$(field plugin_rss_mib "$("$stat" rss "$a" c50)"); r5k=$(field plugin_rss_mib "$("$stat" rss "$a" c5000)")
line=$("$stat" phase "$a" c5000)
python3 -c "print(f'   5,000 connections held ({$(field ops_per_s "$line")} ops/s): plugin RSS {$r5k:.1f} MiB against {$r50:.1f} MiB with 50: {($r5k-$r50)/4.95:.1f} MiB per 1,000 connections')"

echo "== 4. host memory over a long synthetic run"
"$work/hostpath"
