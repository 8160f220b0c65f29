// Package containerd holds the end-to-end tests against real runtimes:
// Debian's containerd 1.6, containerd 2.4 (built from the Go module proxy
// by scripts/deps.sh into .tools/containerd2/bin) and CRI-O 1.34 (built by
// scripts/crio/build.sh, with Debian's conmon), all with Debian's runc.
// scripts/containerd-up.sh (scripts/crio/up.sh for CRI-O) starts each in the
// background on its own folder, socket, bridge and /24 (offline images, a
// pod with its own network namespace on the bridge, a host-network pod);
// scripts/containerd-down.sh (scripts/crio/down.sh) stops it by its PID. The
// package keeps its first runtime's name; it has no code outside its tests.
//
// TestMain starts every harness for the package and stops them at the end
// (runtimeSpecs in main_test.go names them). CRISP_CTRD_ENV (1.6),
// CRISP_CTRD2_ENV (2.4) and CRISP_CRIO_ENV (CRI-O) name the env file of a
// harness already running (for example /tmp/crisp-ctrd/env after `make
// containerd-up`, /tmp/crisp-ctrd2/env after `make containerd2-up`,
// /tmp/crisp-crio/env after `make crio-up`) to use that one and leave it
// running; CRISP_E2E_RUNTIMES=containerd-2.4,crio-1.34 runs those only. Without root,
// containerd or crictl the tests skip with the reason; with CI=true they fail
// instead. The summary (.work/e2e-containerd.txt, printed by `make test`)
// counts each runtime's results.
//
// The helpers are the API for new tests: eachRuntime(t, func(t, h)) runs a
// body once per runtime as subtests named by it (TestX/containerd-1.6,
// TestX/containerd-2.4, TestX/crio-1.34), the runtimes at the same time and
// the tests one after the other; harnesses(t) gives all of them at once; in the body
// h.crisp(t, args...) and h.crictl(t, args...) run the two clients against
// that runtime, h.newContainer(t, ...) adds a container to its pods,
// startBackground(t, cmd) runs a port-forward or an attach alongside a test.
// Where the runtimes differ, tests assert what each one does (see h.Name).
package containerd
