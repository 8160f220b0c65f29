#!/usr/bin/env bash
# crisp straight on a kubelet's CRI socket beside kubectl through the API
# server and the kubelet, on the same container of a pod the kubelet owns:
# scripts/perf.sh with COMPARE set to perf-shim/kubectl (kubectl behind
# crictl's command lines), alternating round by round, both orders, medians.
#
#   scripts/k8s/perf.sh [-o FILE]
#
# Uses the cluster CRISP_K8S_ENV names (scripts/k8s/up.sh's env file), or
# starts one and stops it after. The pod is busybox, on the pod network (not
# the host's, so the download server's port cannot meet a host listener),
# created through the API server and deleted at the end. ROUNDS, SIZE_MIB,
# LATENCY_RUNS and ORDERS pass through to scripts/perf.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=/dev/stdout
if [[ ${1:-} == -o ]]; then out=$2; shift 2; fi
started=""
env=${CRISP_K8S_ENV:-}
if [[ -z $env ]]; then
  env=$(bash scripts/k8s/up.sh | tail -n 1)
  started=1
fi
# shellcheck disable=SC1090
. "$env"
. scripts/k8s/busybox-pod.sh
pod=crisp-perf
cleanup() {
  k delete pod "$pod" --wait --timeout=1m >/dev/null 2>&1 || true
  if [[ -n $started ]]; then bash scripts/k8s/down.sh >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
ctr=$(run_busybox_pod "$pod")
crisp=${CRISP:-bin/crisp}
sandbox=$("$crisp" -r "$CRISP_K8S_CRI_ENDPOINT" pods -q --label "io.kubernetes.pod.name=$pod" --label io.kubernetes.pod.namespace=default)
[[ -n $ctr && -n $sandbox ]] || { echo "k8s perf: no container or pod sandbox for pod $pod" >&2; exit 1; }
load=$(cut -d' ' -f1-3 /proc/loadavg)
tables=$(mktemp)
KUBECTL=$CRISP_K8S_KUBECTL KUBECONFIG=$CRISP_K8S_KUBECONFIG PERF_K8S_POD=$pod PERF_K8S_CONTAINER=main \
  CRISP=$crisp COMPARE=scripts/k8s/perf-shim/kubectl \
  bash scripts/perf.sh -o "$tables" "$CRISP_K8S_CRI_ENDPOINT" "$ctr" "$sandbox" >&2
{
  echo
  echo "### Kubernetes $CRISP_K8S_VERSION node: crisp on the CRI socket, kubectl through the API server and the kubelet"
  echo
  echo "Load average before the run: $load. kubectl's figures include the API server's and the"
  echo "kubelet's relaying (their CPU is not counted in kubectl's columns); \`version\` is"
  echo "\`kubectl version\` (asks the API server) beside \`crisp version\` (asks the runtime)."
  cat "$tables"
} >"$out"
rm -f "$tables"
