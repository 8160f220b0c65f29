package kubelet

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// Cluster is the Kubernetes the tests run on: a node on containerd (the
// fields below) and, beside it, a node on CRI-O (CRIO, nil when the cluster
// has one node).
type Cluster struct {
	// Kubeconfig is the admin's (system:masters) kubeconfig file.
	Kubeconfig string
	NodeName   string
	// CRIEndpoint is the kubelet's runtime (unix://...), HostSocketPath
	// the socket's path on the host (for a hostPath volume).
	CRIEndpoint    string
	HostSocketPath string
	// Kubectl and CrispBin are the binaries (crisp built once for the
	// package).
	Kubectl  string
	CrispBin string
	// Image references as imported on the node (nothing can be pulled):
	// crisp's own image as `make image` builds it, busybox and pause under
	// the names deploy/ uses.
	ImageCrisp, ImageBusybox, ImagePause string
	// Version is the kubelet's (v1.37.2).
	Version string
	// KubeletLog is the kubelet's log file.
	KubeletLog string
	// Dir is the cluster's folder (scripts/k8s/up.sh's CRISP_K8S_DIR).
	Dir  string
	CRIO *Node
}

// Node is the second node: its name, its runtime and where that listens.
type Node struct {
	Name                        string
	CRIEndpoint, HostSocketPath string
	// Dir is its CRI-O's folder; Version CRI-O's version.
	Dir, Version string
	KubeletLog   string
}

// suite is what TestMain set up, read-only once the tests run.
var suite struct {
	repo    string
	reason  string // why no cluster ("" when there is one)
	cluster *Cluster
	upTook  time.Duration
}

// shortReason is why -short runs none of the suite.
const shortReason = "-short: the suite starts a Kubernetes node, which takes about a minute; make test runs it"

// TestMain returns (no os.Exit) so that its deferred clean-up runs; the
// testing package exits with m.Run's code.
func TestMain(m *testing.M) {
	flag.Parse() // testing.Short needs the flags parsed before m.Run
	run(m)
}

func run(m *testing.M) int {
	if testing.Short() {
		suite.reason = shortReason
		return m.Run()
	}
	var err error
	if suite.repo, err = testkit.RepoRoot(); err != nil {
		suite.reason = err.Error()
		return m.Run()
	}
	if envFile := os.Getenv("CRISP_K8S_ENV"); envFile != "" {
		if suite.cluster, err = loadCluster(envFile); err != nil {
			suite.reason = fmt.Sprintf("CRISP_K8S_ENV=%s: %v", envFile, err)
		}
	} else if suite.reason = unavailable(); suite.reason == "" {
		stop := startCluster()
		defer stop()
	}
	if suite.cluster != nil {
		crisp := testkit.GoBinary{Pkg: "./cmd/crisp"}
		defer crisp.Remove()
		if suite.cluster.CrispBin, err = crisp.Build(); err != nil {
			suite.reason = fmt.Sprintf("building crisp: %v", err)
			suite.cluster = nil
		}
	}
	return m.Run()
}

// startCluster runs scripts/k8s/up.sh under the machine's lock and returns
// what stops it; on failure suite.reason says why.
func startCluster() (stop func()) {
	// One cluster per folder (its etcd, containerd and kubelet live
	// there): another run of this package using it is waited for (the suite
	// takes minutes, so it queues rather than starting a second cluster).
	lock := k8sDir() + ".lock"
	unlock, ok, err := testkit.TryLockFile(lock)
	if err == nil && !ok {
		fmt.Fprintf(os.Stderr, "kubelet e2e: another run holds the cluster under %s; waiting for %s\n", k8sDir(), lock)
		unlock, err = testkit.LockFile(lock)
	}
	if err != nil {
		suite.reason = err.Error()
		return func() {}
	}
	stop = func() {
		if out, err := runScript(2*time.Minute, "k8s/down.sh"); err != nil {
			fmt.Fprintf(os.Stderr, "kubelet e2e: scripts/k8s/down.sh failed: %v\n%s", err, out)
		}
		unlock()
	}
	start := time.Now()
	// A cold `make image` inside up.sh compiles crisp: minutes on a busy
	// 2-core machine.
	out, err := runScript(8*time.Minute, "k8s/up.sh")
	if err != nil {
		suite.reason = fmt.Sprintf("scripts/k8s/up.sh failed: %v\n%s", err, out)
		return stop
	}
	suite.upTook = time.Since(start)
	if suite.cluster, err = loadCluster(filepath.Join(k8sDir(), "env")); err != nil {
		suite.reason = err.Error()
		return stop
	}
	nodes := suite.cluster.NodeName + " (containerd)"
	if n := suite.cluster.CRIO; n != nil {
		nodes += " and " + n.Name + " (CRI-O " + n.Version + ")"
	}
	fmt.Fprintf(os.Stderr, "kubelet e2e: Kubernetes %s nodes %s Ready in %v under %s\n",
		suite.cluster.Version, nodes, suite.upTook.Round(100*time.Millisecond), k8sDir())
	return stop
}

// requireTwoNodes returns the cluster with its CRI-O node, or skips t
// (fails it under CI=true) when there is none.
func requireTwoNodes(t *testing.T) *Cluster {
	t.Helper()
	c := requireCluster(t)
	if c.CRIO == nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the cluster has no CRI-O node (CRISP_K8S_CRIO=0?)")
		}
		t.Skip("the cluster has no CRI-O node (scripts/k8s/up.sh with CRISP_K8S_CRIO=0, or an older env file)")
	}
	return c
}

// requireCluster returns the cluster, or skips t (fails it under CI=true)
// with the reason there is none.
func requireCluster(t *testing.T) *Cluster {
	t.Helper()
	if suite.cluster != nil && suite.reason == "" {
		return suite.cluster
	}
	if os.Getenv("CI") == "true" && suite.reason != shortReason {
		t.Fatalf("the kubelet suite cannot run under CI=true: %s", suite.reason)
	}
	t.Skip(suite.reason)
	return nil
}

func k8sDir() string { return testkit.EnvOr("CRISP_K8S_DIR", "/tmp/crisp-k8s") }

// unavailable says why no cluster can start here, or "".
func unavailable() string {
	if runtime.GOOS != "linux" {
		return "the kubelet suite runs on Linux only"
	}
	if os.Geteuid() != 0 {
		return "the kubelet suite needs root (containerd, the kubelet, mounts); run `sudo make test` or see README"
	}
	bin := testkit.EnvOr("CRISP_K8S_BIN", filepath.Join(suite.repo, ".tools/k8s/bin"))
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kubectl"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return fmt.Sprintf("%s is not built in %s: run `make deps` (scripts/k8s/build.sh, tens of minutes cold)", b, bin)
		}
	}
	for _, b := range []string{"containerd", "runc", "ctr", "openssl"} {
		if _, err := exec.LookPath(b); err != nil {
			return b + " is not installed: run `make deps` as root"
		}
	}
	return ""
}

// loadCluster reads up.sh's env file.
func loadCluster(path string) (*Cluster, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	c := &Cluster{
		Kubeconfig: vars["CRISP_K8S_KUBECONFIG"], NodeName: vars["CRISP_K8S_NODE_NAME"],
		CRIEndpoint: vars["CRISP_K8S_CRI_ENDPOINT"], HostSocketPath: vars["CRISP_K8S_CRI_SOCKET"],
		Kubectl:    vars["CRISP_K8S_KUBECTL"],
		ImageCrisp: vars["CRISP_K8S_IMAGE_CRISP"], ImageBusybox: vars["CRISP_K8S_IMAGE_BUSYBOX"], ImagePause: vars["CRISP_K8S_IMAGE_PAUSE"],
		Version: vars["CRISP_K8S_VERSION"], KubeletLog: vars["CRISP_K8S_KUBELET_LOG"], Dir: vars["CRISP_K8S_DIR"],
	}
	if name := vars["CRISP_K8S_CRIO_NODE_NAME"]; name != "" {
		c.CRIO = &Node{Name: name, CRIEndpoint: vars["CRISP_K8S_CRIO_CRI_ENDPOINT"], HostSocketPath: vars["CRISP_K8S_CRIO_CRI_SOCKET"],
			Dir: vars["CRISP_K8S_CRIO_DIR"], Version: vars["CRISP_K8S_CRIO_VERSION"], KubeletLog: vars["CRISP_K8S_CRIO_KUBELET_LOG"]}
	}
	for k, v := range map[string]string{"CRISP_K8S_KUBECONFIG": c.Kubeconfig, "CRISP_K8S_NODE_NAME": c.NodeName,
		"CRISP_K8S_CRI_ENDPOINT": c.CRIEndpoint, "CRISP_K8S_KUBECTL": c.Kubectl, "CRISP_K8S_IMAGE_CRISP": c.ImageCrisp} {
		if v == "" {
			return nil, fmt.Errorf("%s: %s is missing", path, k)
		}
	}
	return c, nil
}

// runScript runs scripts/NAME with args for at most timeout, without the
// CRI and Kubernetes settings a developer's shell may carry (env added).
func runScript(timeout time.Duration, name string, args ...string) ([]byte, error) {
	return runScriptEnv(timeout, nil, name, args...)
}

func runScriptEnv(timeout time.Duration, env []string, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(suite.repo, "scripts", name)}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Dir = suite.repo
	return cmd.CombinedOutput()
}

// cleanEnv is the test's environment without the CRI and Kubernetes
// settings a developer's shell may carry.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CONTAINER_RUNTIME_ENDPOINT", "IMAGE_SERVICE_ENDPOINT", "CRI_CONFIG_FILE", "KUBECONFIG":
			continue
		}
		env = append(env, kv)
	}
	return env
}
