#!/usr/bin/env bash
# Installs what the test suites need, idempotently. Extended by the
# containerd harness (apt packages, crictl, critest).
set -euo pipefail
cd "$(dirname "$0")/.."
go mod download
