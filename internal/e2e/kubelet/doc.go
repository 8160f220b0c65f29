// Package kubelet holds the end-to-end tests on a real single-node
// Kubernetes: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// and a kubelet (built from the Go module proxy by scripts/k8s/build.sh, run
// by scripts/deps.sh) on the kubelet's own containerd, all started by
// scripts/k8s/up.sh under /tmp/crisp-k8s and stopped by scripts/k8s/down.sh
// by their PIDs. The package has no code outside its tests.
//
// What it checks is what only a kubelet shows: the manifests in deploy/ as
// shipped (rolled out, collected with `kubectl logs | crisp report -`),
// smoke --image refused on the kubelet's runtime, and crisp agreeing with
// kubectl exec on a container the kubelet owns.
//
// TestMain brings the cluster up once for the package (queued on
// /tmp/crisp-k8s.lock, so parallel runs on one machine take turns) and down
// at the end; CRISP_K8S_ENV names the env file of a cluster already up
// (/tmp/crisp-k8s/env after `make k8s-up`) to use that one and leave it
// running. Tests call requireCluster(t) for the cluster: without root or the
// binaries they skip with the reason; with CI=true they fail instead.
package kubelet
