# Shared settings of the crisp containerd harness (sourced, not run).
# Everything lives under CRISP_CTRD_DIR (short: unix socket paths are <= 108 bytes).
CRISP_CTRD_DIR=${CRISP_CTRD_DIR:-/tmp/crisp-ctrd}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CRICTL=${CRICTL:-$REPO/.tools/bin/crictl}
# Which containerd: CRISP_CTRD_BIN_DIR, when set, is a folder holding another
# containerd and its containerd-shim-runc-v2 (containerd 2.x, built by
# scripts/deps.sh into .tools/containerd2/bin), put first in PATH so that
# containerd starts its own shim; unset, Debian's containerd 1.6 runs.
if [[ -n ${CRISP_CTRD_BIN_DIR:-} ]]; then
  PATH=$CRISP_CTRD_BIN_DIR:$PATH
  export PATH
fi
SOCK=$CRISP_CTRD_DIR/containerd.sock
ENDPOINT=unix://$SOCK
PIDFILE=$CRISP_CTRD_DIR/containerd.pid
ENVFILE=$CRISP_CTRD_DIR/env
LOGFILE=$CRISP_CTRD_DIR/containerd.log
RUNC_ROOT=$CRISP_CTRD_DIR/runc
# The pods' bridge: a private /24 whose gateway address the harness puts on the
# bridge itself, so the CNI bridge plugin never touches the host's ip_forward.
BRIDGE=${CRISP_CTRD_BRIDGE:-crisp0}
NET_PREFIX=${CRISP_CTRD_NET_PREFIX:-10.213.77}
# Pods' cgroup parent: one per harness folder, so containerd-down.sh can kill
# what is left of this harness only.
CGROUP_PARENT=/$(basename "$CRISP_CTRD_DIR")
# Images imported offline (no registry is reachable).
BUSYBOX_IMAGE=crisp.local/busybox:1
HTTPD_IMAGE=crisp.local/httpd:1
PAUSE_IMAGE=crisp.local/pause:1
CRITEST_BUSYBOX_IMAGE=registry.k8s.io/e2e-test-images/busybox:1.29-2
CRITEST_WEBSERVER_IMAGE=registry.k8s.io/e2e-test-images/nginx:1.14-2
# critest's host-network web server (port 12003), named with the host's arch.
case $(uname -m) in
  x86_64) ARCH=amd64 ;; aarch64) ARCH=arm64 ;; *) ARCH=$(uname -m) ;;
esac
CRITEST_HOSTNET_WEBSERVER_IMAGE=gcr.io/k8s-staging-cri-tools/hostnet-nginx-$ARCH:latest
HTTPD_PORT=8080

log() { echo "containerd-harness: $*" >&2; }
CRICTL_CONFIG=$CRISP_CTRD_DIR/crictl.yaml
# crictl_ ARGS: crictl against this harness (the config file keeps crictl from
# looking for /etc/crictl.yaml and warning about it).
crictl_() { "$CRICTL" --config "$CRICTL_CONFIG" "$@"; }
write_crictl_config() {
  printf 'runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: 30\n' "$ENDPOINT" "$ENDPOINT" >"$CRICTL_CONFIG"
}
# alive PID: whether PID is a running containerd (not a recycled PID).
# A zombie (state Z: exited, not yet reaped by whoever adopted it) is not alive.
alive() {
  [[ -n "${1:-}" ]] && [[ "$(cat "/proc/$1/comm" 2>/dev/null)" == containerd ]] &&
    [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]]
}
