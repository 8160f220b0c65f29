#!/usr/bin/env bash
# scripts/perf.sh against crisp's own mock runtime (cri-streaming profile,
# what containerd serves): starts `crisp mock-runtime` on a private socket,
# runs a pod and a container from the busybox image, compares, stops it.
# Same environment as perf.sh (CRISP, COMPARE, ROUNDS, SIZE_MIB, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
CRISP=${CRISP:-bin/crisp}
dir=$(mktemp -d)
sock="unix://$dir/mock.sock"
"$CRISP" mock-runtime --listen "$sock" --profile cri-streaming >"$dir/mock.log" 2>&1 &
mock=$!
trap 'kill "$mock" 2>/dev/null; wait "$mock" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [[ -S $dir/mock.sock ]] && break; sleep 0.05; done
echo '{"metadata":{"name":"perf","namespace":"default","uid":"perf"}}' >"$dir/pod.json"
echo '{"metadata":{"name":"perf"},"image":{"image":"busybox"},"command":["sleep","36000"]}' >"$dir/ctr.json"
"$CRISP" -r "$sock" pull busybox >/dev/null
ctr=$("$CRISP" -r "$sock" run "$dir/ctr.json" "$dir/pod.json")
pod=$("$CRISP" -r "$sock" pods -q --no-trunc | head -n 1)
CRISP=$CRISP PF_PORT=${PF_PORT:-$((17000 + RANDOM % 1000))} bash scripts/perf.sh "$@" "$sock" "$ctr" "$pod"
