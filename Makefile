# cmpbench — see README.md. `make smoke` sets up and runs the smoke comparison,
# `make test` runs every test (CI runs it through .ci/run).

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/cmpbench/cmpbench/core.Version=$(VERSION) -X github.com/cmpbench/cmpbench/core.Commit=$(COMMIT)
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# What the smoke run and the tests need from Debian: the servers they start
# themselves (etcd for a cluster whose members name each other), redis-cli
# (redis-tools, for cluster setup) and openssl (for examples/gen-certs.sh).
DEPS_BIN := redis-server redis-cli memcached openssl etcd

# Real servers no Debian package has (Aerospike CE, Valkey, KeyDB, Kvrocks, Dragonfly,
# Pika, Tendis): SERVERS is a folder with one subfolder of binaries per server, each
# put on PATH for the tests and the smoke run. Their integration tests skip, saying how to
# get the server, when it is absent, and fail instead when CI is set (.ci/run).
# Default: the build folder beside this checkout on cmpbench's own machines.
SERVERS ?= $(firstword $(wildcard ../shared/servers))
ifneq ($(SERVERS),)
SERVER_DIRS := $(abspath $(wildcard $(SERVERS)/*/))
empty :=
space := $(empty) $(empty)
export PATH := $(subst $(space),:,$(SERVER_DIRS)):$(PATH)
endif
# What those builds need at run time (Debian 12).
SERVER_LIBS := libssl3 zlib1g libstdc++6 libuuid1 libcurl4 librocksdb7.8 libunwind8 libboost-context1.74.0 liblzma5

.PHONY: build deps test-deps servers servers-path smoke lint test fuzz bench proto clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/cmpbench ./cmd/cmpbench

deps:
	@missing=""; for b in $(DEPS_BIN); do command -v $$b >/dev/null || missing="$$missing $$b"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing (Debian packages)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq redis-server redis-tools memcached openssl etcd-server >/dev/null; \
	  for s in redis-server memcached etcd; do $(SUDO) systemctl disable --now $$s >/dev/null 2>&1 || true; done; \
	fi
	@if [ -n "$(SERVERS)" ] && ! dpkg -s $(SERVER_LIBS) >/dev/null 2>&1; then \
	  echo "installing the real servers' runtime libraries (Debian packages)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $(SERVER_LIBS) >/dev/null; \
	fi

# What the tests need beyond the smoke run: Chromium, which opens the reports'
# report.html and the live page headless (archive/report/browsertest), and
# Prometheus, which scrapes a run's --live metrics (the tests start their own on
# loopback, so the service the package starts is stopped).
test-deps:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || { \
	  echo "installing chromium (Debian package, for the report pages' browser tests)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium >/dev/null; }
	@command -v prometheus >/dev/null || { \
	  echo "installing prometheus (Debian package, for the live metrics' test)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq prometheus >/dev/null; \
	  $(SUDO) systemctl disable --now prometheus >/dev/null 2>&1 || true; }

# Which real servers the tests will find: run `make servers`, or
# `export PATH=$$(make -s servers-path)` for a shell of your own.
servers:
	@echo "SERVERS=$(if $(SERVERS),$(abspath $(SERVERS)),(none))"
	@for b in asd valkey-server keydb-server keydb-flash-server kvrocks dragonfly pika tendisplus redis-server; do \
	  printf '  %-20s %s\n' $$b "$$(command -v $$b || echo 'absent: its tests skip')"; done
servers-path:
	@echo "$$PATH"

# The Quick start's first command: two local redis-servers, compared.
smoke: deps build
	./bin/cmpbench run --systems redis,redis-aof --suite smoke

# The adapter template (plugins/sdk/examples/template) is a Go module of its own,
# which ./... does not enter: it is vetted and checked on its own. Its tests run in
# cmd/cmpbench's TestTemplatePluginIntegration.
TEMPLATE := plugins/sdk/examples/template

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$unformatted" ] || { echo "gofmt needed: $$unformatted"; exit 1; }
	$(GO) vet ./...
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	GOBIN=$(CURDIR)/.tools $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	.tools/staticcheck ./...
	cd $(TEMPLATE) && $(GO) vet ./... && $(CURDIR)/.tools/staticcheck ./...

# The Quick start's second command, and what .ci/run calls. cmd/cmpbench's
# integration tests run every real server the suites name (about 11 minutes on
# these 2-core machines, past go test's default 10-minute bound) and load both
# cores: they run after the other packages, whose timing tests (the engine's
# send lag, a fixed rate held) want a machine that is not saturated — so those
# packages run one at a time too (-p 1): the real-server tests of adapters/
# aerospike and adapters/resp each fill both cores.
# The race detector's run leaves out archive/report (and its chart, section and
# browser-test packages): single-threaded code whose tests took three minutes under
# the detector, the run's longest, for nothing the normal run does not check.
test: deps test-deps lint
	$(GO) test -count=1 -p 1 $$($(GO) list ./... | grep -v '/cmd/cmpbench$$')
	$(GO) test -count=1 -timeout 30m ./cmd/cmpbench
	$(GO) test -count=1 -race -short $$($(GO) list ./core/... ./plugins/... ./workloads/... ./archive/... | grep -v '/archive/report')
	$(MAKE) --no-print-directory fuzz

# deploy/kubernetes on a real one-node Kubernetes on this machine's loopback, as root
# on Debian 12: the Indexed Job of 2 shards and the merge Job, then a shard killed
# mid-phase; everything torn down after (deploy/kubernetes/e2e/README.md). The
# components build once into .e2e-kubernetes/ (a quarter of an hour on 2 cores).
.PHONY: e2e-kubernetes
e2e-kubernetes:
	deploy/kubernetes/e2e/e2e.sh

# Every reader of user files and archive bytes, fuzzed from the seed corpora under
# testdata/fuzz for a few seconds each: a panic fails the build. Budgets are counts
# of inputs, not durations (go1.26's -fuzztime 5s can fail at the deadline with
# "context deadline exceeded": golang/go#75804); FUZZMUL=10 fuzzes ten times longer.
FUZZMUL ?= 1
FUZZ := ./core/config:FuzzSystemsFile:20000 ./core/plan:FuzzSuiteFile:20000 \
	./archive:FuzzManifest:1000 ./archive:FuzzSpool:1000 ./archive:FuzzRecover:300 \
	./archive:FuzzParquet:2000 ./archive:FuzzSums:2000 ./archive:FuzzHistogram:1000 \
	./adapters/aerospike:FuzzParseReply:20000
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; for t in $(FUZZ); do \
	  pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$$(( $${rest#*:} * $(FUZZMUL) )); \
	  echo "fuzz $$pkg $$name: $$n inputs"; \
	  $(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $${n}x "$$pkg" >$$log 2>&1 || { cat $$log; exit 1; }; \
	done

# Go benchmarks of the per-operation path (0 allocs/op), then the client's cost and
# fidelity against a local redis-server (and memtier_benchmark when on PATH), the
# host's memory over a long synthetic run, the client's noise floor at fixed rates,
# and Aerospike against the official client's tool: see bench/README.md.
bench: deps build
	$(GO) test -run '^$$' -bench . -benchmem ./core/engine ./workloads/memtier
	bench/client.sh
	bench/kernel.sh
	bench/noise.sh
	bench/pacing.sh
	bench/live.sh
	bench/aerospike.sh
	bench/trace.sh

# Regenerate the plugin protocol's Go code (committed); tools are pinned and kept
# out of the main module.
proto:
	GOBIN=$(CURDIR)/.tools $(GO) install github.com/bufbuild/buf/cmd/buf@v1.75.0
	GOBIN=$(CURDIR)/.tools $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
	GOBIN=$(CURDIR)/.tools $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
	cd plugins/proto && PATH=$(CURDIR)/.tools:$$PATH buf generate

clean:
	rm -rf bin .tools
