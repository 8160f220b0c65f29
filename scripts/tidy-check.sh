#!/usr/bin/env bash
# Fails when go.mod or go.sum would change under `go mod tidy`.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp go.mod go.sum "$tmp/"
go mod tidy
if ! diff -q go.mod "$tmp/go.mod" >/dev/null || ! diff -q go.sum "$tmp/go.sum" >/dev/null; then
  diff -u "$tmp/go.mod" go.mod || true
  cp "$tmp/go.mod" "$tmp/go.sum" .
  echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit" >&2
  exit 1
fi
