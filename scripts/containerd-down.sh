#!/usr/bin/env bash
# Stops what containerd-up.sh started and removes its state, best effort and
# idempotent: removes the pods (CRI), stops containerd by the PID in its pid
# file, kills leftover shims (those serving this harness's socket) and container
# processes (runc root and cgroup of this harness), unmounts everything under
# CRISP_CTRD_DIR, deletes the pods' bridge and the folder.
set -uo pipefail
. "$(dirname "$0")/containerd/lib.sh"
. "$(dirname "$0")/harness.sh"
D=$CRISP_CTRD_DIR

if [[ $(id -u) -ne 0 ]]; then
  log "needs root"
  exit 2
fi

# Tasks and sandboxes of this harness: their shim sockets and CNI result
# caches live outside the folder (/run/containerd/s, /var/lib/cni/results).
ids=$(ls "$D/state/io.containerd.runtime.v2.task/k8s.io" "$D/root/io.containerd.grpc.v1.cri/sandboxes" 2>/dev/null |
  grep -E '^[0-9a-f]{64}$' | sort -u)

pid=$(cat "$PIDFILE" 2>/dev/null || true)
if alive "$pid"; then
  # Let containerd tear pods down itself (CNI DEL, netns, shims) while it can.
  if [[ -x "$CRICTL" ]]; then
    [[ -f "$CRICTL_CONFIG" ]] || write_crictl_config 2>/dev/null
    timeout -s KILL 30 "$CRICTL" --config "$CRICTL_CONFIG" --timeout 10s rmp -fa >/dev/null 2>&1 || true
  fi
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 100); do
    alive "$pid" || break
    sleep 0.1
  done
  alive "$pid" && kill -KILL "$pid" 2>/dev/null
fi

# Shims started for this socket (they outlive containerd by design).
for p in /proc/[0-9]*; do
  cmd=$( { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue
  if [[ "$cmd" == *containerd-shim* && "$cmd" == *"-address $SOCK "* ]]; then
    kill -KILL "${p#/proc/}" 2>/dev/null
  fi
done

# Containers runc still knows, processes in the harness's cgroups, mounts
# under the folder.
reap_leftovers "$RUNC_ROOT" "$CGROUP_PARENT" "$D"

# What the killed shims and the skipped CNI DEL left outside the folder
# (containerd 1.6 and 2.x name a shim's socket by the SHA-256 of address/namespace/id).
for id in $ids; do
  sum=$(printf '%s' "$SOCK/k8s.io/$id" | sha256sum | cut -d' ' -f1)
  rm -f "/run/containerd/s/$sum" /var/lib/cni/results/*-"$id"-*
done

# The bridge only if this harness created it (another one may be using it).
if [[ -f "$D/bridge" ]]; then
  br=$(cat "$D/bridge")
  ip link show "$br" >/dev/null 2>&1 && ip link del "$br" 2>/dev/null
fi

if [[ -n "$D" && "$D" == /* && -e "$D" ]]; then
  rm -rf "$D" 2>/dev/null || { sleep 0.5; rm -rf "$D"; } || log "could not remove $D"
fi
log "down"
exit 0
