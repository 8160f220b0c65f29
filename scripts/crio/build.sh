#!/usr/bin/env bash
# Builds CRI-O (crio) and its namespace pinner (pinns) from the Go module
# proxy, once per machine: into CACHE (default
# ${CRISP_TOOLS_CACHE:-$HOME/.cache/crisp-tools}/crio), outside the repository,
# so a fresh clone on the same machine (CI) finds them warm; a stamp file
# records the version, Go and tags, and a second run with the same is a no-op.
# Then links them into .tools/crio/bin, where scripts/crio/up.sh looks.
#
# Why from a copy of the module source: `go install` cannot build crio (its
# go.mod is fine, but pinns is C and lives beside it, built by its Makefile).
# The build tags leave out what needs C libraries this machine lacks (btrfs,
# devicemapper, gpgme: openpgp in Go instead, ostree); seccomp and AppArmor
# are off because their tags are not given. cgo stays on (crio needs it).
# Cold: a few minutes on 2 cores; warm: nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

CRIO_VERSION=${CRIO_VERSION:-v1.34.0}
CACHE=${1:-${CRISP_TOOLS_CACHE:-$HOME/.cache/crisp-tools}/crio}
LINK=$PWD/.tools/crio/bin
tags="containers_image_openpgp exclude_graphdriver_btrfs exclude_graphdriver_devicemapper containers_image_ostree_stub"
log() { echo "crio-build: $*" >&2; }

stamp="cri-o $CRIO_VERSION $(go env GOVERSION) tags=$tags"
link() {
  mkdir -p "$LINK"
  for b in crio pinns; do ln -sfn "$CACHE/$b" "$LINK/$b"; done
}
if [[ -x $CACHE/crio && -x $CACHE/pinns && "$(cat "$CACHE/.version" 2>/dev/null)" == "$stamp" ]]; then
  link
  log "up to date in $CACHE ($stamp)"
  exit 0
fi
mkdir -p "$CACHE"
rm -f "$CACHE/.version"

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
t0=$(date +%s)
# Download outside this module so its go.sum is left alone.
src=$(cd "$work" && GO111MODULE=on GOFLAGS=-mod=mod go mod download -json "github.com/cri-o/cri-o@$CRIO_VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[[ -n $src && -d $src ]] || { log "downloading github.com/cri-o/cri-o@$CRIO_VERSION failed"; exit 1; }
cp -r "$src" "$work/cri-o"
chmod -R u+w "$work/cri-o"

# pinns: a small static C program.
make -s -C "$work/cri-o/pinns" >&2
install -m 0755 "$work/cri-o/bin/pinns" "$CACHE/pinns"

(cd "$work/cri-o" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=1 \
  go build -trimpath -tags "$tags" -ldflags "-s -w" -o "$CACHE/crio.new" ./cmd/crio)
mv -f "$CACHE/crio.new" "$CACHE/crio"
echo "$stamp" >"$CACHE/.version"
link
log "built crio and pinns $CRIO_VERSION in $(($(date +%s) - t0))s into $CACHE"
