# What the manual measurements on the Kubernetes node share (sourced by
# perf.sh and bench-cp.sh after the cluster's env file, not run): kubectl on
# the cluster, and a busybox pod the kubelet owns.

k() { "$CRISP_K8S_KUBECTL" --kubeconfig "$CRISP_K8S_KUBECONFIG" "$@"; }

# run_busybox_pod NAME creates pod NAME in default (busybox sleeping, on the
# pod network), waits until it is Ready and prints its container's runtime
# ID. The caller deletes it (k delete pod NAME).
run_busybox_pod() {
  local pod=$1 ctr
  k apply -f - >/dev/null <<JSON || return
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "$pod", "namespace": "default"},
 "spec": {"automountServiceAccountToken": false, "terminationGracePeriodSeconds": 0,
   "containers": [{"name": "main", "image": "$CRISP_K8S_IMAGE_BUSYBOX", "imagePullPolicy": "IfNotPresent",
     "command": ["sleep", "86400"]}]}}
JSON
  k wait --for=condition=Ready "pod/$pod" --timeout=2m >/dev/null || return
  ctr=$(k get pod "$pod" -o 'jsonpath={.status.containerStatuses[0].containerID}') || return
  echo "${ctr#*://}"
}
