# crisp: the README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin/crisp
TOOLS := $(CURDIR)/.tools/bin
export CRICTL ?= $(TOOLS)/crictl
export CRITEST ?= $(TOOLS)/critest
export PATH := $(TOOLS):$(PATH)
# -timeout is a hang guard per package binary: alone the longest takes ~15 min,
# but with two make test at once on 2 cores cmd/crisp and the containerd e2e
# package took 29-30 min (the first timed out at 30m). -p 2: -p 3 (the
# kubelet suite beside the two long packages) made two warm clean-clone runs
# 26.5 min where -p 2 had been 21.5: the three fight for the 2 cores.
GOTEST_FLAGS ?= -race -count=1 -timeout 60m -p 2

.PHONY: all build image demo test test-short test-go check deps bench lint tidy-check completions man interop fuzz

all: build

## build: a lean binary: no paths or symbol tables (-trimpath, -s -w), and
## the version from git describe (crisp version shows it).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BUILD_FLAGS ?= -trimpath -ldflags "-s -w -X main.crispVersion=$(VERSION)"
build:
	$(GO) build $(BUILD_FLAGS) -o $(BIN) ./cmd/crisp

## image: bin/crisp-image.tar, an OCI image (crisp:$(IMAGE_TAG)) holding the static
## binary on an empty base; offline and reproducible. `ctr -n k8s.io images import`,
## `docker load` and `podman load` read it. The tag is the one deploy/*.yaml
## name (deploy_test.go checks they agree); the binary inside carries
## $(VERSION) (`crisp version`). Push a release as crisp:VERSION with
## `make image IMAGE_TAG=...` and point the manifests at it.
IMAGE_TAG ?= dev
IMAGE_TAR ?= $(CURDIR)/bin/crisp-image.tar
image:
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags '-s -w -buildid= -X main.crispVersion=$(VERSION)' \
		-o $(CURDIR)/bin/crisp-static ./cmd/crisp
	$(GO) run ./cmd/crisp-image -binary $(CURDIR)/bin/crisp-static -name crisp -tag $(IMAGE_TAG) \
		-arch $$($(GO) env GOARCH) -o $(IMAGE_TAR)

## demo: the mock runtime in-process, and every streaming call working on it.
demo: build
	$(BIN) demo

## deps: everything the tests need (Go modules, Debian packages, crictl, critest,
## containerd 2.x, CRI-O).
deps:
	bash scripts/deps.sh

## test: static checks and lint, then every test suite (mock, crictl, critest,
## containerd 1.6 and 2.4, CRI-O).
test: deps check lint test-go

## test-short: the inner loop, under a minute: the unit tests; the long suites
## (end-to-end scripts, the demo, containerd) skip under -short.
test-short:
	$(GO) test -short -count=1 ./...

check:
	@out=$$(gofmt -l cmd internal deploy); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(GO) vet ./...
	bash scripts/tidy-check.sh

test-go:
	$(GO) test $(GOTEST_FLAGS) ./...
	@cat .work/e2e-containerd.txt 2>/dev/null || true

bench: build
	CRISP_CP_BENCH_BYTES=$${CRISP_CP_BENCH_BYTES:-1073741824} $(GO) test -run '^$$' -bench . -benchtime 3x ./...

lint:
	bash scripts/lint.sh

## fuzz: every fuzz target (func Fuzz* in cmd/ and internal/) for FUZZTIME each. Not part of
## `make test`, which runs the targets' seed corpora (testdata/fuzz) as ordinary tests.
## New inputs that fail are written to the package's testdata/fuzz: commit them as seeds.
FUZZTIME ?= 10s
FUZZFLAGS ?= -parallel 2
fuzz:
	@set -e; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' cmd internal | xargs -n1 dirname | sort -u); do \
		for target in $$($(GO) test -list '^Fuzz' ./$$dir | grep '^Fuzz'); do \
			echo "fuzz: ./$$dir $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./$$dir; \
		done; \
	done

## completions: regenerate the checked-in shell completion scripts.
completions: build
	$(BIN) gen-docs --completions completions

## man: man pages from the command tree into man/.
man: build
	$(BIN) gen-docs --man man

## containerd-up / containerd-down: Debian's containerd in the background for the
## end-to-end suite (state, socket and env file under /tmp/crisp-ctrd).
## containerd2-up / containerd2-down: the same with containerd 2.x, built by
## deps into .tools/containerd2/bin (under /tmp/crisp-ctrd2).
.PHONY: containerd-up containerd-down containerd2-up containerd2-down
containerd-up: deps
	bash scripts/containerd-up.sh

containerd-down:
	bash scripts/containerd-down.sh

## perf: crisp and crictl side by side on containerd 1.6 and 2.x and CRI-O
## (alternating, both orders, medians) into docs/performance.md. Needs root
## (starts each runtime unless CRISP_CTRD_ENV, CRISP_CTRD2_ENV or CRISP_CRIO_ENV
## names a running harness's env file).
.PHONY: perf
perf: deps build
	bash scripts/perf-doc.sh docs/performance.md

## perf-kubectl: crisp on a kubelet's CRI socket beside kubectl through the API
## server and the kubelet (alternating, both orders, medians), printed; make perf
## puts the same table in docs/performance.md. Needs root.
.PHONY: perf-kubectl
perf-kubectl: deps build
	bash scripts/k8s/perf.sh

## bench-cp: a 1 GiB round trip with crisp cp on a kubelet's CRI socket beside
## kubectl cp through the kubelet (alternating, both orders, medians, every copy
## checked sha256-equal); prints the table docs/cp.md quotes. Needs root.
.PHONY: bench-cp
bench-cp: deps build
	bash scripts/k8s/bench-cp.sh

## perf-mock: the same side by side against crisp's mock runtime (no root
## needed); prints the tables.
.PHONY: perf-mock
perf-mock: build
	bash scripts/perf-mock.sh

## perf-pause: the SPDY bulk pause on and off, the client on one CPU and on
## all, against the mock (docs/performance.md, "The bulk pause on other CPU counts").
.PHONY: perf-pause
perf-pause: build
	bash scripts/perf-pause.sh

## pf-load: 1000 concurrent 1 MiB port-forward echoes over the direct WebSocket
## protocol against the mock, each counted intact, failed loudly, cut silently
## or hung (fails on the last two); CONNS, SIZE, TRANSPORT=spdy. No root needed.
.PHONY: pf-load
pf-load: build
	bash scripts/pfload.sh

## k8s-up / k8s-down: the two-node Kubernetes of the kubelet suite (etcd, the
## control plane, a kubelet on its own containerd and one on its own CRI-O,
## under /tmp/crisp-k8s; env file /tmp/crisp-k8s/env). Needs root.
.PHONY: k8s-up k8s-down
k8s-up: deps
	bash scripts/k8s/up.sh

k8s-down:
	bash scripts/k8s/down.sh

## fleet-scale: crisp fleet smoke and probe over 100 and 1000 kwok nodes whose
## logs are reports recorded on the real nodes (passing, failing, cut short,
## unreadable, absent), each node's merge checked; prints wall time, peak RSS,
## requests by verb and pods left (docs/fleet.md). FLEET_SCALE_NODES sets the
## sizes. Needs root; brings up its own cluster unless CRISP_K8S_ENV is set.
.PHONY: fleet-scale
fleet-scale: deps
	bash scripts/k8s/fleet-scale.sh

containerd2-up: deps
	bash scripts/containerd/v2-up.sh

## crio-up / crio-down: CRI-O (built by deps) in the background, with a local
## registry holding the test images (everything under /tmp/crisp-crio).
.PHONY: crio-up crio-down
crio-up: deps
	bash scripts/crio/up.sh

crio-down:
	bash scripts/crio/down.sh

containerd2-down:
	bash scripts/containerd/v2-down.sh

## interop: regenerate docs/interop.md from real runs (needs root: starts both containerds).
interop: deps
	CRISP_UPDATE_INTEROP=1 $(GO) test -count=1 -run TestInteropMatrix -v ./internal/e2e/containerd/
