# Shared settings of the crisp CRI-O harness (sourced, not run). Everything
# lives under CRISP_CRIO_DIR (short: unix socket paths are <= 108 bytes).
CRISP_CRIO_DIR=${CRISP_CRIO_DIR:-/tmp/crisp-crio}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CRICTL=${CRICTL:-$REPO/.tools/bin/crictl}
# crio and pinns: scripts/crio/build.sh links them here.
CRIO_BIN_DIR=${CRISP_CRIO_BIN_DIR:-$REPO/.tools/crio/bin}
SOCK=$CRISP_CRIO_DIR/crio.sock
ENDPOINT=unix://$SOCK
PIDFILE=$CRISP_CRIO_DIR/crio.pid
REG_PIDFILE=$CRISP_CRIO_DIR/registry.pid
ENVFILE=$CRISP_CRIO_DIR/env
LOGFILE=$CRISP_CRIO_DIR/crio.log
RUNC_ROOT=$CRISP_CRIO_DIR/runc
# The pods' bridge and /24 (see scripts/containerd-up.sh: the harness puts the
# gateway address on the bridge, so the CNI plugin never touches ip_forward).
BRIDGE=${CRISP_CRIO_BRIDGE:-crispcrio0}
NET_PREFIX=${CRISP_CRIO_NET_PREFIX:-10.213.84}
CGROUP_PARENT=/$(basename "$CRISP_CRIO_DIR")
# The same image names as the containerd harness: registries.conf maps each
# name's registry onto the local registry (crisp.local/busybox:1 is pulled
# from 127.0.0.1:PORT/crisp.local/busybox:1).
BUSYBOX_IMAGE=crisp.local/busybox:1
HTTPD_IMAGE=crisp.local/httpd:1
PAUSE_IMAGE=crisp.local/pause:1
HTTPD_PORT=8080

log() { echo "crio-harness: $*" >&2; }
CRICTL_CONFIG=$CRISP_CRIO_DIR/crictl.yaml
crictl_() { "$CRICTL" --config "$CRICTL_CONFIG" "$@"; }
write_crictl_config() {
  printf 'runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: 30\n' "$ENDPOINT" "$ENDPOINT" >"$CRICTL_CONFIG"
}
# alive PID NAME: whether PID is a running NAME (not a recycled PID, nor a zombie).
alive() {
  [[ -n "${1:-}" ]] && [[ "$(cat "/proc/$1/comm" 2>/dev/null)" == "$2" ]] &&
    [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]]
}
