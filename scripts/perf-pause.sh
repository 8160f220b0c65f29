#!/usr/bin/env bash
# crisp's SPDY bulk pause (internal/transport/spdyconn: 500 µs before the
# next read once a burst of 32 KiB or more came in) on and off, with the
# client on one CPU (taskset -c 0) and on every CPU, against crisp's own mock
# runtime (cri-streaming profile) started on a private socket. The settings
# ALTERNATE round by round, in both orders (CPU here is shared and noisy:
# only medians of alternated runs compare); the mock runs unpinned.
#
#   scripts/perf-pause.sh [-o FILE]
#
# Environment: CRISP (default bin/crisp), ROUNDS (per order, default 5),
# SIZE_MIB (exec stdout per run, default 500), PAUSES (default "500us 0").
# Figures: MB/s of `exec CTR dd if=/dev/zero bs=1M count=SIZE_MIB` into
# /dev/null, and the client's CPU (user+sys) per GiB, medians.
set -euo pipefail
cd "$(dirname "$0")/.."
out=""
if [[ ${1:-} == -o ]]; then out=$2; shift 2; fi
CRISP=${CRISP:-bin/crisp}
ROUNDS=${ROUNDS:-5}
SIZE_MIB=${SIZE_MIB:-500}
read -r -a PAUSES <<<"${PAUSES:-500us 0}"
[[ -x $CRISP ]] || { echo "perf-pause: no crisp binary at $CRISP (make build)" >&2; exit 2; }
command -v taskset >/dev/null || { echo "perf-pause: taskset (util-linux) is missing" >&2; exit 2; }
dir=$(mktemp -d /tmp/crisp-pause.XXXXXX)
sock="unix://$dir/m.sock"
"$CRISP" mock-runtime --listen "$sock" --profile cri-streaming >"$dir/mock.log" 2>&1 &
mock=$!
trap 'kill "$mock" 2>/dev/null; wait "$mock" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [[ -S $dir/m.sock ]] && break; sleep 0.05; done
echo '{"metadata":{"name":"pause","namespace":"default","uid":"pause"}}' >"$dir/pod.json"
echo '{"metadata":{"name":"pause"},"image":{"image":"busybox"},"command":["sleep","36000"]}' >"$dir/ctr.json"
"$CRISP" -r "$sock" pull busybox >/dev/null
ctr=$("$CRISP" -r "$sock" run "$dir/ctr.json" "$dir/pod.json")

# run CPUS PAUSE: one exec; appends "MB/s CPU-s/GiB" to $dir/CPUS-PAUSE.
run() {
  local cpus=$1 pause=$2 pin=()
  [[ $cpus == all ]] || pin=(taskset -c "$cpus")
  CRISP_SPDY_BULK_PAUSE=$pause /usr/bin/time -o "$dir/time" -f '%e %U %S' "${pin[@]}" "$CRISP" -r "$sock" exec --transport spdy "$ctr" \
    -- dd if=/dev/zero bs=1M count="$SIZE_MIB" >/dev/null 2>>"$dir/exec.log"
  read -r el us sy <"$dir/time"
  echo "$(echo "$SIZE_MIB * 1.048576 / $el" | bc -l) $(echo "($us + $sy) * 1024 / $SIZE_MIB" | bc -l)" >>"$dir/$cpus-$pause"
}
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f", m}'; }
median2() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m}'; }

report() {
  echo "| client CPUs | order | pause | exec stdout MB/s | client CPU s/GiB |"
  echo "| --- | --- | --- | --- | --- |"
  for cpus in 0 all; do
    for order in first second; do
      for p in "${PAUSES[@]}"; do
        f="$dir/$cpus-$p-$order"
        [[ -s $f ]] || continue
        echo "| $([[ $cpus == all ]] && echo "all ($(nproc))" || echo "1 (taskset -c $cpus)") | ${PAUSES[0]} $order | $p | $(cut -d' ' -f1 "$f" | median) | $(cut -d' ' -f2 "$f" | median2) |"
      done
    done
  done
}

for cpus in 0 all; do
  for order in first second; do
    list=("${PAUSES[@]}")
    [[ $order == second ]] && list=("${PAUSES[@]:1}" "${PAUSES[0]}")
    for _ in $(seq "$ROUNDS"); do
      for p in "${list[@]}"; do
        run "$cpus" "$p"
        tail -n 1 "$dir/$cpus-$p" >>"$dir/$cpus-$p-$order"
      done
    done
  done
done
if [[ -n $out ]]; then report >"$out"; else report; fi
