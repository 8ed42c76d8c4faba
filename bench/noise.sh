#!/usr/bin/env bash
# The client's noise floor (issue 30): at a fixed rate with no server stall, how
# far the response time's third nine (from each operation's intended send time)
# stands above the service time's (from the moment it was sent): what the
# client's own hiccups add. Against a local redis-server this script starts:
# 10,000 keys of 256 B loaded, then fixed-rate phases of SET:GET 1:10 at 20,000,
# 50,000 and 100,000 ops/s over 50 and over 1,000 connections, in one run.
# Printed per phase: the rate achieved (sustained or not), GET response and
# service p99.9 and their ratio, the send lag's p99, and the client's CPU. A rate
# the machine does not sustain has no noise floor to show (its queue sets the
# tail): the line says so. See bench/README.md.
#
#   bench/noise.sh [seconds]        # seconds per fixed-rate phase (default 20)
#   RATES="20000" bench/noise.sh    # these rates only
#   PIN=1 bench/noise.sh            # redis-server on the last CPU, cmpbench on the others
#
# The machines here are small and noisy: compare the ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
secs=${1:-20}
bench_workdir

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
build_cmpbench
go build -o "$work/archivestat" ./bench/archivestat
start_redis --maxclients 10000

phases=()
rates=${RATES:-"20000 50000 100000"} # RATES= picks others
for conns in 50 1000; do
  for rate in $rates; do
    phases+=("{name: r$rate-c$conns, connections: $conns, duration: ${secs}s, rate: $rate, memtier: {ratio: \"1:10\", key_pattern: \"R:R\", key_max: 10000}}")
  done
done
{ echo "name: noise"; echo "defaults:"; echo "  memtier: {key_prefix: kv_, value_size: 256}"; echo "phases:"
  echo "  - {name: load, kind: load, connections: 50, duration: 120s, memtier: {ratio: \"1:0\", key_pattern: P, key_max: 10000}}"
  printf '  - %s\n' "${phases[@]}"; } >"$work/noise.yaml"
pre=() # PIN=1: redis-server on the last CPU, cmpbench on the others
if [ -n "${PIN:-}" ]; then
  last=$(($(nproc) - 1))
  [ "$last" -gt 0 ] && command -v taskset >/dev/null || { echo "PIN=1 needs taskset and two CPUs" >&2; exit 2; }
  taskset -a -p -c "$last" "$redis_pid" >/dev/null
  pre=(taskset -c "0-$((last - 1))")
fi
"${pre[@]}" "$cmpbench" --config "$work/cmpbench.yaml" --out "$work/results" run --systems bench --suite "$work/noise.yaml" >"$work/run.out" 2>"$work/run.err" &
run_pid=$!
sample_runqueue "$run_pid" "$redis_pid" >"$work/runqueue" &
wait "$run_pid" || { cat "$work/run.err" >&2; exit 1; }
a=$(sed -n 's/^Archive: //p' "$work/run.out")
echo "== fixed rate, SET:GET 1:10, 256 B, 10,000 keys, ${secs} s per phase, no stall"
for conns in 50 1000; do
  for rate in $rates; do
    line=$("$work/archivestat" phase "$a" "r$rate-c$conns")
    python3 - "$rate" "$conns" "$line" "$work/runqueue" <<'PY'
import sys
rate, conns, line = sys.argv[1], sys.argv[2], sys.argv[3]
f = dict(kv.split("=", 1) for kv in line.split())
# The run queue over the phase, its first second left out: the samples nearest
# its window, differences over the time between them.
start, end = int(f.get("started_unix_ns", 0)) + 1e9, int(f.get("ended_unix_ns", 0))
rows = [[int(x) for x in l.split()] for l in open(sys.argv[4]) if len(l.split()) == 7]
inside = [r for r in rows if start <= r[0] * 1e3 <= end]
runq = ""
if len(inside) >= 2:
    a, b = inside[0], inside[-1]
    secs = (b[0] - a[0]) / 1e6
    d = [(b[i] - a[i]) / secs for i in range(1, 7)]
    each = lambda w, n: w / n / 1e3 if n else 0
    runq = (f"\n      per second: client ran {d[0]/1e6:4.0f} ms and waited {d[1]/1e6:4.0f} ms for a CPU "
            f"({d[2]:,.0f} times, {each(d[1], d[2]):.1f} us each), redis-server ran {d[3]/1e6:4.0f} ms and waited "
            f"{d[4]/1e6:4.0f} ms ({d[5]:,.0f} times, {each(d[4], d[5]):.1f} us each); the machine's {f.get('host_cores', '?')} cores "
            f"were {f.get('host_busy_cores', '?')} busy")
r, s = float(f["GET_resp_p999_us"]), float(f["GET_svc_p999_us"])
head = f"   {int(rate):>7,} ops/s, {int(conns):>5,} connections: achieved {float(f['ops_per_s']):>8,.0f}"
if f.get("sustained") != "true":
    print(f"{head}, not sustained: GET p99.9 response {r/1e3:.1f} ms is the queue's, no noise floor to show{runq}")
else:
    print(f"{head}, GET p99.9 response {r/1e3:6.3f} ms / service {s/1e3:6.3f} ms = {r/s:5.2f}x, "
          f"send lag p99 {float(f['GET_lag_p99_us']):7.1f} us, client {float(f['cpu_s_per_mop']):.2f} CPU-s per million ops{runq}")
PY
  done
done
