# Shared by the bench scripts (sourced, not run): a local redis-server and the
# systems file that points cmpbench at it.

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
