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
#      saved logs;
#   4. crisp fleet smoke again, disrupted mid-run (FLEET_SCALE_DISRUPT=0
#      skips it): SIGINT once half its pods exist, SIGTERM once all do
#      (crisp fleet --help: exit 130 and 143, the pods deleted first), and
#      the API server stopped and started again with its own arguments once
#      all do (fleet finishes, every node merged as given).
# Prints a table of wall time, peak RSS, CPU, requests by verb, pods left,
# the merge time and the load average per size and mode, then one of the
# disrupted runs (docs/fleet.md quotes them). Exits 1 when a node was merged
# wrongly, a pod was left, or a disrupted run ended otherwise than
# documented; the timings fail nothing. Needs root, and
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

bad=0 # a correctness failure (wrong merge, pod left, wrong exit): exit 1 at the end
# pods_left: "U L": U of crisp fleet's pods in the namespace that were not
# deleted (no deletionTimestamp: the run never deleted them), L still there
# after up to 60 s (kwok's pod-delete stage removes the deleted ones; the
# wait is only as long as they take).
pods_left() {
  local undeleted left i
  undeleted=$($K get pods -n "$NS" -l app.kubernetes.io/managed-by=crisp-fleet \
    -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}' 2>/dev/null | awk 'NF == 1' | wc -l || true)
  for ((i = 0; i < 60; i++)); do
    left=$($K get pods -n "$NS" -l app.kubernetes.io/managed-by=crisp-fleet --no-headers 2>/dev/null | wc -l || true)
    [[ $left == 0 ]] && break
    sleep 1
  done
  echo "$undeleted $left"
}
# remove_left: what a run left would load the next run's API server: gone first.
remove_left() {
  $K delete pods -n "$NS" -l app.kubernetes.io/managed-by=crisp-fleet --force --grace-period=0 --wait=true --timeout=5m >/dev/null 2>&1 || true
}
# alive_pid PID: PID runs (a zombie, or one gone while its state is read, does not).
alive_pid() {
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [[ -n $st && $st != Z ]]
}
# restart_apiserver: stops the cluster's kube-apiserver as down.sh does (by
# the PID up.sh recorded: TERM, KILL after 10 s) and starts it again as
# up.sh did (its arguments and environment, read from /proc; its own
# session; its log), recording the new PID for down.sh; waits for /readyz.
# Prints how long it was down and why.
restart_apiserver() {
  local pidf=$CRISP_K8S_DIR/pids/kube-apiserver.pid pid t0 t1 i how=TERM
  local -a args envs
  pid=$(cat "$pidf") && alive_pid "$pid" || { log "no running kube-apiserver recorded in $pidf"; return 1; }
  mapfile -d '' -t args <"/proc/$pid/cmdline"
  mapfile -d '' -t envs <"/proc/$pid/environ"
  t0=$(date +%s.%N)
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    alive_pid "$pid" || break
    sleep 0.1
  done
  if alive_pid "$pid"; then
    kill -KILL "$pid" 2>/dev/null || true
    how="TERM, KILL after 10 s"
  fi
  t1=$(date +%s.%N)
  env -i "${envs[@]}" "$(command -v setsid)" "${args[@]}" </dev/null >>"$CRISP_K8S_DIR/logs/kube-apiserver.log" 2>&1 &
  echo $! >"$pidf"
  for ((i = 0; i < 1200; i++)); do
    if $K get --raw /readyz >/dev/null 2>&1; then
      awk -v a="$t0" -v b="$t1" -v c="$(date +%s.%N)" -v how="$how" \
        'BEGIN{printf "API server down %.1f s (stopped in %.1f s: %s; ready %.1f s after its start)", c-a, b-a, how, c-b}'
      return 0
    fi
    sleep 0.1
  done
  log "kube-apiserver not ready 120 s after its restart; its log's tail:"
  tail -n 20 "$CRISP_K8S_DIR/logs/kube-apiserver.log" >&2
  return 1
}
# disrupt N CASE: crisp fleet smoke over the N kwok nodes, disrupted mid-run;
# appends a row to $W/disrupted.md and sets bad when the run ended otherwise
# than documented, left a pod, or (apiserver) merged a node wrongly:
#   sigint     Ctrl-C once half the pods exist (fleet still creating them):
#              exit 130 within 90 s (the clean-up's own bound is 30 s);
#   sigterm    SIGTERM once every pod exists (fleet waiting on them): 143;
#   apiserver  the API server restarted once every pod exists
#              (FLEET_SCALE_RESTART_PCT=50: once half do, fleet still
#              creating them): fleet finishes (exit 1, as some nodes fail by
#              design), and scripts/fleetscale check passes.
disrupt() {
  local n=$1 what=$2 id want at tpid cpid t0 tsig tend code=0 got=0 how why="" i undeleted left reqs
  case $what in
    sigint) id=${run_id}i want=130 at=$((n / 2)) ;;
    sigterm) id=${run_id}t want=143 at=$n ;;
    apiserver) id=$run_id want=1 at=$((n * ${FLEET_SCALE_RESTART_PCT:-100} / 100)) ;; # kwok serves this run ID's logs
  esac
  t0=$(date +%s.%N)
  /usr/bin/time -f '%e %U %S %M' -o "$W/$n/$what.time" \
    "$crisp" fleet smoke -l type=kwok --kubeconfig "$CRISP_K8S_KUBECONFIG" -n "$NS" --run-id "$id" \
    --image "$CRISP_K8S_IMAGE_CRISP" --target-image "$CRISP_K8S_IMAGE_BUSYBOX" \
    --runtime-socket /run/containerd/containerd.sock --timeout 5m -o json -v >"$W/$n/$what.json" 2>"$W/$n/$what.err" &
  tpid=$!
  for ((i = 0; i < 50; i++)); do
    cpid=$(pgrep -P "$tpid" || true)
    [[ -n $cpid ]] && break
    sleep 0.1
  done
  [[ -n $cpid ]] || { log "crisp fleet did not start under /usr/bin/time"; bad=1; return; }
  for ((i = 0; i < 300; i++)); do
    got=$($K get pods -n "$NS" -l "crisp-fleet-run=$id" -o name 2>/dev/null | wc -l || true)
    [[ $got -ge $at ]] && break
    alive_pid "$cpid" || break
    sleep 1
  done
  tsig=$(date +%s.%N)
  if ! alive_pid "$cpid"; then
    why="crisp ended before $at pods existed"
    how="none: crisp ended first"
  elif [[ $what == apiserver ]]; then
    how="$(restart_apiserver) at $got pods" || { why="the API server did not come back"; how="restart failed"; }
  else
    kill -s "${what^^}" "$cpid" || true # gone meanwhile: what it left is counted below
    how="${what^^} at $got pods"
  fi
  # 90 s for a signal (the clean-up is bounded at 30 s); the run's own
  # --timeout (5 min) and more for the API server case.
  local bound=900
  [[ $what == apiserver ]] && bound=4200
  for ((i = 0; i < bound; i++)); do
    alive_pid "$cpid" || break
    sleep 0.1
  done
  if alive_pid "$cpid"; then
    why="crisp had not ended $((bound / 10)) s after the disruption"
    kill -KILL "$cpid" 2>/dev/null || true
  fi
  wait "$tpid" || code=$?
  tend=$(date +%s.%N)
  if [[ $what == apiserver ]]; then
    how+=", $(grep -c '^crisp fleet: listing pods: .*(trying again)$' "$W/$n/$what.err" || true) failed pod lists retried"
  else
    how+=", exit $(awk -v a="$tsig" -v b="$tend" 'BEGIN{printf "%.1f s", b-a}') later"
  fi
  # GNU time exits 128+N for a child killed by signal N too: its note tells
  # a crisp that died of the signal from one that handled it.
  [[ -z $why ]] && grep -q '^Command terminated by signal' "$W/$n/$what.time" && why="crisp died of the signal: $(head -n 1 "$W/$n/$what.time")"
  [[ -z $why && $code != "$want" ]] && why="exit $code, want $want"
  [[ -z $why && $what == sig* ]] && ! grep -q "interrupted by ${what^^}" "$W/$n/$what.err" && why="crisp did not say it was interrupted by ${what^^}"
  read -r undeleted left < <(pods_left)
  [[ -z $why && $undeleted != 0 ]] && why="$undeleted pods never deleted"
  [[ -z $why && $left != 0 ]] && why="$left pods left after 60 s"
  if [[ -z $why && $what == apiserver ]] && ! "$W/fleetscale" check "$n" <"$W/$n/$what.json" >"$W/$n/$what.check" 2>&1; then
    why="merged wrongly: $(sed -n 2p "$W/$n/$what.check")"
  fi
  if [[ -n $why ]]; then
    bad=1
    FLEET_SCALE_KEEP=1
    log "fleet smoke over $n nodes, $what: $why; stderr tail:"
    tail -n 5 "$W/$n/$what.err" >&2
  fi
  remove_left
  local wall user sys rss
  read -r wall user sys rss < <(tail -n 1 "$W/$n/$what.time")
  reqs=$(sed -n 's/^crisp fleet: \([0-9]* requests: .*\)$/\1/p' "$W/$n/$what.err")
  printf '| %s | %s | %s | %s s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$what" "$how" "$wall" "$code" \
    "$(awk -v k="$rss" 'BEGIN{printf "%.1f MiB", k/1024}')" "$reqs" "$undeleted" "$left" "${why:-ok}" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$W/disrupted.md"
  log "fleet smoke over $n nodes, $what: ${why:-ok} ($(awk -v a="$t0" -v b="$tend" 'BEGIN{printf "%.1f s", b-a}'))"
}

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
    read -r undeleted left < <(pods_left)
    if [[ $undeleted != 0 || $left != 0 ]]; then
      log "fleet $mode over $n nodes left pods: $undeleted never deleted, $left there after 60 s"
      bad=1
      remove_left
    fi
    read -r wall user sys rss < <(tail -n 1 "$W/$n/$mode.time")
    reqs=$(sed -n 's/^crisp fleet: \([0-9]* requests: .*\)$/\1/p' "$W/$n/$mode.err")
    t=$(date +%s.%N)
    "$crisp" report "$W/$n/saved-$mode"/*.log >/dev/null 2>&1 || true
    merge=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f s", b-a}')
    printf '| %s | %s | %s s | %s | %s | %s | %s | %s | %s |\n' "$n" "$mode" "$wall" \
      "$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.1f s", u+s}')" "$(awk -v k="$rss" 'BEGIN{printf "%.1f MiB", k/1024}')" "$reqs" "$left" "$merge" "$load"
  done
  if [[ ${FLEET_SCALE_DISRUPT:-1} == 1 ]]; then
    for what in sigint sigterm apiserver; do
      if [[ $what == apiserver && ! -f $CRISP_K8S_DIR/pids/kube-apiserver.pid ]]; then
        log "no kube-apiserver PID under $CRISP_K8S_DIR/pids (not a scripts/k8s/up.sh cluster): no restart"
        continue
      fi
      disrupt "$n" "$what"
    done
  fi
  kill "$kwok_pid" 2>/dev/null || true
  wait "$kwok_pid" 2>/dev/null || true
  kwok_pid=
  $K delete pods -n "$NS" --all --force --grace-period=0 >/dev/null 2>&1 || true
  # 1000 nodes take kubectl's client rate limit past 2 min at times: the
  # figures are in, and the next size (or down.sh) removes what is left.
  $K delete nodes -l type=kwok --wait=true --timeout=5m >/dev/null 2>&1 || log "kwok's $n nodes not all deleted yet"
done
if [[ -s $W/disrupted.md ]]; then
  printf '\n| nodes | case | disruption | wall | exit | peak RSS | requests | pods not deleted | pods left after 60 s | result | load (1, 5, 15 min) |\n'
  printf '| ---: | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- | --- |\n'
  cat "$W/disrupted.md"
fi
[[ $bad == 0 ]] || { log "a correctness check failed (see above)"; exit 1; }
