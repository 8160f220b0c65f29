#!/usr/bin/env bash
# Builds golangci-lint from the Go module proxy into .tools/bin (once) and runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
version=v2.15.0
bin=.tools/bin/golangci-lint
if ! [ -x "$bin" ] || ! "$bin" version 2>/dev/null | grep -q "${version#v}"; then
  GOBIN="$PWD/.tools/bin" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
fi
# Serialized with other runs on the machine (two `make test` at once): by
# default a second golangci-lint fails at once on the first one's lock.
"$bin" run --allow-serial-runners ./...
