# Shared by the bench scripts (sourced, not run): a local redis-server and the
# systems file that points cmpbench at it.

# bench_workdir checks that redis-server is installed and makes $work, a
# temporary directory removed at exit, with the redis-server start_redis
# started in it.
bench_workdir() {
  command -v redis-server >/dev/null || { echo "redis-server is not installed (make deps)"; exit 2; }
  work=$(mktemp -d)
  trap bench_cleanup EXIT
}
bench_cleanup() {
  [ -n "${redis_pid:-}" ] && kill "$redis_pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$work"
}

# free_port prints a free loopback TCP port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_redis [ARGS...] starts a redis-server without persistence on a free
# loopback port in $work, with ARGS added, waits until it answers, and writes
# $work/cmpbench.yaml with one disposable system, bench, at it. It sets port
# and redis_pid.
start_redis() {
  port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no "$@" --dir "$work" >"$work/redis.log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  cat >"$work/cmpbench.yaml" <<YAML
systems:
  bench:
    adapter: resp
    endpoint: 127.0.0.1:$port
    disposable: true
YAML
}

# build_cmpbench sets cmpbench to the binary the scripts run: $CMPBENCH when set
# (another build, e.g. a before: CMPBENCH=/tmp/before/bin/cmpbench bench/noise.sh),
# else ./bin/cmpbench, built from this checkout.
build_cmpbench() {
  cmpbench=./bin/cmpbench
  if [ -n "${CMPBENCH:-}" ]; then
    # the scripts run from the checkout's root: a relative path was given from
    # where the user stood
    cmpbench=$(cd "$OLDPWD" 2>/dev/null && realpath "$CMPBENCH") || { echo "CMPBENCH=$CMPBENCH: not found" >&2; exit 2; }
    [ -x "$cmpbench" ] || { echo "CMPBENCH=$CMPBENCH: not an executable" >&2; exit 2; }
  else
    make -s build
  fi
}

# sample_runqueue PID REDIS_PID prints, every second while PID lives, a line:
# the time (µs since the epoch), then for the threads of PID's plugin child
# ("plugin serve") and of REDIS_PID, summed from /proc/*/task/*/schedstat, the
# nanoseconds they ran on a CPU, the nanoseconds they waited on a run queue for
# one, and how many times they were put on one. Bash alone reads
# them: no process is started per sample, which would load the machine measured.
sample_runqueue() {
  local run=$1 redis=$2 plugin="" pid f r w n sr sw sn line
  set +e # a thread that ends between the listing and the read is no failure
  while kill -0 "$run" 2>/dev/null; do
    if [ -z "$plugin" ] || [ ! -d "/proc/$plugin" ]; then
      plugin=$(pgrep -P "$run" -f 'plugin serve' | head -1)
    fi
    line=${EPOCHREALTIME/[.,]/}
    for pid in "$plugin" "$redis"; do
      sr=0 sw=0 sn=0
      for f in /proc/"${pid:-none}"/task/*/schedstat; do
        if read -r r w n <"$f"; then sr=$((sr + r)) sw=$((sw + w)) sn=$((sn + n)); fi 2>/dev/null
      done
      line+=" $sr $sw $sn"
    done
    echo "$line"
    sleep 1
  done
}
