# The pods and containers every runtime harness starts (sourced by
# containerd-up.sh and crio/up.sh, not run): a bridge pod with a sleeper, an
# httpd and an attach target, and a host-network pod. The caller defines D,
# REPO, CGROUP_PARENT, BUSYBOX_IMAGE, HTTPD_PORT, crictl_ and elapsed.

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
