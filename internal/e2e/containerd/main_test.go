package containerd

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// runtimeSpec is one runtime this package runs its tests against, and the
// names its harness uses on this machine: its own folder (socket, state,
// config), bridge and /24, so that the harnesses, a harness started by hand
// (`make containerd-up`, /tmp/crisp-ctrd; `make containerd2-up`,
// /tmp/crisp-ctrd2; `make crio-up`, /tmp/crisp-crio) and the TLS harnesses
// never meet.
type runtimeSpec struct {
	name        string // subtest name: "containerd-1.6"
	kind        kind   // which harness scripts start it
	runtimeName string // crictl version's RuntimeName: "containerd", "cri-o"
	version     string // what its version starts with: "1.6.", "2.4."
	label       string // column of docs/interop.md: "containerd 1.6"
	// binDir holds the runtime's own binaries, relative to the repository:
	// containerd 2.x (CRISP_CTRD_BIN_DIR; "" is Debian's containerd in
	// PATH) or crio and pinns (CRISP_CRIO_BIN_DIR).
	binDir    string
	envVar    string // names the env file of a harness somebody else started and will stop
	dir       string
	bridge    string
	netPrefix string
	tls       tlsNames // its TLS harness (tls_test.go)
	serves    serves   // what of the CRI it implements, where the runtimes differ
}

// kind is a family of runtimes with one set of harness scripts.
type kind struct {
	up, down  string // scripts/NAME that start and stop a harness
	varPrefix string // of the scripts' variables and of the env file's: CRISP_CTRD
	pidFile   string // the runtime's pid file in the harness folder
}

var (
	containerdKind = kind{up: "containerd-up.sh", down: "containerd-down.sh", varPrefix: "CRISP_CTRD", pidFile: "containerd.pid"}
	crioKind       = kind{up: "crio/up.sh", down: "crio/down.sh", varPrefix: "CRISP_CRIO", pidFile: "crio.pid"}
)

// serves is what a runtime implements of the CRI where the runtimes differ,
// as measured (differences_test.go asserts each runtime's values).
type serves struct {
	events        events // GetContainerEvents (crictl events)
	runtimeConfig bool   // RuntimeConfig (crictl runtime-config)
	// tlsHarness: the suite has a TLS harness for it (TestTLS).
	tlsHarness bool
	// ttyRaces: its TTY exec now and then loses the last line of output
	// (the stream closes before the copy ends) or starts the process before
	// the first size is set (CRI-O; crictl sees the same). probe and smoke
	// say so; the tests log those failures rather than fail on them.
	ttyRaces bool
	// attachEndsWithStdin: an attach stream ends when the client's stdin
	// does, and at once without stdin, while the container runs on (CRI-O;
	// containerd's lasts until the container exits).
	attachEndsWithStdin bool
}

// events is what a runtime does with GetContainerEvents.
type events int

const (
	eventsUnimplemented events = iota // answers Unimplemented (containerd 1.6)
	eventsStreamed                    // streams container events (containerd 2.x)
	// eventsClosed: accepts the call and ends the stream at once, OK status
	// (CRI-O with its default enable_pod_events = false).
	eventsClosed
)

// tlsNames are the names of a runtime's TLS harness; envVar names the env
// file of one somebody else started and will stop.
type tlsNames struct{ envVar, dir, bridge, netPrefix string }

// runtimeSpecs: Debian's containerd 1.6 and containerd 2.4 built by
// scripts/deps.sh. The order is the order of the subtests and of the matrix.
var runtimeSpecs = []*runtimeSpec{
	{
		name: "containerd-1.6", kind: containerdKind, runtimeName: "containerd",
		label: "containerd 1.6", version: "1.6.", envVar: "CRISP_CTRD_ENV",
		dir: "/tmp/crisp-e2e", bridge: "crispe2e0", netPrefix: "10.213.78",
		tls:    tlsNames{"CRISP_CTRD_TLS_ENV", "/tmp/crisp-e2e-tls", "crispe2etls0", "10.213.80"},
		serves: serves{events: eventsUnimplemented, runtimeConfig: false, tlsHarness: true},
	},
	{
		name: "containerd-2.4", kind: containerdKind, runtimeName: "containerd",
		label: "containerd 2.4", version: "2.4.", envVar: "CRISP_CTRD2_ENV",
		binDir: ".tools/containerd2/bin",
		dir:    "/tmp/crisp-e2e2", bridge: "crispe2e2", netPrefix: "10.213.82",
		tls:    tlsNames{"CRISP_CTRD2_TLS_ENV", "/tmp/crisp-e2e2-tls", "crispe2e2tls", "10.213.83"},
		serves: serves{events: eventsStreamed, runtimeConfig: true, tlsHarness: true},
	},
	{
		// CRI-O v1.34 built by scripts/crio/build.sh, with conmon and runc
		// from Debian; no TLS harness (its plaintext streaming server is the
		// one under test here).
		name: "crio-1.34", kind: crioKind, runtimeName: "cri-o",
		label: "CRI-O 1.34", version: "1.34.", envVar: "CRISP_CRIO_ENV",
		binDir: ".tools/crio/bin",
		dir:    "/tmp/crisp-crio-e2e", bridge: "crispcrioe2e", netPrefix: "10.213.85",
		serves: serves{events: eventsClosed, runtimeConfig: true, tlsHarness: false, ttyRaces: true, attachEndsWithStdin: true},
	},
}

// rt is one runtime of this run: its harness, or why it is unavailable.
type rt struct {
	spec    *runtimeSpec
	harness *Harness // nil when unavailable
	reason  string   // why the harness is unavailable
	upTook  time.Duration
	stop    func() // nil when this package did not start it
}

// suite is what TestMain set up, read-only once the tests run.
var suite struct {
	repo     string // repository root
	reason   string // why no runtime can run at all ("" when they can)
	binDir   string // temporary folder for the crisp binary
	crictl   string // crictl binary
	critest  string // critest binary
	runtimes []*rt  // one per runtimeSpecs entry, same order

	crisp testkit.GoBinary // ./cmd/crisp

	crictlConfigOnce sync.Once
	crictlConfig     string
	crictlConfigErr  error

	resultsMu sync.Mutex
	tracked   map[testing.TB]bool
	results   []testResult // tests and runtime subtests, in the order they ended
}

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

// runSuite is TestMain's body: its deferred cleanups (the harnesses stopped,
// binaries removed) run before the process exits with its code.
func runSuite(m *testing.M) int {
	defer func() {
		if suite.binDir != "" {
			_ = os.RemoveAll(suite.binDir) // best effort: a temporary folder
		}
		suite.crisp.Remove()
		echoServer.Remove()
	}()
	for _, spec := range runtimeSpecs {
		suite.runtimes = append(suite.runtimes, &rt{spec: spec})
	}
	flag.Parse() // testing.Short needs the flags parsed before m.Run
	runtimesAtOnce()
	if testing.Short() {
		suite.reason = shortReason
		return runAndReport(m, nil)
	}
	var err error
	suite.repo, err = testkit.RepoRoot()
	if err != nil {
		suite.reason = err.Error()
		return runAndReport(m, nil)
	}
	suite.crisp.Pkg = "./cmd/crisp"
	suite.crictl = testkit.EnvOr("CRICTL", filepath.Join(suite.repo, ".tools/bin/crictl"))
	suite.critest = testkit.EnvOr("CRITEST", filepath.Join(suite.repo, ".tools/bin/critest"))
	if suite.binDir, err = os.MkdirTemp("", "crisp-e2e-bin-"); err != nil {
		suite.reason = err.Error()
		return runAndReport(m, nil)
	}
	suite.reason = unavailable()
	if suite.reason == "" {
		slot, unlock, err := takeSlot()
		if err != nil {
			suite.reason = err.Error()
			return runAndReport(m, nil)
		}
		defer unlock() // once the harnesses stopped
		for _, r := range suite.runtimes {
			spec := *r.spec // runtimeSpecs keeps slot 0's names
			spec.inSlot(slot)
			r.spec = &spec
		}
	}
	// The harnesses start at once and stop at the end, whatever the tests
	// did.
	var wg sync.WaitGroup
	for _, r := range suite.runtimes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.start()
		}()
	}
	wg.Wait()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		for _, r := range suite.runtimes {
			if r.stop != nil {
				r.stop()
			}
		}
	}
	defer stop() // should the tests panic
	return runAndReport(m, stop)
}

// harnessSlots is how many runs of this package on one machine (two `make
// test` at once, several engineers) each get their own harnesses; one more
// waits for slot 0.
const harnessSlots = 4

// takeSlot picks the first set of harness names that no other run of this
// package on this machine holds, and holds it until unlock.
func takeSlot() (slot int, unlock func(), err error) {
	for slot = range harnessSlots {
		unlock, ok, err := testkit.TryLockFile(slotLock(slot))
		if err != nil || ok {
			return slot, unlock, err
		}
	}
	fmt.Fprintf(os.Stderr, "containerd e2e: %d other runs of this package hold every harness slot; waiting for %s\n", harnessSlots, slotLock(0))
	unlock, err = testkit.LockFile(slotLock(0))
	return 0, unlock, err
}

func slotLock(slot int) string { return fmt.Sprintf("/tmp/crisp-e2e-slot%d.lock", slot) }

// inSlot gives s's harnesses (and its TLS harness) the folder, bridge and
// /24 of slot: slot 0 keeps runtimeSpecs' own, slot k adds "-sK" to the
// folder, "sK" to the bridge (15 bytes at most) and 20·k to the network's
// third byte.
func (s *runtimeSpec) inSlot(slot int) {
	if slot == 0 {
		return
	}
	rename := func(dir, bridge, netPrefix *string) {
		i := strings.LastIndexByte(*netPrefix, '.')
		third, _ := strconv.Atoi((*netPrefix)[i+1:]) // runtimeSpecs' own: a number below 200
		*dir = fmt.Sprintf("%s-s%d", *dir, slot)
		*bridge = fmt.Sprintf("%ss%d", *bridge, slot)
		*netPrefix = fmt.Sprintf("%s.%d", (*netPrefix)[:i], third+20*slot)
	}
	rename(&s.dir, &s.bridge, &s.netPrefix)
	if s.tls.dir != "" {
		rename(&s.tls.dir, &s.tls.bridge, &s.tls.netPrefix)
	}
}

// runtimesAtOnce lets every runtime's subtest of a test run at the same
// time (eachRuntime): most of a subtest's time is spent waiting on its
// runtime, so the package's time is the slowest runtime's rather than
// their sum. An explicit -parallel wins.
func runtimesAtOnce() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(max(len(runtimeSpecs), runtime.GOMAXPROCS(0)))) // a valid int flag
	}
}

// start brings r's harness up, or records why it cannot run.
func (r *rt) start() {
	if !r.spec.selected() {
		r.reason = r.spec.name + " is " + notSelected
		return
	}
	if envFile := os.Getenv(r.spec.envVar); envFile != "" {
		var err error
		if r.harness, err = loadHarness(envFile, r.spec); err != nil {
			r.reason = fmt.Sprintf("%s=%s: %v", r.spec.envVar, envFile, err)
		}
		return
	}
	if suite.reason != "" {
		r.reason = suite.reason
		return
	}
	if r.reason = r.spec.unavailable(); r.reason != "" {
		return
	}
	// One harness per folder at a time on this machine: parallel `go test`
	// runs of this package (several engineers, or -count) queue here.
	unlock, err := testkit.LockFile(r.spec.dir + ".lock")
	if err != nil {
		r.reason = err.Error()
		return
	}
	env := r.spec.scriptEnv(r.spec.dir, r.spec.bridge, r.spec.netPrefix)
	up, down := r.spec.kind.up, r.spec.kind.down
	r.stop = func() {
		r.keepLogIfFailed()
		if out, err := runScript(env, down); err != nil {
			fmt.Fprintf(os.Stderr, "containerd e2e: %s: scripts/%s failed: %v\n%s", r.spec.name, down, err, out)
		}
		unlock()
	}
	start := time.Now()
	out, err := runScript(env, up)
	if err != nil {
		r.reason = fmt.Sprintf("scripts/%s failed: %v\n%s", up, err, out)
		return
	}
	r.upTook = time.Since(start)
	if r.harness, err = loadHarness(filepath.Join(r.spec.dir, "env"), r.spec); err != nil {
		r.reason = err.Error()
		return
	}
	fmt.Fprintf(os.Stderr, "containerd e2e: %s (%s) up in %v under %s\n",
		r.spec.name, r.harness.Version, r.upTook.Round(10*time.Millisecond), r.spec.dir)
}

// keepLogIfFailed copies the runtime's log out of its harness folder, which
// the down script removes, when one of its subtests failed: a runtime's
// side of a failure (a dropped stream, an error it logged) can be read
// after the run, in .work/e2e-NAME.log next to the summary.
func (r *rt) keepLogIfFailed() {
	if r.harness == nil || !failed(r.spec.name) {
		return
	}
	dst := filepath.Join(suite.repo, filepath.Dir(summaryFile), "e2e-"+r.spec.name+".log")
	b, err := os.ReadFile(r.harness.Log)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dst), 0o755)
	}
	if err == nil {
		err = os.WriteFile(dst, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "containerd e2e: %s: keeping its log: %v\n", r.spec.name, err)
		return
	}
	fmt.Fprintf(os.Stderr, "containerd e2e: %s had failures; its log is kept in %s\n", r.spec.name, dst)
}

// failed reports whether a subtest of runtime failed.
func failed(runtime string) bool {
	suite.resultsMu.Lock()
	defer suite.resultsMu.Unlock()
	for _, res := range suite.results {
		if res.runtime == runtime && res.status == "FAIL" {
			return true
		}
	}
	return false
}

// scriptEnv is the environment of the up and down scripts for a harness of
// this runtime in dir, on bridge and netPrefix.0/24.
func (s *runtimeSpec) scriptEnv(dir, bridge, netPrefix string, extra ...string) []string {
	p := s.kind.varPrefix
	env := append(cleanEnv(), p+"_DIR="+dir, p+"_BRIDGE="+bridge,
		p+"_NET_PREFIX="+netPrefix, "CRICTL="+suite.crictl)
	if s.binDir != "" {
		env = append(env, p+"_BIN_DIR="+filepath.Join(suite.repo, s.binDir))
	}
	return append(env, extra...)
}

// unavailable says why no harness can start here, or "".
func unavailable() string {
	if runtime.GOOS != "linux" {
		return "the containerd suite runs on Linux only"
	}
	if os.Geteuid() != 0 {
		return "the containerd suite needs root (containerd, runc, mounts, network namespaces); run `sudo make test` or see README"
	}
	for _, bin := range []string{"runc", "gcc"} {
		if _, err := exec.LookPath(bin); err != nil {
			return bin + " is not installed: run `make deps` as root (apt-get install runc containernetworking-plugins busybox-static gcc)"
		}
	}
	if _, err := os.Stat(suite.crictl); err != nil {
		return "crictl is not built at " + suite.crictl + ": run `make deps`"
	}
	return ""
}

// unavailable says why this runtime's binaries are missing, or "".
func (s *runtimeSpec) unavailable() string {
	if s.kind == crioKind {
		for _, bin := range []string{"conmon", "docker-registry"} {
			if _, err := exec.LookPath(bin); err != nil {
				return bin + " is not installed: run `make deps` as root (apt-get install conmon docker-registry)"
			}
		}
		for _, bin := range []string{"crio", "pinns"} {
			if _, err := os.Stat(filepath.Join(suite.repo, s.binDir, bin)); err != nil {
				return fmt.Sprintf("%s is not built at %s: run `make deps` (scripts/crio/build.sh)", bin, filepath.Join(suite.repo, s.binDir))
			}
		}
		return ""
	}
	for _, bin := range []string{"containerd", "ctr"} {
		if _, err := exec.LookPath(bin); err != nil {
			return bin + " is not installed: run `make deps` as root (apt-get install containerd)"
		}
	}
	if s.binDir == "" {
		if _, err := exec.LookPath("containerd-shim-runc-v2"); err != nil {
			return "containerd-shim-runc-v2 is not installed: run `make deps` as root (apt-get install containerd)"
		}
		return ""
	}
	for _, bin := range []string{"containerd", "containerd-shim-runc-v2"} {
		if _, err := os.Stat(filepath.Join(suite.repo, s.binDir, bin)); err != nil {
			return fmt.Sprintf("%s is not built at %s: run `make deps`", bin, filepath.Join(suite.repo, s.binDir))
		}
	}
	return ""
}

// runScript runs scripts/NAME with env, for 3 minutes at most.
func runScript(env []string, name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(suite.repo, "scripts", name))
	cmd.Env = env
	cmd.Dir = suite.repo
	return cmd.CombinedOutput()
}

// cleanEnv is the test's environment without the CRI settings a developer's
// shell may carry, so every client talks to the harness only.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CONTAINER_RUNTIME_ENDPOINT", "IMAGE_SERVICE_ENDPOINT", "CRI_CONFIG_FILE":
			continue
		}
		env = append(env, kv)
	}
	return env
}
