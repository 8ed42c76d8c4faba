#!/usr/bin/env bash
# Trace replay (issue 48), against a local redis-server this script starts:
#
# 1. memory: a trace made by `cmpbench trace synth` (REQUESTS requests, default
#    15,000,000 lines of 64-byte keys: about 1 GB, plain), replayed in order as
#    fast as it goes (closed loop, 50 connections) after its warm-up; printed: the
#    plugin process's RSS at the first and last interval of the replay and its
#    largest, and the growth (the issue wants <= 20 MB: the file is streamed,
#    never held; a 100 GB trace takes the same path).
# 2. send lag: a trace of SECS seconds at 20,000 requests/s (no daily swing),
#    replayed at its recorded times over 50 connections; printed: the rate
#    achieved, GET response and service p99 and the send lag's p99 (the issue
#    wants the lag's p99 under 1 ms here).
#
#   bench/trace.sh                          # both, at full size
#   REQUESTS=300000 SECS=10 bench/trace.sh  # a quick try
#   CMPBENCH=/path/to/cmpbench bench/trace.sh
#
# The trace files are written to a temporary directory and removed at the end
# (1 GB at full size: TMPDIR must have room).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
requests=${REQUESTS:-15000000}
secs=${SECS:-30}
bench_workdir

build_cmpbench
go build -o "$work/archivestat" ./bench/archivestat
start_redis

"$cmpbench" trace synth "$work/big.csv" --requests "$requests" --keys 1000000 --key-size 64 --value-median 32 --value-sigma 0.5 --rate 100000 --seed 48
"$cmpbench" trace synth "$work/lag.csv" --requests $((20000 * secs)) --keys 100000 --value-median 256 --value-sigma 0 --rate 20000 --diurnal 0 --seed 48
echo "trace: $(du -h "$work/big.csv" | cut -f1) for $requests requests"

cat >"$work/trace.yaml" <<YAML
name: trace
defaults: {connections: 50}
phases:
  - {name: warm, kind: warmup, duration: 1h, trace: {file: $work/big.csv, replay: warm}}
  - {name: replay, duration: 2h, trace: {file: $work/big.csv, replay: ordered}}
  - {name: lag, trace: {file: $work/lag.csv}}
YAML
out=$("$cmpbench" --config "$work/cmpbench.yaml" --out "$work/results" run --systems bench --suite "$work/trace.yaml" --quiet)
archive=$(echo "$out" | sed -n 's/^Archive: *//p')
[ -n "$archive" ] || { echo "$out"; echo "no archive" >&2; exit 1; }

echo "1. memory, closed-loop replay of $requests requests:"
echo "   $("$work/archivestat" phase "$archive" replay)"
rss=$("$work/archivestat" rss "$archive" replay)
echo "   $rss"
first=$(echo "$rss" | sed -n 's/.*plugin_rss_first_mib=\([0-9.]*\).*/\1/p')
last=$(echo "$rss" | sed -n 's/.*plugin_rss_last_mib=\([0-9.]*\).*/\1/p')
peak=$(echo "$rss" | sed -n 's/.*plugin_rss_mib=\([0-9.]*\).*/\1/p')
echo "   plugin RSS growth over the replay: $(python3 -c "print(f'{$last-$first:.1f} MiB (last - first), {$peak-$first:.1f} MiB (peak - first)')")"
echo "2. send lag, recorded replay at 20,000 requests/s for ${secs}s:"
echo "   $("$work/archivestat" phase "$archive" lag)"
