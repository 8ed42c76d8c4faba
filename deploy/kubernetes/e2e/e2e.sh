#!/usr/bin/env bash
# The scale-out e2e (README.md beside this file): deploy/kubernetes's Indexed Job of
# 2 shards and its merge Job, run on a one-node cluster on this machine's loopback,
# as root on Debian 12. `make e2e-kubernetes` runs it.
#
#   deploy/kubernetes/e2e/e2e.sh            # both cases: a whole run, then a killed shard
#   E2E_CASES=whole deploy/kubernetes/e2e/e2e.sh
#   deploy/kubernetes/e2e/e2e.sh teardown   # only end what a run left
#
# E2E_CACHE (default .e2e-kubernetes in the checkout) keeps the built components
# between runs, and the last run's logs, manifests and results (last-run/).
set -euo pipefail
E2E=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$E2E/../../.." && pwd)
CACHE=${E2E_CACHE:-$REPO/.e2e-kubernetes}
CASES=${E2E_CASES:-whole killed}
SHARDS=2
OUT=$CACHE/last-run
LOGS=$OUT/logs
# shellcheck source=cluster.sh
. "$E2E/cluster.sh"

[ "$(id -u)" = 0 ] || die "run as root: it starts a kubelet and containerd"
mkdir -p "$CACHE"

if [ "${1:-}" = teardown ]; then
	cluster_down
	say "torn down"
	exit 0
fi

started=$(date +%s)
finish() {
	local rc=$?
	trap - EXIT INT TERM
	if [ $rc != 0 ] && [ -n "${BIN:-}" ] && [ -f "$PKI/admin.kubeconfig" ]; then
		kubectl get jobs,pods -o wide >"$LOGS/objects.txt" 2>&1 || true
		kubectl describe jobs,pods >>"$LOGS/objects.txt" 2>&1 || true
	fi
	say "tearing down"
	cluster_down
	if ! leftovers; then rc=1; fi
	say "$(if [ $rc = 0 ]; then echo PASS; else echo "FAIL (exit $rc; logs in $LOGS)"; fi) in $(($(date +%s) - started))s"
	exit $rc
}

cluster_down # what a run that was killed left behind
rm -rf "$OUT"
mkdir -p "$LOGS"
baseline
trap finish EXIT
trap 'exit 130' INT TERM

deps
build_kubernetes
build_tools
cluster_up

# The project's manifests, with the e2e's substitutions (README.md) and nothing else.
M=$OUT/manifests
"$TOOLS/manifests" -in "$REPO/deploy/kubernetes" -out "$M" -image "$REGISTRY/cmpbench:e2e" -busybox "$REGISTRY/busybox:e2e" \
	-shards $SHARDS -target "127.0.0.1:$REDIS_PORT" -volume "$VOLUME"

# deploy/kubernetes/README.md's steps.
kubectl create secret generic cmpbench-secrets --from-literal VALKEY_PASSWORD="$REDIS_PASSWORD" \
	--from-literal AMR_ACCESS_KEY=unused-by-the-e2e >/dev/null
kubectl apply -f "$M/config.yaml" -f "$M/volume.yaml"

# job_state JOB: Complete or Failed, once the Job has ended.
job_state() {
	kubectl get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}' 2>/dev/null |
		grep -xE 'Complete|Failed' || true
}

# wait_job JOB SECONDS: until it ends; prints how.
wait_job() {
	local i s
	for ((i = 0; i < $2; i += 2)); do
		s=$(job_state "$1")
		if [ -n "$s" ]; then echo "$s"; return; fi
		sleep 2
	done
	echo "Running after $2s"
}

# start_run: a new start-at, and the Jobs applied with it.
start_run() {
	kubectl delete job cmpbench-shards cmpbench-merge --ignore-not-found --wait >/dev/null
	kubectl delete configmap cmpbench-start --ignore-not-found >/dev/null
	START_AT=$(date -u -d '+40 sec' +%FT%TZ)
	kubectl create configmap cmpbench-start --from-literal start-at="$START_AT" >/dev/null
	kubectl apply -f "$M/shards.yaml" -f "$M/merge.yaml"
	say "run starts at $START_AT"
}

# copy_out DIR: the run's shards/ and merged/ through the results pod (kubectl cp).
copy_out() {
	kubectl apply -f "$M/results.yaml" >/dev/null
	kubectl wait --for condition=Ready pod/cmpbench-results --timeout 120s >/dev/null
	mkdir -p "$1"
	kubectl cp "cmpbench-results:/results/runs/$START_AT/merged" "$1/merged" >/dev/null
	kubectl cp "cmpbench-results:/results/runs/$START_AT/shards" "$1/shards" >/dev/null
	kubectl delete pod cmpbench-results --wait >/dev/null
}

logs_of() {
	local job=$1 out=$2
	kubectl logs "job/$job" --all-containers --prefix >"$out" 2>&1 || true
	local p
	for p in $(kubectl get pods -l "job-name=$job" -o name); do
		kubectl logs "$p" >"$out.${p#pod/}" 2>&1 || true
	done
}

case_whole() {
	say "case whole: $SHARDS shards and the merge"
	start_run
	local shards merge
	shards=$(wait_job cmpbench-shards 600)
	merge=$(wait_job cmpbench-merge 300)
	logs_of cmpbench-shards "$LOGS/whole-shards.log"
	logs_of cmpbench-merge "$LOGS/whole-merge.log"
	[ "$shards" = Complete ] || die "case whole: the shard Job is $shards (logs: $LOGS/whole-shards.log*)"
	[ "$merge" = Complete ] || die "case whole: the merge Job is $merge (log: $LOGS/whole-merge.log)"
	sed -n '/^Merged/,$p' "$LOGS/whole-merge.log" >&2
	copy_out "$OUT/whole"
	local merged
	merged=$(find "$OUT/whole/merged" -mindepth 1 -maxdepth 1 -type d ! -name '.*')
	"$TOOLS/cmpbench" verify "$merged" >&2
	"$TOOLS/checkrun" -n $SHARDS -shards "$OUT/whole/shards" -merged "$OUT/whole/merged" >&2
	say "case whole: PASS"
}

# case_killed: shard 1 is killed (SIGKILL, as the OOM killer or a lost node would)
# in the middle of the fixed-rate phase; the merge must end saying shard 1 is
# missing, exit 1, and leave no merge that claims to be complete.
case_killed() {
	local killed=1
	say "case killed: shard $killed killed mid-phase"
	start_run
	local note
	for ((i = 0; i < 300; i++)); do
		note=$(find "$VOLUME/runs/$START_AT/shards" -path "*node-redis.1.0.before/$killed.json" 2>/dev/null || true)
		[ -n "$note" ] && [ -e "$(dirname "$note")/0.json" ] && break
		sleep 1
	done
	[ -n "$note" ] || die "case killed: the shards never met before the fixed-rate phase"
	sleep 12 # into the 30-second phase
	local pod cid
	pod=$(kubectl get pods -l "job-name=cmpbench-shards,batch.kubernetes.io/job-completion-index=$killed" -o name)
	cid=$(kubectl get "$pod" -o jsonpath='{.status.containerStatuses[0].containerID}')
	say "killing ${pod#pod/} (container ${cid#containerd://}) with SIGKILL"
	ctr_ -n k8s.io tasks kill --signal SIGKILL "${cid#containerd://}"
	local shards merge
	shards=$(wait_job cmpbench-shards 300)
	merge=$(wait_job cmpbench-merge 900)
	logs_of cmpbench-shards "$LOGS/killed-shards.log"
	logs_of cmpbench-merge "$LOGS/killed-merge.log"
	[ "$shards" = Failed ] || die "case killed: the shard Job is $shards, want Failed"
	[ "$merge" = Failed ] || die "case killed: the merge Job is $merge, want Failed (log: $LOGS/killed-merge.log)"
	local code
	code=$(kubectl get pods -l job-name=cmpbench-merge -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}')
	[ "$code" = 1 ] || die "case killed: the merge exited $code, want 1"
	grep -q "shard $killed" "$LOGS/killed-merge.log" || die "case killed: the merge's log does not name shard $killed"
	grep -E "shard|Merged" "$LOGS/killed-merge.log" | tail -4 >&2
	copy_out "$OUT/killed"
	"$TOOLS/checkrun" -n $SHARDS -missing $killed -shards "$OUT/killed/shards" -merged "$OUT/killed/merged" >&2
	say "case killed: PASS (merge exit 1, naming shard $killed)"
}

for c in $CASES; do
	case $c in
	whole) case_whole ;;
	killed) case_killed ;;
	*) die "unknown case $c (whole, killed)" ;;
	esac
done
