#!/usr/bin/env bash
# A 1 GiB round trip (into the container, then back out) with `crisp cp`
# straight on a kubelet's CRI socket beside `kubectl cp` through the API
# server and the kubelet, on the same container of a pod the kubelet owns
# (busybox, so both copy with tar over exec). Every copy back is checked
# sha256-equal to the source. Rounds alternate the two tools, then the
# whole run is repeated with the other tool first; medians per order.
# A benchmark, not a test: it prints a table; it fails when a copy fails,
# and counts (in the table) a copy back that is not sha256-equal.
#
#   scripts/k8s/bench-cp.sh [-o FILE]
#
# Uses the cluster CRISP_K8S_ENV names (scripts/k8s/up.sh's env file), or
# starts one and stops it after. ROUNDS (default 3) rounds per order;
# SIZE_MIB (default 1024) the file's size; CRISP the crisp binary (bin/crisp).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=/dev/stdout
if [[ ${1:-} == -o ]]; then out=$2; shift 2; fi
rounds=${ROUNDS:-3}
size_mib=${SIZE_MIB:-1024}
crisp=${CRISP:-bin/crisp}
started=""
env=${CRISP_K8S_ENV:-}
if [[ -z $env ]]; then
  env=$(bash scripts/k8s/up.sh | tail -n 1)
  started=1
fi
# shellcheck disable=SC1090
. "$env"
. scripts/k8s/busybox-pod.sh
pod=crisp-bench-cp
work=$(mktemp -d /tmp/crisp-bench-cp.XXXXXX)
cleanup() {
  k delete pod "$pod" --wait --timeout=1m >/dev/null 2>&1 || true
  rm -rf "$work"
  if [[ -n $started ]]; then bash scripts/k8s/down.sh >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
ctr=$(run_busybox_pod "$pod")
[[ -n $ctr ]] || { echo "bench-cp: no container for pod $pod" >&2; exit 1; }

src=$work/blob
head -c "$((size_mib << 20))" /dev/urandom >"$src"
want=$(sha256sum "$src" | cut -d' ' -f1)
load=$(cut -d' ' -f1-3 /proc/loadavg)

# seconds since the epoch, to the millisecond
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b-a}'; }

# one TOOL: copies the blob in and back out, checks it, and prints
# "TOOL IN_SECONDS OUT_SECONDS".
one() {
  local tool=$1 back=$work/back t0 t1 t2
  rm -f "$back"
  k exec "$pod" -- rm -f /tmp/blob >/dev/null
  t0=$(now)
  case $tool in
  crisp) "$crisp" -r "$CRISP_K8S_CRI_ENDPOINT" cp "$src" "$ctr:/tmp/blob" >&2 ;;
  kubectl) k cp "$src" "default/$pod:/tmp/blob" -c main >&2 ;; # its tar talks on stdout
  esac
  t1=$(now)
  case $tool in
  crisp) "$crisp" -r "$CRISP_K8S_CRI_ENDPOINT" cp "$ctr:/tmp/blob" "$back" >&2 ;;
  kubectl) k cp "default/$pod:/tmp/blob" "$back" -c main >&2 ;;
  esac
  t2=$(now)
  local got
  got=$(sha256sum "$back" | cut -d' ' -f1)
  if [[ $got != "$want" ]]; then
    # Counted and shown, not fatal: kubectl cp of large files through the
    # kubelet is known to come back short at times.
    echo "bench-cp: $tool's round trip came back different ($(stat -c %s "$back" 2>/dev/null || echo 0) bytes, sha256 $got)" >&2
    echo "$tool" >>"$work/different"
  fi
  echo "$tool $(secs "$t0" "$t1") $(secs "$t1" "$t2")"
}

median() { sort -n | awk '{v[NR]=$1} END{if (NR%2) printf "%.2f", v[(NR+1)/2]; else printf "%.2f", (v[NR/2]+v[NR/2+1])/2}'; }

results=$work/results
: >"$results"
for order in "crisp kubectl" "kubectl crisp"; do
  for ((i = 1; i <= rounds; i++)); do
    for tool in $order; do
      line=$(one "$tool")
      echo "bench-cp: order ${order// /,} round $i: $line" >&2
      echo "${order// /,} $line" >>"$results"
    done
  done
done
k exec "$pod" -- rm -f /tmp/blob >/dev/null

{
  echo
  echo "### crisp cp beside kubectl cp: ${size_mib} MiB round trip, Kubernetes $CRISP_K8S_VERSION node"
  echo
  echo "\`scripts/k8s/bench-cp.sh\` (\`make bench-cp\`): $rounds rounds per order, the two tools"
  echo "alternating; every copy back sha256-equal to the source. Seconds, medians. Load average"
  echo "before the run: $load."
  echo
  echo "| order | tool | in (s) | out (s) | round trip (s) | MiB/s (round trip) |"
  echo "|---|---|---|---|---|---|"
  for order in "crisp,kubectl" "kubectl,crisp"; do
    for tool in crisp kubectl; do
      in=$(awk -v o="$order" -v t="$tool" '$1==o && $2==t {print $3}' "$results" | median)
      outm=$(awk -v o="$order" -v t="$tool" '$1==o && $2==t {print $4}' "$results" | median)
      rt=$(awk -v o="$order" -v t="$tool" '$1==o && $2==t {print $3+$4}' "$results" | median)
      rate=$(awk -v s="$size_mib" -v r="$rt" 'BEGIN{printf "%.0f", 2*s/r}')
      echo "| ${order/,/ first, } second | $tool | $in | $outm | $rt | $rate |"
    done
  done
  echo
  for tool in crisp kubectl; do
    n=$(grep -cx "$tool" "$work/different" 2>/dev/null || true)
    echo "$tool: $((2 * rounds)) round trips, ${n:-0} not sha256-equal."
  done
} >"$out"
