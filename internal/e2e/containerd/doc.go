// Package containerd holds the end-to-end tests against a real containerd:
// Debian's containerd 1.6 with runc, started in the background by
// scripts/containerd-up.sh (offline images, a pod with its own network
// namespace on a private bridge, a host-network pod) and stopped by
// scripts/containerd-down.sh. The package has no code outside its tests.
//
// TestMain starts the harness once for the package and stops it at the end;
// set CRISP_CTRD_ENV to the env file of a harness already running (for
// example /tmp/crisp-ctrd/env after `make containerd-up`) to use that one and
// leave it running. Without root, containerd or crictl the tests skip with
// the reason; with CI=true they fail instead.
//
// The helpers in harness_test.go are the API for new tests: suiteHarness(t)
// gives the pods and containers, crisp(t, args...) and crictl(t, args...) run
// the two clients against the harness, newContainer(t, ...) adds a container,
// startBackground(t, cmd) runs a port-forward or an attach alongside a test.
package containerd
