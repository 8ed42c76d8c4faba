# shellcheck shell=bash
# The one-node cluster of the e2e (README.md beside this file), sourced by e2e.sh:
# install, build, start, stop. Everything it starts listens on loopback, keeps its
# state under $STATE and $RUNDIR, and is ended by cluster_down, which also runs
# before a run (to clean up after one that was killed) and is safe to run twice.

K8S_VERSION=v1.34.4
STATE=/var/lib/cmpbench-e2e      # etcd, containerd's images, kubelet, the volume
RUNDIR=/run/cmpbench-e2e         # sockets, pid files, containerd's state
PKI=$STATE/pki
CONTAINERD_SOCK=$RUNDIR/containerd.sock
NODE=localhost                   # the node's name, which the API server dials it by
# Ports, below the ephemeral range (32768-60999) the other tests' servers use.
ETCD_PORT=22379 ETCD_PEER_PORT=22380 APISERVER_PORT=26443 REGISTRY_PORT=25000
REDIS_PORT=26379 KUBELET_PORT=20250 KUBELET_HEALTHZ_PORT=20248 CM_PORT=20257 SCHED_PORT=20259
REGISTRY=127.0.0.1:$REGISTRY_PORT
export KUBECACHEDIR=$STATE/kubectl-cache # not ~/.kube/cache
# The kernel settings the kubelet changes at start (protectKernelDefaults: false),
# put back by cluster_down.
SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes"

say() { printf '%s e2e: %s\n' "$(date -u +%T)" "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
kubectl() { "$BIN/kubectl" --kubeconfig "$PKI/admin.kubeconfig" "$@"; }
ctr_() { ctr --address "$CONTAINERD_SOCK" "$@"; }

# deps installs the Debian packages the cluster needs.
deps() {
	local need=()
	command -v containerd >/dev/null || need+=(containerd)
	command -v runc >/dev/null || need+=(runc)
	[ -x /usr/lib/cni/loopback ] || need+=(containernetworking-plugins)
	command -v etcd >/dev/null || need+=(etcd-server)
	command -v redis-server >/dev/null || need+=(redis-server)
	[ -x /bin/busybox ] || need+=(busybox-static)
	command -v openssl >/dev/null || need+=(openssl)
	command -v iptables-save >/dev/null || need+=(iptables)
	if [ ${#need[@]} -gt 0 ]; then
		say "installing ${need[*]} (Debian packages)"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
	fi
	# Debian's packages start their services where an init system does; this run
	# starts its own instances.
	for s in containerd etcd redis-server; do service "$s" stop >/dev/null 2>&1 || true; done
}

# build_kubernetes builds the components from k8s/go.mod into the cache, once per
# go.mod and go.sum: a cold build takes a quarter of an hour on 2 cores.
build_kubernetes() {
	local stamp
	stamp=$(cat "$E2E/k8s/go.mod" "$E2E/k8s/go.sum" | sha256sum | cut -c1-16)
	BIN=$CACHE/kubernetes-$K8S_VERSION-$stamp
	if [ -x "$BIN/kubelet" ] && [ -x "$BIN/kubectl" ]; then
		say "Kubernetes $K8S_VERSION: cached in $BIN"
		return
	fi
	say "building Kubernetes $K8S_VERSION (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubectl) into $BIN"
	local ld="-s -w" p
	for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
		ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=34 -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
	done
	mkdir -p "$BIN.tmp"
	(cd "$E2E/k8s" && CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$BIN.tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl)
	mv "$BIN.tmp" "$BIN"
}

# build_tools builds crane (pinned, outside the main module), and from this
# checkout the static cmpbench (deploy/Dockerfile's build), the pause binary and
# the e2e's two programs.
build_tools() {
	TOOLS=$CACHE/tools
	[ -x "$TOOLS/crane" ] || GOBIN=$TOOLS go install github.com/google/go-containerregistry/cmd/crane@v0.20.6
	local version commit
	version=$(cd "$REPO" && git describe --tags --always --dirty 2>/dev/null || echo dev)
	commit=$(cd "$REPO" && git rev-parse HEAD 2>/dev/null || echo unknown)
	say "building cmpbench $version (CGO_ENABLED=0, as deploy/Dockerfile)"
	(cd "$REPO" && CGO_ENABLED=0 go build -trimpath \
		-ldflags "-X github.com/cmpbench/cmpbench/core.Version=$version -X github.com/cmpbench/cmpbench/core.Commit=$commit" \
		-o "$TOOLS/cmpbench" ./cmd/cmpbench &&
		CGO_ENABLED=0 go build -trimpath -o "$TOOLS/pause" ./deploy/kubernetes/e2e/pause &&
		go build -o "$TOOLS/manifests" ./deploy/kubernetes/e2e/manifests &&
		go build -o "$TOOLS/checkrun" ./deploy/kubernetes/e2e/checkrun)
}

# start NAME CMD...: a daemon of the run, in its own session, logging to $LOGS.
start() {
	local name=$1
	shift
	setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
	echo $! >"$RUNDIR/$name.pid"
	# Not this shell's job any more: teardown's SIGKILL then prints no "Killed".
	disown $!
}

# wait_for WHAT SECONDS CMD...: until CMD succeeds.
wait_for() {
	local what=$1 secs=$2 i
	shift 2
	for ((i = 0; i < secs; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 1
	done
	die "$what not ready after ${secs}s (logs: $LOGS)"
}

check_ports() {
	local p
	for p in $ETCD_PORT $ETCD_PEER_PORT $APISERVER_PORT $REGISTRY_PORT $REDIS_PORT $KUBELET_PORT $KUBELET_HEALTHZ_PORT $CM_PORT $SCHED_PORT; do
		if ss -Hltn "sport = :$p" | grep -q .; then die "port $p is taken: $(ss -Hltnp "sport = :$p")"; fi
	done
}

# cert NAME CN O SAN USAGE: a key and a certificate signed by the run's CA.
cert() {
	local name=$1 cn=$2 o=$3 san=$4 usage=$5 subj="/CN=$2"
	[ -n "$o" ] && subj="/O=$o/CN=$cn"
	openssl req -new -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" -out "$PKI/$name.csr" -subj "$subj" 2>/dev/null
	{
		echo "extendedKeyUsage=$usage"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		[ -n "$san" ] && echo "subjectAltName=$san"
	} >"$PKI/$name.ext"
	openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 2 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
}

# kubeconfig NAME: a kubeconfig for the certificate NAME.
kubeconfig() {
	local f=$PKI/$1.kubeconfig
	"$BIN/kubectl" config set-cluster e2e --server "https://127.0.0.1:$APISERVER_PORT" \
		--certificate-authority "$PKI/ca.crt" --embed-certs --kubeconfig "$f" >/dev/null
	"$BIN/kubectl" config set-credentials "$1" --client-certificate "$PKI/$1.crt" \
		--client-key "$PKI/$1.key" --embed-certs --kubeconfig "$f" >/dev/null
	"$BIN/kubectl" config set-context e2e --cluster e2e --user "$1" --kubeconfig "$f" >/dev/null
	"$BIN/kubectl" config use-context e2e --kubeconfig "$f" >/dev/null
}

make_pki() {
	mkdir -p "$PKI"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 2 -subj /CN=cmpbench-e2e-ca 2>/dev/null
	cert apiserver kube-apiserver "" "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" serverAuth
	cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters "" clientAuth
	cert admin e2e-admin system:masters "" clientAuth
	cert controller-manager system:kube-controller-manager "" "" clientAuth
	cert scheduler system:kube-scheduler "" "" clientAuth
	cert kubelet "system:node:$NODE" system:nodes "" clientAuth
	cert kubelet-serving "$NODE" "" "DNS:$NODE,IP:127.0.0.1" serverAuth
	openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
	openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
	for k in admin controller-manager scheduler kubelet; do kubeconfig "$k"; done
}

start_control_plane() {
	start etcd etcd --name e2e --data-dir "$STATE/etcd" \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER_PORT"
	wait_for etcd 30 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
	# The node is named localhost and the API server reaches its kubelet (logs,
	# exec, cp) by that name: a node's IP cannot be a loopback address.
	start kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
		--bind-address 127.0.0.1 --secure-port "$APISERVER_PORT" --endpoint-reconciler-type none \
		--service-cluster-ip-range 10.96.0.0/24 --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
		--client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
		--kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority "$PKI/ca.crt" --kubelet-preferred-address-types Hostname \
		--service-account-issuer "https://127.0.0.1:$APISERVER_PORT" --service-account-key-file "$PKI/sa.pub" \
		--service-account-signing-key-file "$PKI/sa.key" --profiling=false
	wait_for kube-apiserver 120 kubectl get --raw /readyz
	start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$PKI/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$PKI/controller-manager.kubeconfig" --authorization-kubeconfig "$PKI/controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$CM_PORT" --leader-elect=false --use-service-account-credentials \
		--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" --profiling=false \
		--flex-volume-plugin-dir "$STATE/flex-volume"
	start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$PKI/scheduler.kubeconfig" \
		--authentication-kubeconfig "$PKI/scheduler.kubeconfig" --authorization-kubeconfig "$PKI/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --leader-elect=false --profiling=false
}

start_containerd() {
	mkdir -p "$STATE/cni/net.d" "$STATE/containerd" "$RUNDIR/containerd"
	# No pod of the e2e gets a network of its own (all run on the host network):
	# this network exists for the node to be Ready, and can create no interface.
	cat >"$STATE/cni/net.d/10-e2e.conflist" <<-EOF
		{"cniVersion": "1.0.0", "name": "e2e-none", "plugins": [{"type": "loopback"}]}
	EOF
	cat >"$STATE/containerd.toml" <<-EOF
		version = 2
		root = "$STATE/containerd"
		state = "$RUNDIR/containerd"
		disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
		[grpc]
		  address = "$CONTAINERD_SOCK"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$STATE/containerd-opt"
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$REGISTRY/pause:e2e"
		  # This VM's root lacks CAP_SYS_RESOURCE: runc cannot set an
		  # oom_score_adj below its own (-998 for the sandbox) without it.
		  restrict_oom_score_adj = true
		  netns_mounts_under_state_dir = true
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        Root = "$RUNDIR/runc"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$STATE/cni/net.d"
		  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."$REGISTRY"]
		    endpoint = ["http://$REGISTRY"]
	EOF
	start containerd containerd --config "$STATE/containerd.toml"
	wait_for containerd 30 ctr_ version
}

start_kubelet() {
	save_sysctls
	mkdir -p "$STATE/kubelet"
	cat >"$STATE/kubelet.yaml" <<-EOF
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		address: 127.0.0.1
		port: $KUBELET_PORT
		healthzBindAddress: 127.0.0.1
		healthzPort: $KUBELET_HEALTHZ_PORT
		readOnlyPort: 0
		authentication:
		  anonymous: {enabled: false}
		  webhook: {enabled: true}
		  x509: {clientCAFile: $PKI/ca.crt}
		authorization: {mode: Webhook}
		tlsCertFile: $PKI/kubelet-serving.crt
		tlsPrivateKeyFile: $PKI/kubelet-serving.key
		containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
		# cgroup v1 and no systemd as PID 1.
		cgroupDriver: cgroupfs
		failCgroupV1: false
		failSwapOn: false
		# No iptables rule: nothing of the e2e uses the pod network.
		makeIPTablesUtilChains: false
		podLogsDir: $STATE/pod-logs
		volumePluginDir: $STATE/volume-plugins
		resolvConf: /etc/resolv.conf
		serializeImagePulls: false
		evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
		imageGCHighThresholdPercent: 100
		imageGCLowThresholdPercent: 99
	EOF
	start kubelet "$BIN/kubelet" --config "$STATE/kubelet.yaml" --kubeconfig "$PKI/kubelet.kubeconfig" \
		--root-dir "$STATE/kubelet" --hostname-override "$NODE" --v 2
	wait_for "node $NODE" 120 kubectl wait --for condition=Ready "node/$NODE" --timeout 1s
}

save_sysctls() {
	[ -f "$CACHE/sysctls.saved" ] && return # an earlier run's, not yet put back
	local s
	for s in $SYSCTLS; do echo "$s=$(sysctl -n "$s")"; done >"$CACHE/sysctls.saved"
}

restore_sysctls() {
	[ -f "$CACHE/sysctls.saved" ] || return 0
	sysctl -q -p "$CACHE/sysctls.saved" >/dev/null
	rm -f "$CACHE/sysctls.saved"
}

# image NAME ROOTFS CONFIG...: an image of ROOTFS in the registry on loopback.
image() {
	local name=$1 rootfs=$2
	shift 2
	tar -C "$rootfs" --numeric-owner -cf "$rootfs.tar" .
	"$TOOLS/crane" append --oci-empty-base -f "$rootfs.tar" -t "$REGISTRY/$name" >>"$LOGS/images.log" 2>&1
	"$TOOLS/crane" mutate "$REGISTRY/$name" --set-platform linux/amd64 "$@" >>"$LOGS/images.log" 2>&1
}

# build_images: the cmpbench image as deploy/Dockerfile's (the static binary on a
# distroless-like base: nonroot 65532, CA certificates, /tmp), the pause image,
# and for the results pod Debian's busybox-static (busybox cannot be pulled).
build_images() {
	local img=$STATE/images
	rm -rf "$img"
	mkdir -p "$img/cmpbench/usr/local/bin" "$img/cmpbench/etc/ssl/certs" "$img/cmpbench/tmp" "$img/cmpbench/home/nonroot" \
		"$img/pause" "$img/busybox/bin" "$img/busybox/tmp"
	cp "$TOOLS/cmpbench" "$img/cmpbench/usr/local/bin/"
	cp /etc/ssl/certs/ca-certificates.crt "$img/cmpbench/etc/ssl/certs/"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$img/cmpbench/etc/passwd"
	printf 'root:x:0:\nnonroot:x:65532:\n' >"$img/cmpbench/etc/group"
	chmod 1777 "$img/cmpbench/tmp" "$img/busybox/tmp"
	chown 65532:65532 "$img/cmpbench/home/nonroot"
	cp "$TOOLS/pause" "$img/pause/pause"
	cp /bin/busybox "$img/busybox/bin/busybox"
	local a
	for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$img/busybox/bin/$a"; done
	start registry "$TOOLS/crane" registry serve --address "$REGISTRY"
	wait_for registry 30 curl -fsS "http://$REGISTRY/v2/"
	image cmpbench:e2e "$img/cmpbench" --entrypoint /usr/local/bin/cmpbench --user 65532:65532 --workdir /home/nonroot
	image pause:e2e "$img/pause" --entrypoint /pause
	image busybox:e2e "$img/busybox" --env PATH=/bin
	# The sandbox image is pulled before any pod needs it.
	ctr_ -n k8s.io images pull --plain-http "$REGISTRY/pause:e2e" >/dev/null
}

# start_target: the system under test, redis-server on the node's loopback, with
# the ACL user of the systems file; its password goes to the Secret.
start_target() {
	REDIS_PASSWORD=$(openssl rand -hex 16)
	mkdir -p "$STATE/redis"
	(
		umask 077
		cat >"$STATE/redis/redis.conf" <<-EOF
			bind 127.0.0.1
			port $REDIS_PORT
			save ""
			appendonly no
			dir $STATE/redis
			user default off
			user cmpbench-load on >$REDIS_PASSWORD ~* &* +@all
		EOF
	)
	start redis redis-server "$STATE/redis/redis.conf"
	wait_for redis 30 redis-cli -p "$REDIS_PORT" --user cmpbench-load --pass "$REDIS_PASSWORD" --no-auth-warning ping
}

cluster_up() {
	check_ports
	mkdir -p "$STATE" "$RUNDIR" "$LOGS"
	make_pki
	start_control_plane
	start_containerd
	build_images
	start_kubelet
	start_target
	# The volume's directory, prepared as deploy/kubernetes/README.md says: the
	# kubelet applies no fsGroup to a hostPath volume (nor do most ReadWriteMany
	# drivers), so its root must belong to the pods' user, 65532.
	VOLUME=$STATE/volume
	mkdir -p "$VOLUME"
	chown 65532:65532 "$VOLUME"
	say "cluster up: node $NODE Ready, $("$BIN/kubectl" version --kubeconfig "$PKI/admin.kubeconfig" 2>/dev/null | tr '\n' ' ')"
}

# ---- teardown ----------------------------------------------------------------

# ours lists the processes whose command line or executable names the run's
# directories: the daemons, containerd's shims, whatever a container runs.
ours() {
	local d pid
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[ "$pid" = $$ ] && continue
		if tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qE "$STATE|$RUNDIR|$CACHE/kubernetes-|$CACHE/tools/crane registry"; then
			echo "$pid"
		fi
	done
}

# stop_pid NAME: the daemon of pid file NAME, SIGTERM then SIGKILL.
stop_pid() {
	local f=$RUNDIR/$1.pid pid i
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

# kubepods_cgroups lists the kubelet's cgroups under every controller, deepest first.
kubepods_cgroups() {
	find /sys/fs/cgroup/*/kubepods* -depth -type d 2>/dev/null || true
}

cluster_down() {
	stop_pid kubelet
	# Every container's processes, by the kubelet's cgroups, then the shims.
	local cg pid i n
	for cg in $(kubepods_cgroups); do
		while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done <"$cg/cgroup.procs"
	done
	for n in kube-scheduler kube-controller-manager kube-apiserver etcd registry redis containerd; do stop_pid "$n"; done
	for ((i = 0; i < 3; i++)); do
		for pid in $(ours); do kill -KILL "$pid" 2>/dev/null || true; done
		[ -z "$(ours)" ] && break
		sleep 1
	done
	# Mounts under the run's directories, deepest first: the kubelet's root-dir bind
	# mount and its volumes, containerd's rootfs, shm and network namespace mounts.
	local m
	for ((i = 0; i < 3; i++)); do
		for m in $(awk -v s="$STATE" -v r="$RUNDIR" '$5 ~ "^" s || $5 ~ "^" r {print $5}' /proc/self/mountinfo | sort -r); do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
		done
	done
	for cg in $(kubepods_cgroups); do rmdir "$cg" 2>/dev/null || true; done
	restore_sysctls
	# The kubelet's links to its pods' logs, which it keeps where it always does.
	find /var/log/containers -maxdepth 1 -type l -lname "$STATE/*" -delete 2>/dev/null || true
	if grep -qE "$STATE|$RUNDIR" /proc/self/mountinfo; then
		say "mounts remain under $STATE or $RUNDIR: not removing them"
	else
		rm -rf "$STATE" "$RUNDIR"
	fi
	# What the kubelet and containerd make where they always do, whatever they are
	# told: the kubelet's device plugin socket, containerd's shim sockets. Removed
	# when empty, so never what another kubelet or containerd keeps there.
	rm -f /var/lib/kubelet/device-plugins/kubelet.sock
	rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet /var/log/containers /run/containerd/s /run/containerd 2>/dev/null || true
}

# baseline notes what the machine has before the run: leftovers compares with it.
baseline() {
	BASE_LINKS=$(ip -o link | awk -F': ' '{print $2}' | sort)
	BASE_NETNS=$(ip netns list 2>/dev/null | sort)
	BASE_IPTABLES=$(iptables_rules)
	BASE_PATHS=$(system_paths)
}

# system_paths: the places outside $STATE and $RUNDIR where a kubelet, containerd
# or kubectl write by default, as they are now.
system_paths() {
	local p
	for p in /var/lib/kubelet /var/log/containers /var/log/pods /run/containerd /var/lib/containerd /usr/libexec/kubernetes \
		/etc/kubernetes /etc/cni /opt/cni /var/lib/cni /run/netns "$HOME/.kube"; do
		if [ -e "$p" ]; then find "$p" 2>/dev/null || true; fi
	done | sort
}

# iptables_rules: every table's chains and rules, without counters.
iptables_rules() {
	{ iptables-save 2>/dev/null || true; } | sed -E '/^#/d; s/ \[[0-9]+:[0-9]+\]$//' | sort
}

# leftovers says what of the run is still on the machine: nothing, after cluster_down.
leftovers() {
	local left=()
	[ -n "$(ours)" ] && left+=("processes: $(ours | tr '\n' ' ')")
	grep -qE "$STATE|$RUNDIR" /proc/self/mountinfo && left+=("mounts: $(grep -E "$STATE|$RUNDIR" /proc/self/mountinfo | awk '{print $5}' | tr '\n' ' ')")
	[ -n "$(kubepods_cgroups)" ] && left+=("cgroups: $(kubepods_cgroups | tr '\n' ' ')")
	{ [ -e "$STATE" ] || [ -e "$RUNDIR" ]; } && left+=("directories: $STATE $RUNDIR")
	[ "$(ip -o link | awk -F': ' '{print $2}' | sort)" != "$BASE_LINKS" ] && left+=("links: $(ip -o link | awk -F': ' '{print $2}' | tr '\n' ' ')")
	[ "$(ip netns list 2>/dev/null | sort)" != "$BASE_NETNS" ] && left+=("network namespaces: $(ip netns list | tr '\n' ' ')")
	[ "$(iptables_rules)" != "$BASE_IPTABLES" ] && left+=("iptables rules: $(diff <(echo "$BASE_IPTABLES") <(iptables_rules) | grep '^[<>]' | tr '\n' ' ')")
	[ "$(system_paths)" != "$BASE_PATHS" ] && left+=("files: $(diff <(echo "$BASE_PATHS") <(system_paths) | grep '^>' | tr '\n' ' ')")
	if [ ${#left[@]} -gt 0 ]; then
		printf 'left behind: %s\n' "${left[@]}" >&2
		return 1
	fi
}
