#!/usr/bin/env bash
# Builds etcd and the Kubernetes binaries the kubelet-node suite needs
# (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubectl)
# from the Go module proxy into OUT (default .tools/k8s/bin), once: a stamp
# file records what was built, and a second run with the same versions and Go
# is a no-op. Cold, this is the longest build of scripts/deps.sh (tens of
# minutes on 2 cores); Go's build cache makes a rebuild in a fresh clone short.
#
# Why the source is copied: k8s.io/kubernetes' go.mod replaces its staging
# modules with ./staging/... paths that its module zip leaves out, and etcd's
# server module replaces four sibling modules with relative paths. Both are
# pointed at the published modules instead.
set -euo pipefail
cd "$(dirname "$0")/../.."

K8S_VERSION=${K8S_VERSION:-v1.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
OUT=${1:-$PWD/.tools/k8s/bin}
mkdir -p "$OUT"
log() { echo "k8s-build: $*" >&2; }

# One build at a time per folder: a second caller (another clone's deps.sh)
# waits here, then finds the stamp and returns.
exec 9>"$OUT/.build.lock"
flock 9

stamp="kubernetes $K8S_VERSION etcd $ETCD_VERSION $(go env GOVERSION)"
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
done_=true
for b in "${bins[@]}"; do [[ -x $OUT/$b ]] || done_=false; done
if $done_ && [[ "$(cat "$OUT/.version" 2>/dev/null)" == "$stamp" ]]; then
  log "up to date in $OUT ($stamp)"
  exit 0
fi
rm -f "$OUT/.version"

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# moddir MODULE@VERSION: the module's source folder in the module cache,
# downloaded outside this repository so its go.sum is left alone.
moddir() {
  (cd "$work" && GO111MODULE=on GOFLAGS=-mod=mod go mod download -json "$1" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
}

t0=$(date +%s)
# --- Kubernetes ----------------------------------------------------------
src=$(moddir "k8s.io/kubernetes@$K8S_VERSION")
[[ -n $src && -d $src ]] || { log "downloading k8s.io/kubernetes@$K8S_VERSION failed"; exit 1; }
cp -r "$src" "$work/kubernetes"
chmod -R u+w "$work/kubernetes"
staging=v0${K8S_VERSION#v1}   # v1.37.2 -> v0.37.2
# k8s.io/X => ./staging/src/k8s.io/X  becomes  k8s.io/X => k8s.io/X v0.37.2
sed -i -E "s#^([[:space:]]*)(k8s\.io/[A-Za-z0-9._/-]+) => \./staging/src/k8s\.io/[A-Za-z0-9._/-]+#\1\2 => \2 $staging#" \
  "$work/kubernetes/go.mod"
if grep -q '=> ./staging' "$work/kubernetes/go.mod"; then
  log "go.mod still replaces staging modules with local paths:"; grep '=> ./staging' "$work/kubernetes/go.mod" >&2
  exit 1
fi
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
(cd "$work/kubernetes" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 \
  go build -trimpath -ldflags "$ldflags" -o "$OUT/" \
  ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kube-scheduler ./cmd/kubelet ./cmd/kubectl)
log "built Kubernetes $K8S_VERSION in $(($(date +%s) - t0))s"

# --- etcd ----------------------------------------------------------------
t1=$(date +%s)
src=$(moddir "go.etcd.io/etcd/server/v3@$ETCD_VERSION")
[[ -n $src && -d $src ]] || { log "downloading go.etcd.io/etcd/server/v3@$ETCD_VERSION failed"; exit 1; }
cp -r "$src" "$work/etcd"
chmod -R u+w "$work/etcd"
# Drop the relative replace directives (single-line and inside a block).
sed -i -E '/=>[[:space:]]*\.\.?\//d' "$work/etcd/go.mod"
(cd "$work/etcd" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$OUT/etcd" .)
log "built etcd $ETCD_VERSION in $(($(date +%s) - t1))s"
echo "$stamp" >"$OUT/.version"
