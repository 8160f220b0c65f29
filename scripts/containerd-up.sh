#!/usr/bin/env bash
# Starts containerd (Debian's 1.6, or the one in CRISP_CTRD_BIN_DIR: see
# containerd/lib.sh and containerd/v2-up.sh) in the background for crisp's
# end-to-end tests, with its own config, root, state, socket and CNI config
# under CRISP_CTRD_DIR (default /tmp/crisp-ctrd), imports offline-built
# busybox/httpd/pause images, and creates:
#   - pod crisp-bridge (own network namespace on the bridge BRIDGE, a private
#     /24): containers sleep, httpd (busybox httpd on HTTPD_PORT) and attach
#     (sh with stdin open);
#   - pod crisp-hostnet (host network): container sleep.
# Writes CRISP_CTRD_* variables to $CRISP_CTRD_DIR/env for tests to source.
# CRISP_CTRD_NO_PODS=1 leaves the pods out (the containerd under the kubelet of
# scripts/k8s/up.sh: the kubelet removes every pod it did not create).
# TLS mode: CRISP_CTRD_TLS_DIR=DIR holding server.crt, server.key (for 127.0.0.1)
# and ca.crt turns on enable_tls_streaming with that key pair (https streaming
# URLs); the env file then names the CA (CRISP_CTRD_TLS_CA). containerd/tls-up.sh
# makes such a folder and starts a second harness with it.
# Idempotent: when the harness is already up and answering, it only prints the
# env file's path. Needs root, containerd, runc, the CNI plugins, busybox-static,
# gcc and crictl (scripts/deps.sh installs them). Stop with containerd-down.sh.
set -euo pipefail
. "$(dirname "$0")/containerd/lib.sh"
. "$(dirname "$0")/harness.sh"

t0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2fs", b-a}'; }

if [[ $(id -u) -ne 0 ]]; then
  log "needs root (containerd, runc, mounts and network namespaces)"
  exit 2
fi
for cmd in containerd containerd-shim-runc-v2 ctr runc gcc ip; do
  command -v "$cmd" >/dev/null || { log "missing $cmd: run scripts/deps.sh (as root, with apt-get)"; exit 2; }
done
if [[ -n ${CRISP_CTRD_BIN_DIR:-} ]]; then
  for cmd in containerd containerd-shim-runc-v2; do
    [[ -x $CRISP_CTRD_BIN_DIR/$cmd ]] || { log "missing $CRISP_CTRD_BIN_DIR/$cmd: run scripts/deps.sh"; exit 2; }
  done
fi
# "containerd github.com/containerd/containerd/v2 2.4.2+unknown" -> 2.4.2+unknown
# (Debian's: "containerd github.com/containerd/containerd 1.6.20~ds1 ..." -> 1.6.20~ds1)
version=$(containerd --version | awk '{print $3}')
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] ||
  { log "missing CNI plugins in /usr/lib/cni: run scripts/deps.sh"; exit 2; }
[[ -x /bin/busybox ]] || { log "missing /bin/busybox (busybox-static): run scripts/deps.sh"; exit 2; }
[[ -x "$CRICTL" ]] || { log "missing crictl at $CRICTL: run scripts/deps.sh"; exit 2; }

# Already up?
if [[ -f "$PIDFILE" && -f "$ENVFILE" ]] && alive "$(cat "$PIDFILE")" && crictl_ version >/dev/null 2>&1; then
  log "already up (pid $(cat "$PIDFILE")); env: $ENVFILE"
  echo "$ENVFILE"
  exit 0
fi
# Leftovers of an earlier run (crashed, or killed without containerd-down).
if [[ -e "$CRISP_CTRD_DIR" ]]; then
  log "cleaning up a stale $CRISP_CTRD_DIR"
  bash "$(dirname "$0")/containerd-down.sh"
fi

D=$CRISP_CTRD_DIR
mkdir -p "$D"/{root,state,runc,cni/net.d,cni/ipam,logs,cfg,opt}
chmod 700 "$D"
write_crictl_config

# Any failure from here on leaves nothing running.
ok=false
cleanup() {
  if ! $ok; then
    log "failed; containerd log tail ($LOGFILE):"
    tail -n 30 "$LOGFILE" >&2 2>/dev/null || true
    if [[ "${CRISP_CTRD_KEEP_ON_FAILURE:-}" != 1 ]]; then
      bash "$(dirname "$0")/containerd-down.sh" || true
    fi
  fi
}
trap cleanup EXIT

# --- the pods' bridge -------------------------------------------------------
# Created here, with the gateway address on it, so the CNI bridge plugin runs
# with isGateway=false: it then leaves the host's ip_forward alone, and the host
# still reaches the pods' addresses on the directly connected /24.
# Two harnesses on one bridge would hand out the same addresses.
if ip link show "$BRIDGE" >/dev/null 2>&1; then
  log "the bridge $BRIDGE exists already (another harness? see ls -d /tmp/crisp*/env): give this one its own" \
    "CRISP_CTRD_DIR, CRISP_CTRD_BRIDGE and CRISP_CTRD_NET_PREFIX, or remove it (ip link del $BRIDGE)"
  exit 1
fi
if ip route show | grep -q "^$NET_PREFIX\.0/24 "; then
  log "$NET_PREFIX.0/24 is already routed on this host: set CRISP_CTRD_NET_PREFIX to a free private /24"
  exit 1
fi
ip link add "$BRIDGE" type bridge
echo "$BRIDGE" >"$D/bridge" # ours: containerd-down.sh deletes it
ip addr replace "$NET_PREFIX.1/24" dev "$BRIDGE"
ip link set "$BRIDGE" up

# The network is named after the harness folder, never a name another
# harness uses: CNI caches every attachment host-wide (/var/lib/cni/results,
# keyed by network name), and CRI-O, when it starts, garbage-collects every
# cached attachment of its networks' names that is not one of its pods (CNI
# DEL: the pod's interface is deleted). With one shared name, a CRI-O harness
# starting beside this one took the pods' interfaces away.
cat >"$D/cni/net.d/10-crisp.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$(basename "$D")",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$D/cni/ipam",
        "ranges": [[{"subnet": "$NET_PREFIX.0/24", "rangeStart": "$NET_PREFIX.10", "rangeEnd": "$NET_PREFIX.250", "gateway": "$NET_PREFIX.1"}]]
      }
    }
  ]
}
EOF

# --- containerd config --------------------------------------------------------
# A version-2 config (containerd 1.6's format): containerd 2.x migrates it at
# start-up, logging a warning, and runs with the same settings.
cat >"$D/config.toml" <<EOF
version = 2
root = "$D/root"
state = "$D/state"
oom_score = 0
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
  # containerd 2.x: NRI would listen on the host-wide /var/run/nri/nri.sock.
  "io.containerd.nri.v1.nri",
]

[grpc]
  address = "$SOCK"

[ttrpc]
  address = "$SOCK.ttrpc"

[debug]
  level = "info"

[plugins."io.containerd.internal.v1.opt"]
  path = "$D/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Root here lacks CAP_SYS_RESOURCE: without this every pod fails with runc's
  # "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  disable_apparmor = true
  disable_hugetlb_controller = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_tls_streaming = $([[ -n ${CRISP_CTRD_TLS_DIR:-} ]] && echo true || echo false)
  max_container_log_line_size = 16384

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$RUNC_ROOT"
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$D/cni/net.d"
    max_conf_num = 1
EOF
if [[ -n ${CRISP_CTRD_TLS_DIR:-} ]]; then # TLS mode (see the top)
  cat >>"$D/config.toml" <<EOF

[plugins."io.containerd.grpc.v1.cri".x509_key_pair_streaming]
  tls_cert_file = "$CRISP_CTRD_TLS_DIR/server.crt"
  tls_key_file = "$CRISP_CTRD_TLS_DIR/server.key"
EOF
fi

# --- start containerd ---------------------------------------------------------
t=$(date +%s.%N)
# setsid: containerd (and the shims it starts) outlive this script and are not
# in the caller's process group; containerd-down.sh stops them by PID.
# No registry is reachable, and none may be contacted: a pull of an image that
# is not imported goes to a proxy on the loopback port 9 (nothing listens) and
# fails at once, without even a DNS look-up of the registry's name.
HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY= \
  http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 no_proxy= \
  setsid containerd --config "$D/config.toml" </dev/null >>"$LOGFILE" 2>&1 &
echo $! >"$PIDFILE"
pid=$(cat "$PIDFILE")
for _ in $(seq 1 300); do
  if ! kill -0 "$pid" 2>/dev/null; then
    log "containerd exited at start"
    exit 1
  fi
  crictl_ version >/dev/null 2>&1 && break
  sleep 0.1
done
crictl_ version >/dev/null || { log "containerd did not answer on $SOCK within 30s"; exit 1; }
t_start=$(elapsed "$t")

# --- images -------------------------------------------------------------------
t=$(date +%s.%N)
bash "$(dirname "$0")/containerd/mkimages.sh" "$D/images.tar"
ctr -a "$SOCK" -n k8s.io images import "$D/images.tar" >/dev/null
for img in "$BUSYBOX_IMAGE" "$HTTPD_IMAGE" "$PAUSE_IMAGE" "$CRITEST_BUSYBOX_IMAGE" \
  "$CRITEST_WEBSERVER_IMAGE" "$CRITEST_HOSTNET_WEBSERVER_IMAGE"; do
  crictl_ inspecti "$img" >/dev/null || { log "image $img is not visible to CRI after import"; exit 1; }
done
t_images=$(elapsed "$t")

if [[ ${CRISP_CTRD_NO_PODS:-} == 1 ]]; then
  cat >"$ENVFILE.tmp" <<EOF
CRISP_CTRD_DIR=$D
CRISP_CTRD_ENDPOINT=$ENDPOINT
CRISP_CTRD_VERSION=$version
CRISP_CTRD_PID=$pid
CRISP_CTRD_LOG=$LOGFILE
CRISP_CTRD_BUSYBOX_IMAGE=$BUSYBOX_IMAGE
CRISP_CTRD_PAUSE_IMAGE=$PAUSE_IMAGE
EOF
  mv "$ENVFILE.tmp" "$ENVFILE"
  ok=true
  log "containerd $version up in $(elapsed "$t0") without pods (containerd answering $t_start, images $t_images); pid $pid"
  echo "$ENVFILE"
  exit 0
fi

# --- pods and containers --------------------------------------------------------
start_fixture_pods

cat >"$ENVFILE.tmp" <<EOF
CRISP_CTRD_DIR=$D
CRISP_CTRD_ENDPOINT=$ENDPOINT
CRISP_CTRD_VERSION=$version
CRISP_CTRD_PID=$pid
CRISP_CTRD_LOG=$LOGFILE
CRISP_CTRD_POD=$pod
CRISP_CTRD_POD_IP=$pod_ip
CRISP_CTRD_CTR=$ctr
CRISP_CTRD_HTTPD_CTR=$httpd
CRISP_CTRD_HTTPD_PORT=$HTTPD_PORT
CRISP_CTRD_ATTACH_CTR=$attach
CRISP_CTRD_HOSTNET_POD=$hpod
CRISP_CTRD_HOSTNET_CTR=$hctr
CRISP_CTRD_BUSYBOX_IMAGE=$BUSYBOX_IMAGE
CRISP_CTRD_HTTPD_IMAGE=$HTTPD_IMAGE
CRISP_CTRD_POD_CONFIG=$pod_cfg
CRISP_CTRD_HOSTNET_POD_CONFIG=$hpod_cfg
EOF
[[ -n ${CRISP_CTRD_TLS_DIR:-} ]] && echo "CRISP_CTRD_TLS_CA=$CRISP_CTRD_TLS_DIR/ca.crt" >>"$ENVFILE.tmp"
mv "$ENVFILE.tmp" "$ENVFILE"
ok=true
log "containerd $version up in $(elapsed "$t0") (containerd answering $t_start, images $t_images, pods $t_pods); pid $pid"
log "env: $ENVFILE; by hand: CONTAINER_RUNTIME_ENDPOINT=$ENDPOINT $CRICTL ps"
echo "$ENVFILE"
