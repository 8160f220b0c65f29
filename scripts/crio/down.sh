#!/usr/bin/env bash
# Stops what scripts/crio/up.sh started and removes its state, best effort and
# idempotent: removes the pods (CRI, while crio runs: CNI DEL, namespaces),
# stops crio and the local registry by the PIDs in their pid files, kills
# leftover conmons (those whose command line names this harness's folder) and
# container processes (runc root and cgroup of this harness), unmounts
# everything under CRISP_CRIO_DIR, deletes the pods' bridge and the folder.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
D=$CRISP_CRIO_DIR

if [[ $(id -u) -ne 0 ]]; then
  log "needs root"
  exit 2
fi

# stop PID NAME: TERM, up to 10 s, then KILL.
stop() {
  alive "$1" "$2" || return 0
  kill -TERM "$1" 2>/dev/null
  for _ in $(seq 1 100); do
    alive "$1" "$2" || return 0
    sleep 0.1
  done
  kill -KILL "$1" 2>/dev/null
}

pid=$(cat "$PIDFILE" 2>/dev/null || true)
if alive "$pid" crio; then
  if [[ -x "$CRICTL" ]]; then
    [[ -f "$CRICTL_CONFIG" ]] || write_crictl_config 2>/dev/null
    timeout -s KILL 30 "$CRICTL" --config "$CRICTL_CONFIG" --timeout 10s rmp -fa >/dev/null 2>&1 || true
  fi
  stop "$pid" crio
fi
stop "$(cat "$REG_PIDFILE" 2>/dev/null || true)" docker-registry

# conmons of this harness (they outlive crio by design): their command lines
# name bundles and sockets under the folder.
if [[ -n "$D" && "$D" == /* ]]; then
  for p in /proc/[0-9]*; do
    [[ "$(cat "$p/comm" 2>/dev/null)" == conmon ]] || continue
    cmd=$( { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue
    [[ "$cmd" == *" $D/"* ]] && kill -KILL "${p#/proc/}" 2>/dev/null
  done
fi

if [[ -d "$RUNC_ROOT" ]] && command -v runc >/dev/null; then
  for id in $(runc --root "$RUNC_ROOT" list -q 2>/dev/null); do
    runc --root "$RUNC_ROOT" kill --all "$id" KILL >/dev/null 2>&1
    runc --root "$RUNC_ROOT" delete -f "$id" >/dev/null 2>&1
  done
fi

cgdirs=()
for c in /sys/fs/cgroup/*"$CGROUP_PARENT" /sys/fs/cgroup"$CGROUP_PARENT"; do
  [[ -d "$c" ]] && cgdirs+=("$c")
done
if ((${#cgdirs[@]})); then
  for _ in 1 2 3; do
    pids=$(find "${cgdirs[@]}" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
    [[ -z "$pids" ]] && break
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null
    sleep 0.2
  done
  find "${cgdirs[@]}" -depth -type d -exec rmdir {} \; 2>/dev/null
fi

# Mounts under the folder (overlays, shm, pinned namespaces), deepest first.
if [[ -n "$D" && "$D" == /* ]]; then
  for _ in 1 2 3; do
    mnts=$(awk -v d="$D/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
    [[ -z "$mnts" ]] && break
    for m in $mnts; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
  done
fi

if [[ -f "$D/bridge" ]]; then
  br=$(cat "$D/bridge")
  ip link show "$br" >/dev/null 2>&1 && ip link del "$br" 2>/dev/null
fi

if [[ -n "$D" && "$D" == /* && -e "$D" ]]; then
  rm -rf "$D" 2>/dev/null || { sleep 0.5; rm -rf "$D"; } || log "could not remove $D"
fi
log "down"
exit 0
