#!/usr/bin/env bash
# make fleet-scale: crisp fleet smoke and probe over 100 and 1000 simulated
# nodes (kwok, sigs.k8s.io/kwok v0.8.0, built from the Go module proxy once
# and cached in ~/.cache/crisp-tools/kwok-v0.8.0) whose reports are real:
#   1. on the two real nodes of scripts/k8s/up.sh (containerd, CRI-O), crisp
#      fleet smoke and probe record passing reports (--save-logs), and again
#      with -- --strict (smoke) and -- --attempt-timeout 1ms (probe) failing
#      ones;
#   2. kwok runs N fake nodes (kwok renews their leases; stages of crisp's
#      own write their status, addresses included); each crisp pod there
#      completes after 20-40 s (a stage of crisp's own too) and its log
#      (kwok's Logs resources, served through the API server as kubectl
#      logs) is a recorded report renamed to the node: most passing, some
#      failing, some cut in half, some of an unknown schemaVersion, some
#      with no report (scripts/fleetscale); a recording that does not read
#      as one report (a runtime can interleave crisp's stderr into it) is
#      left out and named;
#   3. crisp fleet runs over them (-l type=kwok, -o json, -v), under
#      /usr/bin/time; scripts/fleetscale checks that every node was merged as
#      what it was given; the pods left after the run are counted (then
#      removed, so that the next run starts clean); crisp report merges the
#      saved logs.
# Prints a table of wall time, peak RSS, CPU, requests by verb, pods left,
# the merge time and the load average per size and mode (docs/fleet.md
# quotes it). Needs root, and
# what scripts/deps.sh builds. Uses the cluster CRISP_K8S_ENV names, else
# brings one up of its own (under /tmp/crisp-k8s-scale, its own bridges) and
# takes it down at the end. FLEET_SCALE_NODES (default "100 1000") sets the
# sizes; FLEET_SCALE_KEEP=1 keeps the work folder.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
log() { echo "fleet-scale: $*" >&2; }
[[ $(id -u) -eq 0 ]] || { log "needs root (it runs a Kubernetes cluster)"; exit 2; }
command -v /usr/bin/time >/dev/null || { log "needs GNU time (/usr/bin/time, Debian's time package)"; exit 2; }

KWOK_VERSION=v0.8.0
SIZES=${FLEET_SCALE_NODES:-100 1000}
W=$(mktemp -d /tmp/crisp-fleet-scale.XXXXXX)
own_cluster=false
kwok_pid=
cleanup() {
  set +e
  if [[ -n $kwok_pid ]]; then
    kill "$kwok_pid" 2>/dev/null
    wait "$kwok_pid" 2>/dev/null
  fi
  if $own_cluster; then
    bash scripts/k8s/down.sh >/dev/null 2>&1 || log "scripts/k8s/down.sh failed"
  elif [[ -n ${K:-} ]]; then
    $K delete nodes -l type=kwok --wait=false >/dev/null 2>&1 || true
    $K delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  fi
  [[ ${FLEET_SCALE_KEEP:-} == 1 ]] && log "work folder kept: $W" || rm -rf "$W"
}
trap cleanup EXIT

# --- kwok, built once --------------------------------------------------------------
cache=${CRISP_TOOLS_CACHE:-$HOME/.cache/crisp-tools}/kwok-$KWOK_VERSION
if [[ ! -x $cache/kwok ]]; then
  log "building kwok $KWOK_VERSION from the Go module proxy (once; a few minutes)"
  mkdir -p "$cache"
  (cd "$W" && GOFLAGS=-mod=mod GOBIN=$cache go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION")
fi
kwok_src=$(cd "$W" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | awk -F'"' '$2 == "Dir" {print $4}')
[[ -d $kwok_src/kustomize/stage ]] || { log "kwok's module source (its stages) not found"; exit 1; }

# --- the cluster -----------------------------------------------------------------------
if [[ -n ${CRISP_K8S_ENV:-} ]]; then
  envfile=$CRISP_K8S_ENV
else
  export CRISP_K8S_DIR=${CRISP_K8S_DIR:-/tmp/crisp-k8s-scale}
  export CRISP_K8S_BRIDGE=${CRISP_K8S_BRIDGE:-crispk8s4} CRISP_K8S_NET_PREFIX=${CRISP_K8S_NET_PREFIX:-10.213.93}
  export CRISP_K8S_CRIO_BRIDGE=${CRISP_K8S_CRIO_BRIDGE:-crispk8s5} CRISP_K8S_CRIO_NET_PREFIX=${CRISP_K8S_CRIO_NET_PREFIX:-10.213.94}
  own_cluster=true
  log "bringing up a cluster under $CRISP_K8S_DIR"
  envfile=$(bash scripts/k8s/up.sh)
fi
# shellcheck disable=SC1090
. "$envfile"
K="$CRISP_K8S_KUBECTL --kubeconfig $CRISP_K8S_KUBECONFIG"
crisp=$W/crisp
go build -o "$crisp" ./cmd/crisp
go build -o "$W/fleetscale" ./scripts/fleetscale
# kwok initialises only nodes that are not Ready: fake nodes an interrupted
# run left (Ready, addresses gone) would never get their addresses back.
$K delete nodes -l type=kwok --wait=true --timeout=2m >/dev/null 2>&1 || true
NS=crisp-scale-$(head -c 3 /dev/urandom | od -An -tx1 | tr -d ' \n')
$K create namespace "$NS" >/dev/null
# fleet MODE ARGS...: crisp fleet on this cluster (ARGS may end with -- ...).
fleet() {
  local mode=$1
  shift
  "$crisp" fleet "$mode" --kubeconfig "$CRISP_K8S_KUBECONFIG" -n "$NS" \
    --image "$CRISP_K8S_IMAGE_CRISP" --target-image "$CRISP_K8S_IMAGE_BUSYBOX" "$@"
}

# --- 1. reports recorded from the real nodes ---------------------------------------
mkdir -p "$W/rec/pass" "$W/rec/fail"
log "recording reports on the real nodes ($CRISP_K8S_NODE_NAME${CRISP_K8S_CRIO_NODE_NAME:+, $CRISP_K8S_CRIO_NODE_NAME})"
# A node that fails a run meant to pass (CRI-O now and then loses a TTY's
# last line) gives a failing recording: scripts/fleetscale sorts them by
# what they read as.
for m in smoke probe; do
  fleet "$m" -l crisp.dev/runtime --timeout 4m --save-logs "$W/rec/pass" >"$W/rec/$m.txt" 2>&1 ||
    log "fleet $m on the real nodes failed (a node's failing report is recorded as such): $(tail -n 1 "$W/rec/$m.txt")"
done
fleet smoke -l crisp.dev/runtime --timeout 4m --save-logs "$W/rec/fail" -- --strict >"$W/rec/smoke-fail.txt" 2>&1 || true
if ! grep -q '"outcome": "fail"' "$W"/rec/fail/*.smoke.log 2>/dev/null; then
  # No warning to fail on with --strict: a request bound no runtime meets.
  rm -f "$W"/rec/fail/*.smoke.log
  fleet smoke -l crisp.dev/runtime --timeout 4m --save-logs "$W/rec/fail" -- --request-timeout 1ms >"$W/rec/smoke-fail.txt" 2>&1 || true
fi
fleet probe -l crisp.dev/runtime --timeout 4m --save-logs "$W/rec/fail" -- --attempt-timeout 1ms >"$W/rec/probe-fail.txt" 2>&1 || true
for m in smoke probe; do
  ls "$W"/rec/*/*."$m".log >/dev/null 2>&1 || { log "no $m report was recorded (see $W/rec/$m*.txt)"; FLEET_SCALE_KEEP=1; exit 1; }
done

# --- kwok ------------------------------------------------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=kwok \
  -addext "subjectAltName=IP:$CRISP_K8S_NODE_IP" -keyout "$W/kwok.key" -out "$W/kwok.crt" 2>/dev/null
kwok_port=
for _ in $(seq 1 100); do
  p=$((20000 + RANDOM % 10000))
  [[ -z $(ss -Hltn "sport = :$p") ]] && { kwok_port=$p; break; }
done
[[ -n $kwok_port ]] || { log "no free port for kwok"; exit 1; }

printf '| nodes | mode | wall | fleet CPU | peak RSS | requests | pods left | crisp report merge | load (1, 5, 15 min) |\n'
printf '| ---: | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |\n'
for n in $SIZES; do
  run_id=s$n$(head -c 2 /dev/urandom | od -An -tx1 | tr -d ' \n')
  mkdir -p "$W/$n/logs" "$W/$n/saved-smoke" "$W/$n/saved-probe"
  {
    for s in pod/fast/pod-ready.yaml pod/fast/pod-delete.yaml; do # the node stages are crisp's (scripts/fleetscale)
      echo "---"
      cat "$kwok_src/kustomize/stage/$s"
    done
    "$W/fleetscale" config -mode smoke -pass "$W/rec/pass" -fail "$W/rec/fail" -logs "$W/$n/logs" -run-id "$run_id" -namespace "$NS" "$n"
    "$W/fleetscale" config -stages=false -mode probe -pass "$W/rec/pass" -fail "$W/rec/fail" -logs "$W/$n/logs" -run-id "$run_id" -namespace "$NS" "$n"
  } >"$W/$n/kwok.yaml"
  "$W/fleetscale" nodes "$n" >"$W/$n/nodes.yaml"
  t=$(date +%s.%N)
  $K apply -f "$W/$n/nodes.yaml" >/dev/null
  setsid "$cache/kwok" --kubeconfig "$CRISP_K8S_KUBECONFIG" -c "$W/$n/kwok.yaml" \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --node-ip "$CRISP_K8S_NODE_IP" --node-port "$kwok_port" --server-address "$CRISP_K8S_NODE_IP:$kwok_port" \
    --tls-cert-file "$W/kwok.crt" --tls-private-key-file "$W/kwok.key" </dev/null >"$W/$n/kwok.log" 2>&1 &
  kwok_pid=$!
  $K wait --for=condition=Ready nodes -l type=kwok --timeout=5m >/dev/null ||
    { log "kwok's $n nodes did not turn Ready; kwok's log:"; tail -n 20 "$W/$n/kwok.log" >&2; exit 1; }
  noaddr=$($K get nodes -l type=kwok -o jsonpath='{range .items[*]}{.metadata.name} {.status.addresses[0].address}{"\n"}{end}' | awk 'NF < 2' | wc -l)
  log "$n kwok nodes Ready in $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1fs", b-a}') ($noaddr without an address yet)"
  for mode in smoke probe; do
    /usr/bin/time -f '%e %U %S %M' -o "$W/$n/$mode.time" \
      "$crisp" fleet "$mode" -l type=kwok --kubeconfig "$CRISP_K8S_KUBECONFIG" -n "$NS" --run-id "$run_id" \
      --image "$CRISP_K8S_IMAGE_CRISP" --target-image "$CRISP_K8S_IMAGE_BUSYBOX" \
      --runtime-socket /run/containerd/containerd.sock --timeout 5m -o json -v \
      --save-logs "$W/$n/saved-$mode" >"$W/$n/$mode.json" 2>"$W/$n/$mode.err" || true
    load=$(cut -d' ' -f1-3 /proc/loadavg) # the machine is shared: the figures are read beside it
    "$W/fleetscale" check "$n" <"$W/$n/$mode.json" >&2 ||
      { log "fleet $mode over $n nodes merged wrongly; stderr tail:"; tail -n 5 "$W/$n/$mode.err" >&2; FLEET_SCALE_KEEP=1; exit 1; }
    sleep 5 # kwok's pod-delete stage removes the deleted pods
    left=$($K get pods -n "$NS" -l app.kubernetes.io/managed-by=crisp-fleet --no-headers 2>/dev/null | wc -l)
    # What fleet left would load the next run's API server: gone first.
    [[ $left == 0 ]] || $K delete pods -n "$NS" -l app.kubernetes.io/managed-by=crisp-fleet --force --grace-period=0 --wait=true --timeout=5m >/dev/null 2>&1 || true
    read -r wall user sys rss < <(tail -n 1 "$W/$n/$mode.time")
    reqs=$(sed -n 's/^crisp fleet: \([0-9]* requests: .*\)$/\1/p' "$W/$n/$mode.err")
    t=$(date +%s.%N)
    "$crisp" report "$W/$n/saved-$mode"/*.log >/dev/null 2>&1 || true
    merge=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f s", b-a}')
    printf '| %s | %s | %s s | %s | %s | %s | %s | %s | %s |\n' "$n" "$mode" "$wall" \
      "$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.1f s", u+s}')" "$(awk -v k="$rss" 'BEGIN{printf "%.1f MiB", k/1024}')" "$reqs" "$left" "$merge" "$load"
  done
  kill "$kwok_pid" 2>/dev/null || true
  wait "$kwok_pid" 2>/dev/null || true
  kwok_pid=
  $K delete pods -n "$NS" --all --force --grace-period=0 >/dev/null 2>&1 || true
  # 1000 nodes take kubectl's client rate limit past 2 min at times: the
  # figures are in, and the next size (or down.sh) removes what is left.
  $K delete nodes -l type=kwok --wait=true --timeout=5m >/dev/null 2>&1 || log "kwok's $n nodes not all deleted yet"
done
