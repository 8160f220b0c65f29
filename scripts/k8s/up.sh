#!/usr/bin/env bash
# Starts a throwaway two-node Kubernetes on this machine for crisp's kubelet
# end-to-end tests (internal/e2e/kubelet), everything under CRISP_K8S_DIR
# (default /tmp/crisp-k8s):
#   - the first kubelet's own containerd (scripts/containerd-up.sh without its
#     test pods, under /tmp/crisp-k8s-ctrd): the kubelet removes every runtime
#     pod it did not create, so it must never share a runtime other tests use;
#   - the second kubelet (node crisp-node-crio, its own root dir, ports,
#     config and log folder) on its own CRI-O (scripts/crio/up.sh without its
#     test pods, under /tmp/crisp-k8s-crio, with the images below pushed into
#     its local registry), tainted crisp.dev/runtime=crio:NoSchedule so that
#     only pods that tolerate it go there; CRISP_K8S_CRIO=0 leaves it out.
#     Both nodes carry kubeadm's cri-socket annotation and the label
#     crisp.dev/runtime, and share this machine's network;
#   - etcd (--unsafe-no-fsync), kube-apiserver (static tokens, Node+RBAC,
#     certificates from a CA made here with openssl), kube-controller-manager,
#     kube-scheduler and the kubelet, started in the background and stopped by
#     PID (down.sh); every listening port is picked free at start, so nothing
#     here needs a fixed host port (the tests queue on a lock file for the
#     folder, the bridge and the node's hostNetwork pods);
#   - images for the manifests in deploy/, offline: crisp's own image (`make
#     image`, or the tarball CRISP_K8S_CRISP_IMAGE_TAR names), and the harness's
#     busybox and pause images tagged as docker.io/library/busybox:1.36 and
#     registry.k8s.io/pause:3.10.
# The kubelet rewrites host sysctls at every start: they are saved first and
# put back by down.sh (also when this script fails). Writes $CRISP_K8S_DIR/env
# (kubeconfig, node name, CRI socket, binaries) and prints its path.
# Needs root and what scripts/deps.sh installs and builds (the Kubernetes
# binaries in .tools/k8s/bin). No kube-proxy and no CNI add-on: the tests use
# host-network pods; containerd's own CNI config serves the rest.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

t0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1fs", b-a}'; }

[[ $(id -u) -eq 0 ]] || { log "needs root (containerd, the kubelet, mounts)"; exit 2; }
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
  [[ -x $K8S_BIN/$b ]] || { log "missing $K8S_BIN/$b: run scripts/deps.sh (it runs scripts/k8s/build.sh)"; exit 2; }
done
for cmd in openssl ss ip; do
  command -v "$cmd" >/dev/null || { log "missing $cmd: run scripts/deps.sh"; exit 2; }
done

if [[ -e $K8S_DIR || -e $CTRD_DIR || -e $CRIO_DIR ]]; then
  log "cleaning up a stale $K8S_DIR"
  bash "$(dirname "$0")/down.sh"
fi
D=$K8S_DIR
mkdir -p "$D"/{pids,logs,pki,kubelet,pod-logs}
chmod 700 "$D"

ok=false
cleanup() {
  if ! $ok; then
    log "failed; log tails under $D/logs:"
    for c in "${COMPONENTS[@]}"; do
      [[ -f $D/logs/$c.log ]] && { echo "--- $c" >&2; tail -n 15 "$D/logs/$c.log" >&2; }
    done
    [[ ${CRISP_K8S_KEEP_ON_FAILURE:-} == 1 ]] || bash "$(dirname "$0")/down.sh" || true
  fi
}
trap cleanup EXIT

# The node's address: the kubelet rejects a loopback node IP, and the API
# server reaches the kubelet there (InternalIP).
NODE_IP=${CRISP_K8S_NODE_IP:-$(ip -4 -o addr show scope global |
  awk '$2 !~ /^(crisp|cni|veth|docker|br-)/ { sub(/\/.*/, "", $4); print $4; exit }')}
[[ -n $NODE_IP ]] || { log "no non-loopback IPv4 address on this machine (set CRISP_K8S_NODE_IP)"; exit 1; }

# free_port VAR: sets VAR to a TCP port nothing listens on and not handed out
# before here. (Not $(free_port): a subshell repeats the parent's $RANDOM and
# forgets what was handed out.)
taken=" "
free_port() {
  local p
  for _ in $(seq 1 200); do
    # Below the kernel's ephemeral range (32768 and up here): a port it
    # hands to some outgoing connection between this check and the bind
    # failed a start with two make test at once.
    p=$((20000 + RANDOM % 12000))
    [[ $taken == *" $p "* ]] && continue
    if [[ -z $(ss -Hltn "sport = :$p" 2>/dev/null) ]]; then
      taken+="$p "
      printf -v "$1" %s "$p"
      return
    fi
  done
  log "no free port found"
  return 1
}
free_port ETCD_PORT
free_port ETCD_PEER_PORT
free_port API_PORT
free_port KUBELET_PORT
free_port KUBELET_HEALTHZ_PORT
free_port KUBELET2_PORT
free_port KUBELET2_HEALTHZ_PORT

# --- certificates and tokens ----------------------------------------------------
t=$(date +%s.%N)
P=$D/pki
key() { openssl ecparam -name prime256v1 -genkey -noout -out "$P/$1.key" 2>/dev/null; }
# cert NAME SUBJECT EXTENSIONS: NAME.crt signed by the CA.
cert() {
  key "$1"
  openssl req -new -key "$P/$1.key" -subj "$2" -out "$P/$1.csr" 2>/dev/null
  printf '%b' "$3" >"$P/$1.ext"
  openssl x509 -req -in "$P/$1.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
    -days 2 -extfile "$P/$1.ext" -out "$P/$1.crt" 2>/dev/null
}
key ca
openssl req -x509 -new -key "$P/ca.key" -subj /CN=crisp-k8s-ca -days 2 -out "$P/ca.crt" 2>/dev/null
svc_ip=${SERVICE_CIDR%.*}.1
cert apiserver /CN=kube-apiserver \
  "subjectAltName=IP:127.0.0.1,IP:$NODE_IP,IP:$svc_ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n"
# The API server's client certificate towards the kubelet (exec, logs,
# port-forward go through it).
cert kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth\n"
key sa
openssl ec -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null
token() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
ADMIN_TOKEN=$(token)
KCM_TOKEN=$(token)
SCHED_TOKEN=$(token)
NODE_TOKEN=$(token)
NODE2_TOKEN=$(token)
cat >"$P/tokens.csv" <<CSV
$ADMIN_TOKEN,crisp-admin,crisp-admin,"system:masters"
$KCM_TOKEN,system:kube-controller-manager,system:kube-controller-manager
$SCHED_TOKEN,system:kube-scheduler,system:kube-scheduler
$NODE_TOKEN,system:node:$NODE_NAME,system:node:$NODE_NAME,"system:nodes"
$NODE2_TOKEN,system:node:$CRIO_NODE_NAME,system:node:$CRIO_NODE_NAME,"system:nodes"
CSV
chmod 600 "$P"/*.key "$P/tokens.csv"
# kubeconfig NAME TOKEN: $D/NAME.kubeconfig for the API server on loopback.
kubeconfig() {
  cat >"$D/$1.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: crisp-k8s
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $P/ca.crt
users:
- name: $1
  user:
    token: $2
contexts:
- name: crisp-k8s
  context: {cluster: crisp-k8s, user: $1}
current-context: crisp-k8s
YAML
  chmod 600 "$D/$1.kubeconfig"
}
kubeconfig admin "$ADMIN_TOKEN"
kubeconfig controller-manager "$KCM_TOKEN"
kubeconfig scheduler "$SCHED_TOKEN"
kubeconfig kubelet "$NODE_TOKEN"
kubeconfig kubelet-crio "$NODE2_TOKEN"
t_pki=$(elapsed "$t")

# --- the kubelet's containerd ---------------------------------------------------
t=$(date +%s.%N)
# shellcheck disable=SC2046
env $(ctrd_env) bash "$REPO/scripts/containerd-up.sh" >/dev/null
# shellcheck disable=SC1091
. "$CTRD_DIR/env"
ctr_() { ctr -a "$CTRD_DIR/containerd.sock" -n k8s.io "$@"; }
# The names deploy/ uses, on the harness's offline images.
BUSYBOX_IMAGE=docker.io/library/busybox:1.36
PAUSE_IMAGE=registry.k8s.io/pause:3.10
ctr_ images tag --force "$CRISP_CTRD_BUSYBOX_IMAGE" "$BUSYBOX_IMAGE" >/dev/null
ctr_ images tag --force "$CRISP_CTRD_PAUSE_IMAGE" "$PAUSE_IMAGE" >/dev/null
tar=${CRISP_K8S_CRISP_IMAGE_TAR:-}
if [[ -z $tar ]]; then
  tar=$D/crisp-image.tar
  make -s -C "$REPO" --no-print-directory image IMAGE_TAR="$tar" >&2
fi
ctr_ images import "$tar" >/dev/null
CRISP_IMAGE=$(ctr_ images ls -q | awk '/^docker\.io\/library\/crisp:/ && !n++')
[[ -n $CRISP_IMAGE ]] || { log "$tar holds no docker.io/library/crisp image"; exit 1; }
t_ctrd=$(elapsed "$t")

# --- the second node's CRI-O, in the background while the control plane starts --
# CRI-O has no image import: the same three images go into its local registry
# (under the names registries.conf maps docker.io and registry.k8s.io to)
# from the containerd above, and CRI-O pulls them.
crio_up() {
  # shellcheck disable=SC2046
  env $(crio_env) bash "$REPO/scripts/crio/up.sh" >/dev/null || return
  local reg img
  reg=$(awk -F= '$1 == "CRISP_CRIO_REGISTRY" {print $2}' "$CRIO_DIR/env")
  for img in "$BUSYBOX_IMAGE" "$PAUSE_IMAGE" "$CRISP_IMAGE"; do
    ctr_ images tag --force "$img" "$reg/$img" >/dev/null &&
      ctr_ images push --plain-http "$reg/$img" >/dev/null &&
      ctr_ images rm "$reg/$img" >/dev/null &&
      "$CRICTL" --runtime-endpoint "unix://$CRIO_DIR/crio.sock" --image-endpoint "unix://$CRIO_DIR/crio.sock" pull "$img" >/dev/null ||
      { log "pushing $img into CRI-O's registry ($reg) and pulling it failed"; return 1; }
  done
}
if [[ $CRIO_NODE == 1 ]]; then
  t_crio0=$(date +%s.%N)
  crio_up >"$D/logs/crio-up.log" 2>&1 &
  crio_job=$!
fi

# start NAME ARGS...: NAME from K8S_BIN in the background, in its own session
# (setsid: it outlives this script; down.sh stops it by PID), logging to
# $D/logs/NAME.log. No registry is reachable and none may be contacted.
start() {
  local name=$1
  shift
  env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy \
    setsid "$K8S_BIN/${name%-crio}" "$@" </dev/null >>"$D/logs/$name.log" 2>&1 &
  echo $! >"$(pidfile "$name")"
}
# wait_for WHAT SECONDS NAME CMD...: polls CMD until it succeeds; fails when
# NAME has exited or time is up.
wait_for() {
  local what=$1 secs=$2 name=$3
  shift 3
  for _ in $(seq 1 $((secs * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    alive "$name" || { log "$name exited while waiting for $what"; return 1; }
    sleep 0.1
  done
  log "$what: not within ${secs}s"
  return 1
}
kubectl_() { "$K8S_BIN/kubectl" --kubeconfig "$D/admin.kubeconfig" "$@"; }

# --- control plane ----------------------------------------------------------------
t=$(date +%s.%N)
start etcd --name crisp-k8s --data-dir "$D/etcd" --unsafe-no-fsync \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "crisp-k8s=http://127.0.0.1:$ETCD_PEER_PORT" --log-level warn
start kube-apiserver --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 127.0.0.1 --secure-port "$API_PORT" --advertise-address "$NODE_IP" \
  --tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" --client-ca-file "$P/ca.crt" \
  --token-auth-file "$P/tokens.csv" --authorization-mode Node,RBAC --allow-privileged \
  --service-account-key-file "$P/sa.pub" --service-account-signing-key-file "$P/sa.key" \
  --service-account-issuer https://kubernetes.default.svc --service-cluster-ip-range "$SERVICE_CIDR" \
  --kubelet-client-certificate "$P/kubelet-client.crt" --kubelet-client-key "$P/kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP --enable-priority-and-fairness=false --profiling=false
wait_for "the API server's /readyz" 60 kube-apiserver kubectl_ get --raw /readyz
t_api=$(elapsed "$t")
start kube-controller-manager --kubeconfig "$D/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$D/controller-manager.kubeconfig" --authorization-kubeconfig "$D/controller-manager.kubeconfig" \
  --use-service-account-credentials --service-account-private-key-file "$P/sa.key" --root-ca-file "$P/ca.crt" \
  --leader-elect=false --secure-port 0 --profiling=false
start kube-scheduler --kubeconfig "$D/scheduler.kubeconfig" \
  --authentication-kubeconfig "$D/scheduler.kubeconfig" --authorization-kubeconfig "$D/scheduler.kubeconfig" \
  --leader-elect=false --secure-port 0 --profiling=false

# --- kubelets ---------------------------------------------------------------------
# kubelet_config FILE PORT HEALTHZ_PORT ENDPOINT CGROUP_ROOT POD_LOGS [TAINT]
kubelet_config() {
  cat >"$1" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $2
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $3
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $P/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: $4
# The host is cgroup v1, which the kubelet refuses by default; pods go under
# the runtime harness's cgroup parent, which its down script sweeps.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
cgroupRoot: $5
enforceNodeAllocatable: []
failSwapOn: false
# Root here lacks CAP_SYS_RESOURCE: no negative OOM score adjustments.
oomScoreAdj: 0
podLogsDir: $6
# Keep the imported images (nothing can be pulled back) and never evict on
# this machine's disk.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
YAML
  if [[ -n ${7:-} ]]; then
    printf 'registerWithTaints:\n- {key: crisp.dev/runtime, value: %s, effect: NoSchedule}\n' "$7" >>"$1"
  fi
}
kubelet_config "$D/kubelet.yaml" "$KUBELET_PORT" "$KUBELET_HEALTHZ_PORT" "unix://$CTRD_DIR/containerd.sock" \
  "/$(basename "$CTRD_DIR")" "$D/pod-logs"
for s in "${KUBELET_SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$SYSCTL_SAVED"
# The kubelet also adds iptables chains (KUBE-FIREWALL, hooked into INPUT and
# OUTPUT, and KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT): down.sh removes them
# unless they were there before (another kubelet on this host).
if ! iptables -S KUBE-FIREWALL >/dev/null 2>&1; then touch "$IPTABLES_OURS"; fi
t=$(date +%s.%N)
start kubelet --config "$D/kubelet.yaml" --kubeconfig "$D/kubelet.kubeconfig" \
  --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --root-dir "$D/kubelet" --cert-dir "$D/pki/kubelet" \
  --node-labels crisp.dev/runtime=containerd
# ready NODE
ready() {
  [[ $(kubectl_ get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]
}
if [[ $CRIO_NODE == 1 ]]; then
  if ! wait "$crio_job"; then
    log "the second node's CRI-O did not come up ($D/logs/crio-up.log):"
    tail -n 20 "$D/logs/crio-up.log" >&2
    exit 1
  fi
  t_crio=$(elapsed "$t_crio0")
  mkdir -p "$D/pod-logs-crio"
  kubelet_config "$D/kubelet-crio.yaml" "$KUBELET2_PORT" "$KUBELET2_HEALTHZ_PORT" "unix://$CRIO_DIR/crio.sock" \
    "/$(basename "$CRIO_DIR")" "$D/pod-logs-crio" crio
  start kubelet-crio --config "$D/kubelet-crio.yaml" --kubeconfig "$D/kubelet-crio.kubeconfig" \
    --hostname-override "$CRIO_NODE_NAME" --node-ip "$NODE_IP" --root-dir "$D/kubelet-crio" --cert-dir "$D/pki/kubelet-crio" \
    --node-labels crisp.dev/runtime=crio
fi
wait_for "node $NODE_NAME Ready" 90 kubelet ready "$NODE_NAME"
kubectl_ annotate node "$NODE_NAME" --overwrite "kubeadm.alpha.kubernetes.io/cri-socket=unix://$CTRD_DIR/containerd.sock" >/dev/null
if [[ $CRIO_NODE == 1 ]]; then
  wait_for "node $CRIO_NODE_NAME Ready" 90 kubelet-crio ready "$CRIO_NODE_NAME"
  kubectl_ annotate node "$CRIO_NODE_NAME" --overwrite "kubeadm.alpha.kubernetes.io/cri-socket=unix://$CRIO_DIR/crio.sock" >/dev/null
fi
# Pods are refused until their namespace's default service account exists.
wait_for "service account kube-system/default" 60 kube-controller-manager kubectl_ -n kube-system get serviceaccount default
wait_for "service account default/default" 30 kube-controller-manager kubectl_ -n default get serviceaccount default
t_node=$(elapsed "$t")

cat >"$ENVFILE.tmp" <<ENV
CRISP_K8S_DIR=$D
CRISP_K8S_KUBECONFIG=$D/admin.kubeconfig
CRISP_K8S_NODE_NAME=$NODE_NAME
CRISP_K8S_NODE_IP=$NODE_IP
CRISP_K8S_CRI_ENDPOINT=unix://$CTRD_DIR/containerd.sock
CRISP_K8S_CRI_SOCKET=$CTRD_DIR/containerd.sock
CRISP_K8S_BIN=$K8S_BIN
CRISP_K8S_KUBECTL=$K8S_BIN/kubectl
CRISP_K8S_API_SERVER=https://127.0.0.1:$API_PORT
CRISP_K8S_KUBELET_LOG=$D/logs/kubelet.log
CRISP_K8S_IMAGE_CRISP=$CRISP_IMAGE
CRISP_K8S_IMAGE_BUSYBOX=$BUSYBOX_IMAGE
CRISP_K8S_IMAGE_PAUSE=$PAUSE_IMAGE
CRISP_K8S_VERSION=$("$K8S_BIN/kubelet" --version | awk '{print $2}')
ENV
if [[ $CRIO_NODE == 1 ]]; then
  cat >>"$ENVFILE.tmp" <<ENV
CRISP_K8S_CRIO_NODE_NAME=$CRIO_NODE_NAME
CRISP_K8S_CRIO_CRI_ENDPOINT=unix://$CRIO_DIR/crio.sock
CRISP_K8S_CRIO_CRI_SOCKET=$CRIO_DIR/crio.sock
CRISP_K8S_CRIO_DIR=$CRIO_DIR
CRISP_K8S_CRIO_KUBELET_LOG=$D/logs/kubelet-crio.log
CRISP_K8S_CRIO_VERSION=$(awk -F= '$1 == "CRISP_CRIO_VERSION" {print $2}' "$CRIO_DIR/env")
ENV
fi
mv "$ENVFILE.tmp" "$ENVFILE"
ok=true
if [[ $CRIO_NODE == 1 ]]; then
  log "nodes $NODE_NAME (containerd) and $CRIO_NODE_NAME (CRI-O) Ready in $(elapsed "$t0") (certificates $t_pki, containerd and images $t_ctrd, CRI-O and its images $t_crio beside the API server $t_api, kubelets to Ready $t_node)"
else
  log "node $NODE_NAME Ready in $(elapsed "$t0") (certificates $t_pki, containerd and images $t_ctrd, API server $t_api, kubelet to Ready $t_node)"
fi
log "by hand: KUBECONFIG=$D/admin.kubeconfig $K8S_BIN/kubectl get pods -A"
echo "$ENVFILE"
