#!/usr/bin/env bash
# What the client asks of the kernel per operation (issue 30): system calls by
# kind and context switches, counted by perf (not timed: counts hold steady on a
# noisy machine where CPU seconds do not), for cmpbench's plugin process and, when
# memtier_benchmark is on PATH, for memtier_benchmark with the same parameters:
# closed loop, 50 connections, SET:GET 1:10, 256 B values, 100,000 keys, against
# a local redis-server this script starts. Counted over the middle of each run.
#
#   bench/kernel.sh [seconds]        # seconds per run (default 12; counted over seconds/2)
#
# Needs perf (Debian: apt-get install -y linux-perf) and the kernel's syscall
# tracepoints; says so and stops when they are not there.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
secs=${1:-12}
work=$(mktemp -d)
cleanup() {
  [ -n "${redis_pid:-}" ] && kill "$redis_pid" 2>/dev/null
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

command -v redis-server >/dev/null || { echo "redis-server is not installed (make deps)"; exit 2; }
command -v perf >/dev/null || { echo "perf is not installed (apt-get install -y linux-perf): no counts"; exit 0; }
events=raw_syscalls:sys_enter,context-switches
for s in write writev sendto sendmsg read readv recvfrom recvmsg epoll_pwait epoll_wait futex nanosleep; do
  # not every architecture has every call (arm64 has no epoll_wait)
  perf stat -e "syscalls:sys_enter_$s" true >/dev/null 2>&1 && events+=",syscalls:sys_enter_$s"
done
[[ $events == *sys_enter_write* ]] || { echo "perf cannot count the syscall tracepoints here (perf_event_paranoid, tracefs): no counts"; exit 0; }
build_cmpbench
start_redis
cat >"$work/kernel.yaml" <<YAML
name: kernel
defaults:
  memtier: {key_prefix: kv_, value_size: 256}
phases:
  - {name: load, kind: load, connections: 50, duration: 120s, memtier: {ratio: "1:0", key_pattern: P, key_max: 100000}}
  - {name: measure, connections: 50, duration: ${secs}s, memtier: {ratio: "1:10", key_pattern: "R:R", key_max: 100000}}
YAML

count() { # label pid → one line of counts per request (a request is one send: write, writev, sendto or sendmsg)
  local label=$1 pid=$2
  perf stat -x, -e "$events" -p "$pid" -- sleep $((secs / 2)) 2>"$work/stat" >/dev/null
  python3 - "$label" "$work/stat" <<'PY'
import sys
c = {}
for line in open(sys.argv[2]):
    f = line.strip().split(",")
    if len(f) > 2 and f[0].replace(".", "").isdigit():
        c[f[2].split(":")[-1].replace("sys_enter_", "")] = float(f[0])
sends, recvs = ("write", "writev", "sendto", "sendmsg"), ("read", "readv", "recvfrom", "recvmsg")
ops = sum(c.get(k, 0) for k in sends)
if not ops:
    print(f"   {sys.argv[1]:<9} no sends counted"); sys.exit()
per = lambda *ks: sum(c.get(k, 0) for k in ks) / ops
print(f"   {sys.argv[1]:<9} per request: {per('sys_enter'):.2f} system calls (receive {per(*recvs):.2f}, "
      f"epoll_wait {per('epoll_pwait') + per('epoll_wait'):.2f}, futex {per('futex'):.3f}, nanosleep {per('nanosleep'):.3f}), "
      f"{per('context-switches'):.3f} context switches")
PY
}

echo "== the kernel's side, closed loop, 50 connections, 1:10, 256 B, 100,000 keys"
"$cmpbench" --config "$work/cmpbench.yaml" --out "$work/results" run --systems bench --suite "$work/kernel.yaml" >"$work/run.out" 2>"$work/run.err" &
run_pid=$!
for _ in $(seq 600); do # the measured phase starts after the load
  grep -q ": measure (" "$work/run.err" 2>/dev/null && break
  sleep 0.1
done
sleep 1
plugin=$(pgrep -P "$run_pid" -f "plugin serve resp" | head -1) || true
[ -n "$plugin" ] || { echo "no plugin process of this run found" >&2; cat "$work/run.err" >&2; exit 1; }
count cmpbench "$plugin"
wait "$run_pid"
if command -v memtier_benchmark >/dev/null; then
  memtier_benchmark -s 127.0.0.1 -p "$port" --protocol=redis -t 2 -c 25 --ratio=1:10 --data-size=256 \
    --key-pattern=R:R --key-minimum=1 --key-maximum=100000 --key-prefix=kv_ --test-time="$secs" \
    --hide-histogram >"$work/memtier.out" 2>&1 &
  m=$!
  sleep 1
  count memtier "$m"
  wait "$m"
else
  echo "   memtier_benchmark is not on PATH: no comparison in this run"
fi
