#!/usr/bin/env bash
# What serving a run live costs (issue 47): the closed loop of bench/client.sh
# step 1 (50 connections, SET:GET 1:10, 256 B, 100,000 keys) and a fixed 20,000
# ops/s over 50 connections, each run without --live and with --live and a
# scraper reading /metrics and /state every second over one kept-alive
# connection (as Prometheus and an open page would; a curl started every second
# would measure the cost of starting processes), alternating ROUNDS times against one redis-server this script
# starts: the client's CPU per operation (cmpbench's whole process tree) and
# throughput, and at the fixed rate the send lag's p99, with medians per side.
#
#   bench/live.sh [seconds]          # seconds per measured phase (default 20)
#   ROUNDS=5 bench/live.sh 10
#   SCRAPE=0 bench/live.sh 10        # --live without the scraper
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
secs=${1:-20}
rounds=${ROUNDS:-3}
bench_workdir
build_cmpbench
go build -o "$work/archivestat" ./bench/archivestat
start_redis
cat >"$work/live.yaml" <<YAML
name: live
defaults:
  memtier: {key_prefix: kv_, value_size: 256}
phases:
  - {name: load, kind: load, connections: 50, duration: 120s, memtier: {ratio: "1:0", key_pattern: P, key_max: 100000}}
  - {name: closed, connections: 50, duration: ${secs}s, memtier: {ratio: "1:10", key_pattern: "R:R", key_max: 100000}}
  - {name: fixed, connections: 50, duration: ${secs}s, rate: 20000, memtier: {ratio: "1:10", key_pattern: "R:R", key_max: 100000}}
YAML
run() { # without|with → archive path
  local live=() port scraper=""
  if [ "$1" = with ]; then
    port=$(free_port)
    live=(--live "127.0.0.1:$port")
  fi
  "$cmpbench" --config "$work/cmpbench.yaml" --out "$work/results" run --systems bench --suite "$work/live.yaml" "${live[@]}" >"$work/run.out" 2>"$work/run.err" &
  local pid=$!
  if [ "$1" = with ] && [ "${SCRAPE:-1}" != 0 ]; then
    # one process polling over one kept-alive connection, as Prometheus does
    python3 - "$pid" "$port" >"$work/scrapes" <<'PY' &
import http.client, os, sys, time
pid, port = int(sys.argv[1]), int(sys.argv[2])
n, conn = 0, None
while True:
    try:
        os.kill(pid, 0)
    except OSError:
        break
    try:
        conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        for path in ("/metrics", "/state"):
            conn.request("GET", path)
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                raise OSError(path)
        n += 1
    except OSError:
        conn = None
    time.sleep(1)
print(n)
PY
    scraper=$!
  fi
  wait "$pid" || { cat "$work/run.err" >&2; return 1; }
  [ -n "$scraper" ] && wait "$scraper"
  sed -n 's/^Archive: //p' "$work/run.out"
}
echo "closed loop and fixed 20,000 ops/s, 50 connections, ${secs} s each, $rounds rounds, without and with --live and a scraper every second"
printf '%-8s %5s %12s %12s %12s %12s %8s\n' side round closed_ops/s closed_cpu/M fixed_cpu/M fixed_lag99 scrapes
for r in $(seq "$rounds"); do
  for side in without with; do
    rm -f "$work/scrapes"
    a=$(run "$side")
    c=$("$work/archivestat" phase "$a" closed)
    f=$("$work/archivestat" phase "$a" fixed)
    python3 - "$side" "$r" "$c" "$f" "$(cat "$work/scrapes" 2>/dev/null || echo -)" >>"$work/rows" <<'PY'
import sys
side, r, c, f, scrapes = sys.argv[1:6]
kv = lambda line: dict(x.split("=", 1) for x in line.split() if "=" in x)
c, f = kv(c), kv(f)
print(side, r, c["ops_per_s"], c["cpu_s_per_mop"], f["cpu_s_per_mop"], f["GET_lag_p99_us"], scrapes)
PY
    tail -1 "$work/rows" | awk '{printf "%-8s %5s %12.0f %12.2f %12.2f %12.1f %8s\n", $1, $2, $3, $4, $5, $6, $7}'
  done
done
python3 - "$work/rows" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {s: [st.median(float(r[i]) for r in rows if r[0] == s) for i in (2, 3, 4, 5)] for s in ("without", "with")}
w, l = med["without"], med["with"]
print(f"medians, with / without: closed loop throughput {l[0]/w[0]:.3f}x, CPU per op {l[1]/w[1]:.3f}x; fixed rate CPU per op {l[2]/w[2]:.3f}x, send lag p99 {l[3]:.0f} / {w[3]:.0f} us")
PY
