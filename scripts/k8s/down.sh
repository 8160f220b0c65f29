#!/usr/bin/env bash
# Stops what scripts/k8s/up.sh started and removes its state, best effort and
# idempotent: the kubelets first (so that they restart nothing), the control
# plane by the PIDs in its pid files, then the first kubelet's containerd with
# scripts/containerd-down.sh (pods, shims, cgroups, mounts, bridge) and the
# second's CRI-O with scripts/crio/down.sh (pods, conmons, registry); unmounts
# what the kubelet mounted under CRISP_K8S_DIR, puts back the host sysctls the
# kubelet changed and the iptables chains it added, and removes the folder.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
D=$K8S_DIR

[[ $(id -u) -eq 0 ]] || { log "needs root"; exit 2; }

# stop NAME: TERM, up to 10 s, then KILL.
stop() {
  alive "$1" || return 0
  local pid
  pid=$(cat "$(pidfile "$1")")
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 100); do
    alive "$1" || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
}
for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
  stop "${COMPONENTS[i]}"
done

# shellcheck disable=SC2046
env $(ctrd_env) bash "$REPO/scripts/containerd-down.sh"
if [[ -e $CRIO_DIR ]]; then
  # shellcheck disable=SC2046
  env $(crio_env) bash "$REPO/scripts/crio/down.sh"
fi

# The kubelet's volumes (projected, empty dirs), deepest first.
if [[ -n $D && $D == /* ]]; then
  for _ in 1 2 3; do
    mnts=$(awk -v d="$D/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
    [[ -z $mnts ]] && break
    for m in $mnts; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
  done
fi

if [[ -f $SYSCTL_SAVED ]]; then
  while IFS== read -r name value; do
    [[ -n $name ]] && sysctl -q -w "$name=$value" >/dev/null
  done <"$SYSCTL_SAVED"
fi

# The kubelet's iptables chains, when this harness's kubelet made them.
if [[ -f $IPTABLES_OURS ]]; then
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for hook in INPUT OUTPUT; do
      while "$ipt" -D "$hook" -j KUBE-FIREWALL 2>/dev/null; do :; done
    done
    for t in filter nat mangle; do
      for chain in KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT; do
        "$ipt" -t "$t" -F "$chain" 2>/dev/null && "$ipt" -t "$t" -X "$chain" 2>/dev/null
      done
    done
  done
fi

if [[ -n $D && $D == /* && -e $D ]]; then
  rm -rf "$D" 2>/dev/null || { sleep 0.5; rm -rf "$D"; } || log "could not remove $D"
fi
log "down"
exit 0
