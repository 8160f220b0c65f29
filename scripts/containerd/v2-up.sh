#!/usr/bin/env bash
# Starts a containerd 2.x harness (the containerd and containerd-shim-runc-v2
# that scripts/deps.sh builds into .tools/containerd2/bin, with Debian's runc)
# with containerd-up.sh, on its own folder, socket, bridge and /24, so it runs
# beside the containerd 1.6 harness:
#   CRISP_CTRD_BIN_DIR     default .tools/containerd2/bin
#   CRISP_CTRD_DIR         default /tmp/crisp-ctrd2
#   CRISP_CTRD_BRIDGE      default crisp2br0
#   CRISP_CTRD_NET_PREFIX  default 10.213.81
# Everything else (images, pods, env file, TLS mode) is containerd-up.sh's.
# Stop with containerd/v2-down.sh (same variables).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export CRISP_CTRD_BIN_DIR=${CRISP_CTRD_BIN_DIR:-$here/../../.tools/containerd2/bin}
export CRISP_CTRD_DIR=${CRISP_CTRD_DIR:-/tmp/crisp-ctrd2}
export CRISP_CTRD_BRIDGE=${CRISP_CTRD_BRIDGE:-crisp2br0}
export CRISP_CTRD_NET_PREFIX=${CRISP_CTRD_NET_PREFIX:-10.213.81}
exec bash "$here/../containerd-up.sh"
