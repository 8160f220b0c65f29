# What the runtime harnesses share (sourced by containerd-up.sh, crio/up.sh
# and their down scripts, not run): the pods and containers each starts, and
# the sweep of what a killed runtime leaves behind.

# --- up: a bridge pod with a sleeper, an httpd and an attach target, and a
# host-network pod. The caller defines D, REPO, CGROUP_PARENT, BUSYBOX_IMAGE,
# HTTPD_PORT, crictl_ and elapsed.

# render FILE: testdata/containerd/FILE with the harness's values, into $D/cfg.
render() {
  sed -e "s|@DIR@|$D|g" -e "s|@CGROUP_PARENT@|$CGROUP_PARENT|g" \
    -e "s|@BUSYBOX_IMAGE@|$BUSYBOX_IMAGE|g" -e "s|@HTTPD_PORT@|$HTTPD_PORT|g" \
    "$REPO/testdata/containerd/$1" >"$D/cfg/$1"
  echo "$D/cfg/$1"
}

# start_fixture_pods sets pod_cfg, hpod_cfg, pod, ctr, httpd, attach, hpod, hctr,
# pod_ip and t_pods, and waits until httpd answers inside the pod (exec, not a
# host->pod connection).
start_fixture_pods() {
  local t
  t=$(date +%s.%N)
  pod_cfg=$(render pod-bridge.json)
  hpod_cfg=$(render pod-hostnet.json)
  pod=$(crictl_ runp "$pod_cfg")
  ctr=$(crictl_ create "$pod" "$(render ctr-sleep.json)" "$pod_cfg")
  httpd=$(crictl_ create "$pod" "$(render ctr-httpd.json)" "$pod_cfg")
  attach=$(crictl_ create "$pod" "$(render ctr-attach.json)" "$pod_cfg")
  crictl_ start "$ctr" "$httpd" "$attach" >/dev/null
  hpod=$(crictl_ runp "$hpod_cfg")
  hctr=$(crictl_ create "$hpod" "$(render ctr-hostnet.json)" "$hpod_cfg")
  crictl_ start "$hctr" >/dev/null
  pod_ip=$(crictl_ inspectp -o go-template --template '{{.status.network.ip}}' "$pod")
  t_pods=$(elapsed "$t")
  for _ in $(seq 1 50); do
    if crictl_ exec "$ctr" wget -q -O /dev/null "http://127.0.0.1:$HTTPD_PORT/" >/dev/null 2>&1; then
      break
    fi
    sleep 0.1
  done
}

# --- down: reap_leftovers RUNC_ROOT CGROUP_PARENT DIR kills and deletes the
# containers runc still knows under RUNC_ROOT, every process left in the
# harness's cgroups (then removes them), and unmounts what is mounted under
# DIR (overlays, shm, pinned namespaces), deepest first.
reap_leftovers() {
  local runc_root=$1 cgroup_parent=$2 dir=$3 id c pids mnts m
  if [[ -d "$runc_root" ]] && command -v runc >/dev/null; then
    for id in $(runc --root "$runc_root" list -q 2>/dev/null); do
      runc --root "$runc_root" kill --all "$id" KILL >/dev/null 2>&1
      runc --root "$runc_root" delete -f "$id" >/dev/null 2>&1
    done
  fi
  local cgdirs=()
  for c in /sys/fs/cgroup/*"$cgroup_parent" /sys/fs/cgroup"$cgroup_parent"; do
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
  if [[ -n "$dir" && "$dir" == /* ]]; then
    for _ in 1 2 3; do
      mnts=$(awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
      [[ -z "$mnts" ]] && break
      for m in $mnts; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
      done
    done
  fi
  return 0
}
