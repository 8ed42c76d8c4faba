#!/usr/bin/env bash
# The fixed-rate pacing's precision: GET response p99 over service p99, the send
# lag's p99, the side probe's median send lag and the client's CPU per operation, at a fixed 20,000 ops/s over 50
# connections (RATE, CONNS) against a local redis-server this script starts, one
# phase of SECS seconds per round. With BUILDS="A B ..." (paths of cmpbench
# binaries, e.g. a before and an after), the builds take turns, ROUNDS times,
# against the same server, and a median per build ends the output: compare
# builds within one run (the machines here are small and noisy).
#
#   bench/pacing.sh [seconds]                            # this checkout, 3 rounds
#   BUILDS="/tmp/before/cmpbench bin/cmpbench" ROUNDS=5 bench/pacing.sh 10
#   PIPELINE=16 bench/pacing.sh                         # the same, pipelined
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
secs=${1:-10}
rounds=${ROUNDS:-3}
rate=${RATE:-20000}
conns=${CONNS:-50}
depth=""
[ "${PIPELINE:-1}" -gt 1 ] && depth="pipeline: ${PIPELINE}, "
bench_workdir
if [ -z "${BUILDS:-}" ]; then
  build_cmpbench
  BUILDS=$cmpbench
fi
for b in $BUILDS; do [ -x "$b" ] || { echo "BUILDS: $b is not an executable" >&2; exit 2; }; done
go build -o "$work/archivestat" ./bench/archivestat
start_redis
cat >"$work/fixed.yaml" <<YAML
name: fixed
phases:
  - {name: load, kind: load, connections: 50, duration: 120s, memtier: {ratio: "1:0", key_pattern: P, key_max: 10000, key_prefix: kv_, value_size: 256}}
  - {name: fixed, connections: $conns, duration: ${secs}s, rate: $rate, ${depth}memtier: {ratio: "1:10", key_pattern: "R:R", key_max: 10000, key_prefix: kv_, value_size: 256}}
YAML
echo "fixed $rate ops/s over $conns connections${depth:+, $depth}, ${secs} s a round, $rounds rounds; redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')"
printf '%-28s %5s %9s %9s %9s %7s %9s %9s %9s %8s %9s\n' build round achieved resp_p99 svc_p99 ratio lag_p99 resp_p50 svc_p50 cpu/Mop probe_lag
for r in $(seq "$rounds"); do
  for b in $BUILDS; do
    out=$("$b" --config "$work/cmpbench.yaml" --out "$work/results" run --systems bench --suite "$work/fixed.yaml" 2>"$work/run.err") || { cat "$work/run.err" >&2; exit 1; }
    a=$(sed -n 's/^Archive: //p' <<<"$out")
    line=$("$work/archivestat" phase "$a" fixed)
    python3 - "$b" "$r" "$line" >>"$work/rows" <<'PY'
import sys
b, r, line = sys.argv[1:4]
f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
resp, svc = float(f["GET_resp_p99_us"]), float(f["GET_svc_p99_us"])
print(b, r, f["ops_per_s"], resp, resp / svc, f["GET_lag_p99_us"], f["cpu_s_per_mop"], svc, f["GET_svc_p50_us"], f["GET_resp_p50_us"], f.get("probe_lag_p50_us", "-"))
PY
    tail -1 "$work/rows" | awk '{printf "%-28s %5s %9.0f %9.0f %9.0f %6.2fx %9s %9s %9s %8s %9s\n", $1, $2, $3, $4, $8, $5, $6, $10, $9, $7, $11}'
  done
done
echo "medians per build (response/service p99; send lag, response and service p99; the side probe's send lag p50; CPU-s per million ops):"
python3 - "$work/rows" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
for b in dict.fromkeys(r[0] for r in rows):
    mine = [r for r in rows if r[0] == b]
    ratios = sorted(float(r[4]) for r in mine)
    med = lambda i: st.median(float(r[i]) for r in mine)
    probe = [float(r[10]) for r in mine if r[10] != "-"]
    print(f"  {b}: {st.median(ratios):.2f}x (of {', '.join(f'{x:.2f}' for x in ratios)}); send lag p99 {med(5):.0f} us, response p99 {med(3):.0f} us, service p99 {med(7):.0f} us; probe lag p50 {st.median(probe) if probe else float('nan'):.0f} us; {med(6):.1f} CPU-s/Mop")
PY
