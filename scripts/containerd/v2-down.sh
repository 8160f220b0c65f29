#!/usr/bin/env bash
# Stops the containerd 2.x harness of v2-up.sh (same variables).
set -uo pipefail
export CRISP_CTRD_DIR=${CRISP_CTRD_DIR:-/tmp/crisp-ctrd2}
exec bash "$(dirname "$0")/../containerd-down.sh"
