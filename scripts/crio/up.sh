#!/usr/bin/env bash
# Starts CRI-O (built by scripts/crio/build.sh) in the background for crisp's
# end-to-end tests, with everything under CRISP_CRIO_DIR (default
# /tmp/crisp-crio): its config file and drop-in folder, storage root and
# runroot, logs, version files, socket, runc root, CNI config, registries.conf,
# storage.conf, policy.json and HOME. Beside it, a local docker-registry on
# 127.0.0.1 (a port the kernel picks, so two harnesses never collide) holding
# the containerd harness's test images (busybox, httpd, pause): CRI-O only
# pulls, and registries.conf maps their names onto that registry. Creates the
# same pods and containers as scripts/containerd-up.sh:
#   - pod crisp-bridge (own network namespace on BRIDGE, a private /24):
#     containers sleep, httpd (busybox httpd on HTTPD_PORT) and attach (sh
#     with stdin open);
#   - pod crisp-hostnet (host network): container sleep.
# Writes CRISP_CRIO_* variables to $CRISP_CRIO_DIR/env for tests to source.
# Variables: CRISP_CRIO_DIR, CRISP_CRIO_BRIDGE (default crispcrio0),
# CRISP_CRIO_NET_PREFIX (default 10.213.84), CRISP_CRIO_BIN_DIR (crio and
# pinns; default .tools/crio/bin), CRICTL. For the CRI-O under the second
# kubelet of scripts/k8s/up.sh: CRISP_CRIO_NO_PODS=1 leaves the pods out (the
# kubelet removes every pod it did not create), and
# CRISP_CRIO_SEARCH_REGISTRIES='"docker.io"' resolves short image names
# (busybox:1.36 in deploy/) through that registry, as containerd does.
# Idempotent: when the harness is up and answering, it only prints the env
# file's path. Needs root, conmon, runc, docker-registry, the CNI plugins,
# busybox-static and gcc (scripts/deps.sh installs them). Stop with down.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../harness.sh"

t0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2fs", b-a}'; }

if [[ $(id -u) -ne 0 ]]; then
  log "needs root (runc, mounts and network namespaces)"
  exit 2
fi
for cmd in conmon runc docker-registry gcc ip ss go; do
  command -v "$cmd" >/dev/null || { log "missing $cmd: run scripts/deps.sh (as root, with apt-get)"; exit 2; }
done
for b in crio pinns; do
  [[ -x $CRIO_BIN_DIR/$b ]] || { log "missing $CRIO_BIN_DIR/$b: run scripts/crio/build.sh (make deps does)"; exit 2; }
done
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] ||
  { log "missing CNI plugins in /usr/lib/cni: run scripts/deps.sh"; exit 2; }
[[ -x /bin/busybox ]] || { log "missing /bin/busybox (busybox-static): run scripts/deps.sh"; exit 2; }
[[ -x "$CRICTL" ]] || { log "missing crictl at $CRICTL: run scripts/deps.sh"; exit 2; }
# "crio version 1.34.0" -> 1.34.0
version=$("$CRIO_BIN_DIR/crio" --version 2>/dev/null | awk '/^crio version/ {print $3; exit} /^Version:/ {print $2; exit}')

if [[ -f "$PIDFILE" && -f "$ENVFILE" ]] && alive "$(cat "$PIDFILE")" crio && crictl_ version >/dev/null 2>&1; then
  log "already up (pid $(cat "$PIDFILE")); env: $ENVFILE"
  echo "$ENVFILE"
  exit 0
fi
if [[ -e "$CRISP_CRIO_DIR" ]]; then
  log "cleaning up a stale $CRISP_CRIO_DIR"
  bash "$(dirname "$0")/down.sh"
fi

D=$CRISP_CRIO_DIR
mkdir -p "$D"/{root,runroot,runc,cni/net.d,cni/ipam,logs,cfg,conf.d,registries.conf.d,registry,policies,home/.config/containers,ns,exits,attach,hooks,cdi,lib}
chmod 700 "$D"
write_crictl_config

ok=false
cleanup() {
  if ! $ok; then
    log "failed; crio log tail ($LOGFILE):"
    tail -n 30 "$LOGFILE" >&2 2>/dev/null || true
    if [[ "${CRISP_CRIO_KEEP_ON_FAILURE:-}" != 1 ]]; then
      bash "$(dirname "$0")/down.sh" || true
    fi
  fi
}
trap cleanup EXIT

# running PID: a child just started in the background has not exited. No
# name check (alive): until it has exec'd, its comm is the forking shell's,
# and a check right after the start failed about half the time.
running() { [[ -e /proc/$1 && "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]]; }

# --- the local registry ---------------------------------------------------------
t=$(date +%s.%N)
cat >"$D/registry.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $D/registry
http:
  addr: 127.0.0.1:0
EOF
setsid docker-registry serve "$D/registry.yml" </dev/null >>"$D/registry.log" 2>&1 &
echo $! >"$REG_PIDFILE"
reg_pid=$(cat "$REG_PIDFILE")
# Port 0: the kernel picks a free port; read it back from the listening socket.
reg_port=
for _ in $(seq 1 100); do
  running "$reg_pid" || { log "docker-registry exited at start:"; tail -5 "$D/registry.log" >&2; exit 1; }
  reg_port=$(ss -Hltnp 2>/dev/null | awk -v p="pid=$reg_pid," 'index($0, p) { n = split($4, a, ":"); print a[n]; exit }')
  [[ -n $reg_port ]] && break
  sleep 0.1
done
[[ -n $reg_port ]] || { log "docker-registry (pid $reg_pid) did not listen within 10s"; exit 1; }
REG=127.0.0.1:$reg_port
echo "$REG" >"$D/registry.addr"

# Images: the containerd harness's offline-built layout, pushed.
bash "$REPO/scripts/containerd/mkimages.sh" "$D/images.tar"
mkdir -p "$D/images"
tar -C "$D/images" -xf "$D/images.tar"
(cd "$REPO" && go run ./scripts/crio/pushlayout "$D/images" "$REG")
rm -rf "$D/images" "$D/images.tar"
t_registry=$(elapsed "$t")

# --- configuration ------------------------------------------------------------
# Every registry name the test images use maps onto the local one; nothing else
# is reachable (short names are refused, not searched for).
{
  echo 'short-name-mode = "disabled"'
  echo "unqualified-search-registries = [${CRISP_CRIO_SEARCH_REGISTRIES:-}]"
  for prefix in crisp.local registry.k8s.io gcr.io docker.io; do
    printf '\n[[registry]]\nprefix = "%s"\nlocation = "%s/%s"\ninsecure = true\n' "$prefix" "$REG" "$prefix"
  done
  printf '\n[[registry]]\nlocation = "%s"\ninsecure = true\n' "$REG"
} >"$D/registries.conf"
cat >"$D/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$D/root"
runroot = "$D/runroot"
EOF
# Accept any image: the registry is ours. CRI-O checks it nonetheless when
# signature_policy is set, which is how CreateContainer comes to need
# ImageSpec.user_specified_image (crisp sets it, as crictl does).
echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$D/policy.json"
cp "$D/policy.json" "$D/home/.config/containers/policy.json"

# This machine's root lacks CAP_SYS_RESOURCE, so runc cannot lower a process's
# oom_score_adj ("nsexec: failed to update /proc/self/oom_score_adj"), and
# CRI-O asks for -998 on every pod's infra container. This wrapper, CRI-O's
# runtime_path, clamps a negative process.oomScoreAdj in the bundle's
# config.json (create) or the process file (exec) to 0, then runs runc
# (containerd has restrict_oom_score_adj for the same). It also drops the
# hugepage limits a kubelet asks for (scripts/k8s/up.sh's second node): the
# hugetlb controller is enabled in /proc/cgroups but mounted nowhere here, so
# CRI-O passes them on and runc fails ("cannot set hugetlb limit");
# containerd has disable_hugetlb_controller.
cat >"$D/runc-clamp" <<'EOF'
#!/bin/sh
prev=
for a in "$@"; do
  f=
  case "$prev" in
    --bundle|-b) f="$a/config.json" ;;
    --process|-p) f="$a" ;;
  esac
  case "$a" in
    --bundle=*) f="${a#--bundle=}/config.json" ;;
    --process=*) f="${a#--process=}" ;;
  esac
  if [ -n "$f" ] && [ -f "$f" ]; then
    sed -i -E 's/"oomScoreAdj"([[:space:]]*):([[:space:]]*)-[0-9]+/"oomScoreAdj"\1:\20/' "$f"
    case "$f" in
    */config.json) sed -i -E ':a;N;$!ba;s/,[[:space:]]*"hugepageLimits"[[:space:]]*:[[:space:]]*\[[^]]*\]//' "$f" ;;
    esac
  fi
  prev=$a
done
exec runc "$@"
EOF
chmod +x "$D/runc-clamp"

# A conf.d drop-in folder of our own: crio would otherwise read /etc/crio/crio.conf.d.
cat >"$D/crio.conf" <<EOF
[crio]
root = "$D/root"
runroot = "$D/runroot"
storage_driver = "overlay"
log_dir = "$D/logs"
version_file = "$D/runroot/version"
version_file_persist = "$D/lib/version"
clean_shutdown_file = "$D/lib/clean.shutdown"

[crio.api]
listen = "$SOCK"
stream_address = "127.0.0.1"
stream_port = "0"

[crio.runtime]
default_runtime = "runc"
cgroup_manager = "cgroupfs"
conmon_cgroup = "pod"
pinns_path = "$CRIO_BIN_DIR/pinns"
namespaces_dir = "$D/ns"
container_exits_dir = "$D/exits"
container_attach_socket_dir = "$D/attach"
hooks_dir = ["$D/hooks"]
cdi_spec_dirs = ["$D/cdi"]
irqbalance_config_restore_file = "disable"
# An infra (pause) container per pod, as containerd runs: without one, a
# container asking for the pod's PID namespace (a container config's default)
# is refused ("pod level PID namespace requested ... does not have an infra
# container").
drop_infra_ctr = false
irqbalance_config_file = "$D/lib/irqbalance"
seccomp_profile = ""
apparmor_profile = ""
selinux = false

[crio.runtime.runtimes.runc]
runtime_path = "$D/runc-clamp"
runtime_type = "oci"
runtime_root = "$RUNC_ROOT"
monitor_path = "$(command -v conmon)"
monitor_cgroup = "pod"

[crio.image]
pause_image = "$PAUSE_IMAGE"
signature_policy = "$D/policy.json"
signature_policy_dir = "$D/policies"
insecure_registries = ["$REG"]

[crio.network]
network_dir = "$D/cni/net.d"
plugin_dirs = ["/usr/lib/cni"]

[crio.nri]
enable_nri = false

[crio.metrics]
enable_metrics = false
EOF

# --- the pods' bridge -------------------------------------------------------
if ip link show "$BRIDGE" >/dev/null 2>&1; then
  log "the bridge $BRIDGE exists already (another harness? see ls -d /tmp/crisp*/env): give this one its own" \
    "CRISP_CRIO_DIR, CRISP_CRIO_BRIDGE and CRISP_CRIO_NET_PREFIX, or remove it (ip link del $BRIDGE)"
  exit 1
fi
if ip route show | grep -q "^$NET_PREFIX\.0/24 "; then
  log "$NET_PREFIX.0/24 is already routed on this host: set CRISP_CRIO_NET_PREFIX to a free private /24"
  exit 1
fi
ip link add "$BRIDGE" type bridge
echo "$BRIDGE" >"$D/bridge" # ours: down.sh deletes it
ip addr replace "$NET_PREFIX.1/24" dev "$BRIDGE"
ip link set "$BRIDGE" up
# Named after the harness folder: at its start CRI-O garbage-collects
# (CNI DEL) every attachment cached host-wide (/var/lib/cni/results) under its
# networks' names that is not one of its pods; a name shared with another
# harness would take that harness's pods' interfaces away.
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

# --- start crio -----------------------------------------------------------------
t=$(date +%s.%N)
# No registry but ours may be contacted: any other goes to a proxy on the
# loopback port 9 (nothing listens) and fails at once. The registries.conf
# goes in by flag as well as by environment: CRI-O does not remap names
# through the file CONTAINERS_REGISTRIES_CONF names.
HOME=$D/home CONTAINERS_REGISTRIES_CONF=$D/registries.conf CONTAINERS_STORAGE_CONF=$D/storage.conf \
  HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1,localhost \
  http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 no_proxy=127.0.0.1,localhost \
  setsid "$CRIO_BIN_DIR/crio" --config "$D/crio.conf" --config-dir "$D/conf.d" --log-level info \
  --registries-conf "$D/registries.conf" --registries-conf-dir "$D/registries.conf.d" \
  </dev/null >>"$LOGFILE" 2>&1 &
echo $! >"$PIDFILE"
pid=$(cat "$PIDFILE")
for _ in $(seq 1 600); do
  running "$pid" || { log "crio exited at start"; exit 1; }
  crictl_ version >/dev/null 2>&1 && break
  sleep 0.1
done
crictl_ version >/dev/null || { log "crio did not answer on $SOCK within 60s"; exit 1; }
t_start=$(elapsed "$t")

t=$(date +%s.%N)
for img in "$BUSYBOX_IMAGE" "$HTTPD_IMAGE" "$PAUSE_IMAGE"; do
  crictl_ pull "$img" >/dev/null || { log "pulling $img from the local registry ($REG) failed"; exit 1; }
done
t_images=$(elapsed "$t")

# --- pods and containers --------------------------------------------------------
if [[ ${CRISP_CRIO_NO_PODS:-} == 1 ]]; then
  cat >"$ENVFILE.tmp" <<EOF
CRISP_CRIO_DIR=$D
CRISP_CRIO_ENDPOINT=$ENDPOINT
CRISP_CRIO_VERSION=$version
CRISP_CRIO_PID=$pid
CRISP_CRIO_LOG=$LOGFILE
CRISP_CRIO_REGISTRY=$REG
EOF
  mv "$ENVFILE.tmp" "$ENVFILE"
  ok=true
  log "CRI-O $version up in $(elapsed "$t0") without pods (registry and images $t_registry, crio answering $t_start, pulls $t_images); pid $pid"
  echo "$ENVFILE"
  exit 0
fi
start_fixture_pods

cat >"$ENVFILE.tmp" <<EOF
CRISP_CRIO_DIR=$D
CRISP_CRIO_ENDPOINT=$ENDPOINT
CRISP_CRIO_VERSION=$version
CRISP_CRIO_PID=$pid
CRISP_CRIO_LOG=$LOGFILE
CRISP_CRIO_REGISTRY=$REG
CRISP_CRIO_POD=$pod
CRISP_CRIO_POD_IP=$pod_ip
CRISP_CRIO_CTR=$ctr
CRISP_CRIO_HTTPD_CTR=$httpd
CRISP_CRIO_HTTPD_PORT=$HTTPD_PORT
CRISP_CRIO_ATTACH_CTR=$attach
CRISP_CRIO_HOSTNET_POD=$hpod
CRISP_CRIO_HOSTNET_CTR=$hctr
CRISP_CRIO_BUSYBOX_IMAGE=$BUSYBOX_IMAGE
CRISP_CRIO_HTTPD_IMAGE=$HTTPD_IMAGE
CRISP_CRIO_POD_CONFIG=$pod_cfg
CRISP_CRIO_HOSTNET_POD_CONFIG=$hpod_cfg
EOF
mv "$ENVFILE.tmp" "$ENVFILE"
ok=true
log "CRI-O $version up in $(elapsed "$t0") (registry and images $t_registry, crio answering $t_start, pulls $t_images, pods $t_pods); pid $pid"
log "env: $ENVFILE; by hand: CONTAINER_RUNTIME_ENDPOINT=$ENDPOINT $CRICTL ps"
echo "$ENVFILE"
