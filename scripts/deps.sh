#!/usr/bin/env bash
# Installs what the test suites need, idempotently, and fast when done:
#   - Go modules (go mod download);
#   - Debian packages for the containerd suite (root + apt-get only):
#     containerd runc containernetworking-plugins busybox-static socat tmux,
#     plus iproute2/iptables (CNI bridge), gcc/libc6-dev (static pause) and
#     openssl (the kubelet harness's certificates);
#   - crictl and critest v1.37.0 built from the Go module proxy into .tools/bin
#     (a link into the machine-level cache, as every built tool's folder is);
#   - CRI-O v1.34.0 (crio) and pinns, built by scripts/crio/build.sh into a
#     machine-level cache and linked into .tools/crio/bin (the CRI-O suite
#     also needs the Debian packages conmon and docker-registry);
#   - containerd v2.4.2 and its runc shim (containerd-shim-runc-v2) built from
#     the Go module proxy into .tools/containerd2/bin, a folder of their own:
#     the end-to-end suite runs it beside Debian's containerd 1.6 with that
#     folder first in PATH, and .tools/bin (in the Makefile's PATH) must keep
#     finding Debian's 1.6 binaries;
#   - etcd and the Kubernetes binaries (scripts/k8s/build.sh) for the kubelet
#     suite, built into a machine-level cache (CRISP_TOOLS_CACHE, default
#     ~/.cache/crisp-tools: a fresh clone on a machine that built them once
#     finds them there) and linked as .tools/k8s/bin.
# Without root or apt-get it says what it skipped and carries on; with CI=true
# any failure to install is fatal.
set -euo pipefail
cd "$(dirname "$0")/.."

CRI_TOOLS_VERSION=${CRI_TOOLS_VERSION:-v1.37.0}
CONTAINERD2_VERSION=${CONTAINERD2_VERSION:-v2.4.2}
TOOLS_BIN=$PWD/.tools/bin
CONTAINERD2_BIN=$PWD/.tools/containerd2/bin
# Built tools live in a machine-level cache (CI runs in a fresh clone on the
# machine that built them: a warm run builds nothing); .tools/bin and
# .tools/containerd2/bin are links into it. Each tool's stamp file says what
# it was built from, so a change of version or Go rebuilds it.
CACHE=${CRISP_TOOLS_CACHE:-$HOME/.cache/crisp-tools}
# link_cache DIR NAME: DIR becomes a link to $CACHE/NAME; what a DIR of an
# older checkout held moves there first (never over what the cache has).
link_cache() {
  local dir=$1 target=$CACHE/$2
  mkdir -p "$target" "$(dirname "$dir")"
  if [[ -d $dir && ! -L $dir ]]; then
    cp -an "$dir/." "$target/" && rm -rf "$dir"
  fi
  ln -sfn "$target" "$dir"
}
link_cache "$TOOLS_BIN" bin
link_cache "$CONTAINERD2_BIN" containerd2

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
  iproute2 iptables gcc libc6-dev make conmon docker-registry openssl)
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

# 4. containerd 2.x and its runc shim, built once into their own folder. The
# build tags leave out snapshotters that need C libraries or kernel features
# this suite does not use (the harness runs overlayfs). A cold build takes
# about 4 minutes on 2 cores; with Go's build cache warm (a fresh clone on a
# machine that built it before) well under a minute.
ctrd2_tags="no_btrfs no_devmapper no_zfs no_aufs"
ctrd2_stamp() { echo "containerd $CONTAINERD2_VERSION $(go env GOVERSION) tags=$ctrd2_tags"; }
ctrd2_built() {
  [[ -x "$CONTAINERD2_BIN/containerd" && -x "$CONTAINERD2_BIN/containerd-shim-runc-v2" &&
    "$(cat "$CONTAINERD2_BIN/.containerd.version" 2>/dev/null)" == "$(ctrd2_stamp)" ]]
}
if ! ctrd2_built; then
  t=$(now)
  rm -f "$CONTAINERD2_BIN/.containerd.version"
  mod=github.com/containerd/containerd/v2
  if GOBIN=$CONTAINERD2_BIN go install -tags "$ctrd2_tags" \
    "$mod/cmd/containerd@$CONTAINERD2_VERSION" "$mod/cmd/containerd-shim-runc-v2@$CONTAINERD2_VERSION"; then
    ctrd2_stamp >"$CONTAINERD2_BIN/.containerd.version"
    log "built containerd $CONTAINERD2_VERSION and its runc shim in $(($(now) - t))s"
  else
    skip "building containerd $CONTAINERD2_VERSION failed (the containerd 2.x suite will skip)"
  fi
fi

# 5. CRI-O and pinns: cached outside the repository (a fresh clone on this
# machine finds them), a few minutes cold on 2 cores.
if ! bash scripts/crio/build.sh; then
  skip "building CRI-O failed (the CRI-O suite will skip)"
fi

# 6. etcd and the Kubernetes binaries for the kubelet suite (internal/e2e/kubelet).
# Cold this is the longest step (tens of minutes on 2 cores), hence the cache
# outside the clone; build.sh is a no-op when its stamp matches.
k8s_cache=${CRISP_TOOLS_CACHE:-$HOME/.cache/crisp-tools}/k8s
mkdir -p "$k8s_cache" .tools/k8s
if bash scripts/k8s/build.sh "$k8s_cache"; then
  ln -sfn "$k8s_cache" .tools/k8s/bin
else
  skip "building the Kubernetes binaries failed (the kubelet suite will skip)"
fi

log "ready in $(($(now) - t0))s (tools in $TOOLS_BIN)"
