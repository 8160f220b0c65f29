#!/usr/bin/env bash
# Installs what the test suites need, idempotently, and fast when done:
#   - Go modules (go mod download);
#   - Debian packages for the containerd suite (root + apt-get only):
#     containerd runc containernetworking-plugins busybox-static socat tmux,
#     plus iproute2/iptables (CNI bridge) and gcc/libc6-dev (static pause);
#   - crictl and critest v1.37.0 built from the Go module proxy into .tools/bin.
# Without root or apt-get it says what it skipped and carries on; with CI=true
# any failure to install is fatal.
set -euo pipefail
cd "$(dirname "$0")/.."

CRI_TOOLS_VERSION=${CRI_TOOLS_VERSION:-v1.37.0}
TOOLS_BIN=$PWD/.tools/bin
mkdir -p "$TOOLS_BIN"

ci=false
[[ "${CI:-}" == true ]] && ci=true

log() { echo "deps: $*" >&2; }
skip() {
  if $ci; then
    log "FATAL (CI=true): $*"
    exit 1
  fi
  log "skipped: $*"
}
now() { date +%s; }
t0=$(now)

# 1. Go modules of this module.
go mod download

# 2. Debian packages.
pkgs=(containerd runc containernetworking-plugins busybox-static socat tmux
  iproute2 iptables gcc libc6-dev)
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${pkgs[@]}"; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ "$st" == "install ok installed" ]] || missing+=("$p")
  done
else
  missing=("${pkgs[@]}")
fi
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    skip "Debian packages ${missing[*]} (not root; the containerd suite will skip)"
  elif ! command -v apt-get >/dev/null 2>&1; then
    skip "Debian packages ${missing[*]} (no apt-get; the containerd suite will skip)"
  else
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt_opts=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3 -q)
    # Update the lists once per machine (or when a package is not known yet).
    if [[ ! -e .tools/apt-updated ]] || ! apt-cache show "${missing[@]}" >/dev/null 2>&1; then
      # A failing third-party list must not stop the install from Debian's.
      if apt-get "${apt_opts[@]}" update >&2; then
        touch .tools/apt-updated
      else
        log "apt-get update reported errors; trying the install anyway"
      fi
    fi
    # Packages only: the containerd suite starts its own daemon (no systemd
    # here); a temporary policy-rc.d keeps package scripts from starting one.
    policy=
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
      policy=/usr/sbin/policy-rc.d
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
    fi
    rc=0
    apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" >&2 || rc=$?
    [[ -n "$policy" ]] && rm -f "$policy"
    if ((rc == 0)); then
      log "installed ${missing[*]} in $(($(now) - t0))s"
    else
      skip "apt-get install ${missing[*]} failed"
    fi
  fi
fi

# 3. crictl and critest (cri-tools), built once into .tools/bin.
stamp() { echo "$1 $CRI_TOOLS_VERSION $(go env GOVERSION)"; }
built() { [[ -x "$TOOLS_BIN/$1" && "$(cat "$TOOLS_BIN/.$1.version" 2>/dev/null)" == "$(stamp "$1")" ]]; }

if ! built crictl; then
  t=$(now)
  if GOBIN=$TOOLS_BIN go install "sigs.k8s.io/cri-tools/cmd/crictl@$CRI_TOOLS_VERSION"; then
    stamp crictl >"$TOOLS_BIN/.crictl.version"
    log "built crictl $CRI_TOOLS_VERSION in $(($(now) - t))s"
  else
    skip "building crictl $CRI_TOOLS_VERSION failed"
  fi
fi

if ! built critest; then
  t=$(now)
  # critest is a test binary (package main with _test.go files): `go install`
  # cannot build it, so build it from a writable copy of the module source.
  # Download outside this module so its go.sum is left untouched.
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  dir=$(cd "$work" && GO111MODULE=on GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/cri-tools@$CRI_TOOLS_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  if [[ -n "$dir" && -d "$dir" ]]; then
    cp -r "$dir" "$work/cri-tools"
    chmod -R u+w "$work/cri-tools"
    if (cd "$work/cri-tools" && GOFLAGS=-mod=mod go test -c ./cmd/critest -o "$TOOLS_BIN/critest"); then
      stamp critest >"$TOOLS_BIN/.critest.version"
      log "built critest $CRI_TOOLS_VERSION in $(($(now) - t))s"
    else
      skip "building critest $CRI_TOOLS_VERSION failed"
    fi
  else
    skip "downloading sigs.k8s.io/cri-tools@$CRI_TOOLS_VERSION failed"
  fi
fi

log "ready in $(($(now) - t0))s (tools in $TOOLS_BIN)"
