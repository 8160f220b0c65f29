#!/usr/bin/env bash
# Stops what scripts/crio/up.sh started and removes its state, best effort and
# idempotent: removes the pods (CRI, while crio runs: CNI DEL, namespaces),
# stops crio and the local registry by the PIDs in their pid files, kills
# leftover conmons (those whose command line names this harness's folder) and
# container processes (runc root and cgroup of this harness), unmounts
# everything under CRISP_CRIO_DIR, deletes the pods' bridge and the folder.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../harness.sh"
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

# Containers runc still knows, processes in the harness's cgroups, mounts
# under the folder.
reap_leftovers "$RUNC_ROOT" "$CGROUP_PARENT" "$D"

if [[ -f "$D/bridge" ]]; then
  br=$(cat "$D/bridge")
  ip link show "$br" >/dev/null 2>&1 && ip link del "$br" 2>/dev/null
fi

if [[ -n "$D" && "$D" == /* && -e "$D" ]]; then
  rm -rf "$D" 2>/dev/null || { sleep 0.5; rm -rf "$D"; } || log "could not remove $D"
fi
log "down"
exit 0
