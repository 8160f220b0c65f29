#!/usr/bin/env bash
# Side by side: crisp and another crictl-compatible client (crictl) on the
# same container of the same runtime, in one run, the two clients
# ALTERNATING round by round (CPU here is shared and noisy: only medians of
# alternated runs compare). Prints a markdown table per order (crisp first,
# then the other client first) with each figure's median and the ratio.
#
#   scripts/perf.sh [-o FILE] ENDPOINT CONTAINER POD
#
# Environment: CRISP (binary, default bin/crisp), COMPARE (default crictl on
# PATH), ROUNDS (default 5), SIZE_MIB (default 1000), LATENCY_RUNS (per round,
# default 5), PF_PORT (the container's port the download server listens on,
# default 17000), PF_SERVER (the download server's command, PORT standing for
# PF_PORT; default `nc -l -p PORT -e dd if=/dev/zero bs=1M`), ORDERS
# ("crisp-first other-first").
#
# Figures (MB is 10^6 bytes):
#   exec stdout    MB/s of `exec CTR dd if=/dev/zero bs=1M count=SIZE_MIB` into a file (its size is checked)
#   exec CPU       client CPU (user+sys) per GiB of that exec stdout
#   port-forward   MB/s downloading SIZE_MIB through `port-forward POD LOCAL:PF_PORT`
#                  from PF_SERVER inside the container: busybox nc running dd on
#                  each connection, dd writing 1 MiB blocks straight into the
#                  socket (nc's own copy loop moves 1 KiB per system call and
#                  takes ~1.4 s of CPU per GB: the source, not the clients,
#                  would set the figure)
#   pf CPU         the port-forward process's CPU per GiB of that download
#   exec true      latency of `exec CTR true` (ms)
#   version        latency of `version` (ms)
#   exec RSS       peak RSS of the exec stdout client (MiB)
set -euo pipefail

out=""
if [[ ${1:-} == -o ]]; then out=$2; shift 2; fi
if [[ $# -ne 3 ]]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
EP=$1 CTR=$2 POD=$3
CRISP=${CRISP:-bin/crisp}
COMPARE=${COMPARE:-$(command -v crictl || true)}
ROUNDS=${ROUNDS:-5}
SIZE_MIB=${SIZE_MIB:-1000}
LATENCY_RUNS=${LATENCY_RUNS:-5}
PF_PORT=${PF_PORT:-17000}
PF_SERVER=${PF_SERVER:-nc -l -p PORT -e dd if=/dev/zero bs=1M}
PF_SERVER=${PF_SERVER//PORT/$PF_PORT}
ORDERS=${ORDERS:-crisp-first other-first}
[[ -x $CRISP ]] || { echo "perf: no crisp binary at $CRISP (make build)" >&2; exit 2; }
[[ -x $COMPARE ]] || { echo "perf: no client to compare with (set COMPARE)" >&2; exit 2; }
export CONTAINER_RUNTIME_ENDPOINT=$EP IMAGE_SERVICE_ENDPOINT=$EP
tmp=$(mktemp -d)
server_pid=""
# stop_server ends the download server in the container: ending the exec
# that started it leaves its loop running there, and a second loop on the
# same port would spin on nc's failed listen. The loop notes its own PID and
# its server's in the container's /tmp; a PID is killed only while its
# command line is still the loop's or the server's.
pidfile=/tmp/crisp-perf-server-$PF_PORT
stop_server() {
  "$CRISP" -r "$EP" exec "$CTR" sh -c "for f in $pidfile.loop $pidfile.server; do
      p=\$(cat \$f 2>/dev/null) && grep -q -e crisp-perf-server -e nc /proc/\$p/cmdline 2>/dev/null && kill \$p
      rm -f \$f
    done" >/dev/null 2>&1 || true
}
cleanup() {
  [[ -n $server_pid ]] && { kill "$server_pid" 2>/dev/null; stop_server; } || true
  rm -rf "$tmp"
}
trap cleanup EXIT
bytes=$((SIZE_MIB * 1048576))
tick=$(getconf CLK_TCK)

now_us() { echo $(($(date +%s%N) / 1000)); }
# cpu_ticks PID: user+sys clock ticks of a running process.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# exec_stdout CLIENT NAME: one exec stdout run; appends MB/s, CPU s/GiB and RSS MiB.
exec_stdout() {
  local bin=$1 name=$2
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" \
    "$bin" -r "$EP" exec "$CTR" dd if=/dev/zero bs=1M count="$SIZE_MIB" >"$tmp/out" 2>"$tmp/err" || { echo "perf: $name exec stdout failed: $(tail -3 "$tmp/err")" >&2; return 1; }
  local got
  got=$(stat -c %s "$tmp/out")
  if [[ $got -ne $bytes ]]; then
    echo "perf: $name exec stdout moved $got bytes, not $bytes" >&2
    return 1
  fi
  : >"$tmp/out"
  read -r wall user sys rss <"$tmp/time"
  awk -v b="$bytes" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
    printf "%.1f %.3f %.1f\n", b / w / 1e6, (u + s) / (b / 1073741824), r / 1024 }' >>"$tmp/$name.stdout"
}

# forward CLIENT NAME: one port-forward download; appends MB/s and CPU s/GiB.
forward() {
  local bin=$1 name=$2 lp=$((20000 + RANDOM % 20000))
  "$bin" -r "$EP" port-forward "$POD" "$lp:$PF_PORT" >/dev/null 2>"$tmp/pf.err" &
  local pid=$!
  for _ in $(seq 100); do
    ss -Hltn "sport = :$lp" | grep -q . && break
    sleep 0.05
  done
  local c0 t0 t1 c1
  c0=$(cpu_ticks "$pid")
  t0=$(now_us)
  timeout 120 dd bs=1M count="$SIZE_MIB" iflag=fullblock of=/dev/null status=none <"/dev/tcp/127.0.0.1/$lp" || {
    echo "perf: $name port-forward download failed: $(cat "$tmp/pf.err")" >&2
    kill "$pid"; wait "$pid" 2>/dev/null || true
    return 1
  }
  t1=$(now_us)
  c1=$(cpu_ticks "$pid")
  kill -INT "$pid"; wait "$pid" 2>/dev/null || true
  awk -v b="$bytes" -v t="$((t1 - t0))" -v c="$((c1 - c0))" -v hz="$tick" 'BEGIN {
    printf "%.1f %.3f\n", b / (t / 1e6) / 1e6, (c / hz) / (b / 1073741824) }' >>"$tmp/$name.pf"
}

# latency CLIENT NAME FILE ARGS...: LATENCY_RUNS wall times in ms.
latency() {
  local bin=$1 name=$2 file=$3
  shift 3
  for _ in $(seq "$LATENCY_RUNS"); do
    local t0 t1
    t0=$(now_us)
    "$bin" -r "$EP" "$@" >/dev/null 2>&1 || { echo "perf: $name $* failed" >&2; return 1; }
    t1=$(now_us)
    awk -v d="$((t1 - t0))" 'BEGIN { printf "%.2f\n", d / 1000 }' >>"$tmp/$name.$file"
  done
}

# median FILE COLUMN
median() {
  sort -g -k"$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
    if (NR == 0) { print "nan"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The download server: PF_SERVER in the container, serving /dev/zero to each
# connection in turn (the exec stays open for the whole run).
stop_server # a run that was killed may have left one
"$CRISP" -r "$EP" exec "$CTR" sh -c "echo \$\$ >$pidfile.loop
  while true; do $PF_SERVER >/dev/null 2>&1 & echo \$! >$pidfile.server; wait; done # crisp-perf-server" >/dev/null 2>&1 &
server_pid=$!
sleep 1

other=$(basename "$COMPARE")
run_order() {
  local order=$1 first second
  rm -f "$tmp"/crisp.* "$tmp"/other.*
  if [[ $order == crisp-first ]]; then first="$CRISP crisp" second="$COMPARE other"; else first="$COMPARE other" second="$CRISP crisp"; fi
  for r in $(seq "$ROUNDS"); do
    for c in "$first" "$second"; do
      # shellcheck disable=SC2086
      set -- $c
      exec_stdout "$1" "$2"
      forward "$1" "$2"
      latency "$1" "$2" true exec "$CTR" true
      latency "$1" "$2" version version
    done
    echo "perf: $order round $r/$ROUNDS done" >&2
  done
  local cs os cc oc cr or cp op cpc opc ct ot cv ov
  cs=$(median "$tmp/crisp.stdout" 1) os=$(median "$tmp/other.stdout" 1)
  cc=$(median "$tmp/crisp.stdout" 2) oc=$(median "$tmp/other.stdout" 2)
  cr=$(median "$tmp/crisp.stdout" 3) or=$(median "$tmp/other.stdout" 3)
  cp=$(median "$tmp/crisp.pf" 1) op=$(median "$tmp/other.pf" 1)
  cpc=$(median "$tmp/crisp.pf" 2) opc=$(median "$tmp/other.pf" 2)
  ct=$(median "$tmp/crisp.true" 1) ot=$(median "$tmp/other.true" 1)
  cv=$(median "$tmp/crisp.version" 1) ov=$(median "$tmp/other.version" 1)
  echo
  echo "Order: $( [[ $order == crisp-first ]] && echo "crisp first, then $other" || echo "$other first, then crisp"); medians of $ROUNDS rounds ($LATENCY_RUNS latency runs each)."
  echo
  echo "| figure | crisp | $other | crisp / $other | goal |"
  echo "| --- | --- | --- | --- | --- |"
  row() { awk -v f="$1" -v a="$2" -v b="$3" -v u="$4" -v g="$5" 'BEGIN {
    printf "| %s | %s %s | %s %s | %.2fx | %s |\n", f, a, u, b, u, (b == 0 ? 0 : a / b), g }'; }
  row "exec stdout" "$cs" "$os" "MB/s" ">= 1.25x"
  row "port-forward download" "$cp" "$op" "MB/s" ">= 1.25x"
  row "exec stdout client CPU" "$cc" "$oc" "s/GiB" "<= 0.5x"
  row "port-forward client CPU" "$cpc" "$opc" "s/GiB" "<= 0.5x"
  row "exec true" "$ct" "$ot" "ms" "<= 0.8x"
  row "version" "$cv" "$ov" "ms" "<= 0.6x"
  row "exec stdout peak RSS" "$cr" "$or" "MiB" "<= 64 MiB"
}

# breakdown: crisp -v exec CTR true, 5 runs; the timing line of the run
# with the median total.
breakdown() {
  for _ in 1 2 3 4 5; do
    "$CRISP" -r "$EP" -v exec "$CTR" true 2>&1 | grep -F ': timing: ' || true
  done | awk -F'total ' '{ t = $2; sub(/ms.*/, "", t); print t "\t" $0 }' | sort -g | awk -F'\t' 'NR == 3 { print $2 }'
}

{
  for o in $ORDERS; do run_order "$o"; done
  echo
  echo "Where crisp's exec true goes (\`crisp -v exec CTR true\`, the run with the median total of 5):"
  echo
  echo "    $(breakdown)"
} | if [[ -n $out ]]; then tee "$out"; else cat; fi
