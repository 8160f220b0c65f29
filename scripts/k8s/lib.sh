# Shared settings of the crisp Kubernetes harness (sourced, not run).
# A throwaway two-node cluster: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and two kubelets, every file under K8S_DIR: one kubelet on its
# own containerd under CTRD_DIR (scripts/containerd-up.sh without its test
# pods), one on its own CRI-O under CRIO_DIR (scripts/crio/up.sh without its
# test pods; CRISP_K8S_CRIO=0 leaves that node out). Both nodes share this
# machine's network: host-network pods of the two see each other's ports.
# Paths stay short: unix socket paths are limited to 108 bytes.
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
K8S_DIR=${CRISP_K8S_DIR:-/tmp/crisp-k8s}
# The kubelet's containerd. Never a runtime other tests use: the kubelet
# removes every runtime pod it did not create.
CTRD_DIR=${CRISP_K8S_CTRD_DIR:-$K8S_DIR-ctrd}
K8S_BIN=${CRISP_K8S_BIN:-$REPO/.tools/k8s/bin}
CRICTL=${CRICTL:-$REPO/.tools/bin/crictl}
# The pods' bridge (for pods without host networking) and the service range
# (virtual: no kube-proxy runs, nothing routes it).
BRIDGE=${CRISP_K8S_BRIDGE:-crispk8s0}
NET_PREFIX=${CRISP_K8S_NET_PREFIX:-10.213.86}
SERVICE_CIDR=${CRISP_K8S_SERVICE_CIDR:-10.213.87.0/24}
NODE_NAME=${CRISP_K8S_NODE_NAME:-crisp-node}
# The second node: its kubelet's CRI-O, the CRI-O pods' bridge and /24, and
# the node's name. It is tainted crisp.dev/runtime=crio:NoSchedule, so that
# only pods that tolerate it (deploy/'s manifests, crisp fleet's, pinned by
# nodeName) run there.
CRIO_NODE=${CRISP_K8S_CRIO:-1}
CRIO_DIR=${CRISP_K8S_CRIO_DIR:-$K8S_DIR-crio}
CRIO_BRIDGE=${CRISP_K8S_CRIO_BRIDGE:-crispk8s1}
CRIO_NET_PREFIX=${CRISP_K8S_CRIO_NET_PREFIX:-10.213.88}
CRIO_NODE_NAME=${CRISP_K8S_CRIO_NODE_NAME:-crisp-node-crio}
ENVFILE=$K8S_DIR/env
# The sysctls the kubelet sets at every start (it wants vm.overcommit_memory
# 1, kernel.panic 10, kernel.panic_on_oops 1): up.sh saves them, down.sh puts
# them back.
KUBELET_SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops)
SYSCTL_SAVED=$K8S_DIR/sysctl.saved
IPTABLES_OURS=$K8S_DIR/iptables.ours
# Components in start order; down.sh stops them in reverse. kubelet-crio is
# the second node's kubelet (the binary is kubelet).
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubelet-crio)

log() { echo "k8s-harness: $*" >&2; }
pidfile() { echo "$K8S_DIR/pids/$1.pid"; }
# alive NAME: whether NAME's recorded PID is a running NAME (not a recycled
# PID, not a zombie). /proc/PID/comm is cut at 15 characters.
alive() {
  local pid comm=${1%-crio}
  pid=$(cat "$(pidfile "$1")" 2>/dev/null) || return 1
  [[ -n $pid && "$(cat "/proc/$pid/comm" 2>/dev/null)" == "${comm:0:15}" ]] &&
    [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]]
}
# ctrd_env: the environment of containerd-up.sh / containerd-down.sh for the
# kubelet's containerd.
ctrd_env() {
  echo CRISP_CTRD_DIR="$CTRD_DIR" CRISP_CTRD_BRIDGE="$BRIDGE" CRISP_CTRD_NET_PREFIX="$NET_PREFIX" \
    CRISP_CTRD_NO_PODS=1 CRICTL="$CRICTL"
}
# crio_env: the environment of scripts/crio/up.sh and down.sh for the second
# node's CRI-O: no test pods, short image names resolved through docker.io (as
# containerd does), its own folder and bridge.
crio_env() {
  echo CRISP_CRIO_DIR="$CRIO_DIR" CRISP_CRIO_BRIDGE="$CRIO_BRIDGE" CRISP_CRIO_NET_PREFIX="$CRIO_NET_PREFIX" \
    CRISP_CRIO_NO_PODS=1 CRISP_CRIO_SEARCH_REGISTRIES='"docker.io"' CRICTL="$CRICTL"
}
