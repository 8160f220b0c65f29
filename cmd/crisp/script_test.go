package main

// The end-to-end harness: testscript runs testdata/script/*.txtar with the
// crisp binary (built once per run: scriptCrisp; write `exec crisp ...`)
// against a mock runtime each script starts for itself.
//
// Commands scripts can use besides testscript's own (exec, stdout, stderr,
// cmp, env, wait, kill, ...):
//
//	mock start [--profile P] [--fault F]... [--stream-addr A]
//	    [--tls-dir DIR [--tls-client-auth]]
//	    an in-process mock runtime on a short socket; sets
//	    CONTAINER_RUNTIME_ENDPOINT, MOCK_ENDPOINT, STREAM_ADDR; log in
//	    $WORK/mock.log; closed when the script ends
//	mock pod [--var V] [--namespace NS] [--label K=V]... NAME      sets $POD
//	mock container [--var V] [--pod ID] [--image I] [--tty] [--stdin]
//	    [--stdin-once] [--label K=V]... [--env K=V]... [--no-start]
//	    NAME [-- CMD...]                                           sets $CTR
//	mock stop-container|rm-container|stop-pod|rm-pod ID
//	mock stop-stream | mock start-stream | mock close
//	exitcode N PROG [ARGS...]       like exec, and the exit status must be N
//	sha256file [--var V] FILE       prints (or sets V to) the file's hex SHA-256
//	genfile [--seed N] FILE SIZE    deterministic pseudo-random bytes (64K, 64M)
//	waitfor [--timeout D] FILE REGEXP | waitfor [--timeout D] --port HOST:PORT
//	echoserver [--var V] [--addr A] TCP echo on loopback; sets $ECHO_PORT
//	tcpcopy [--timeout D] [--n N | --echo] ADDR IN OUT
//	    send IN, write what comes back to OUT (half-closes unless --n/--echo)
//	sharedprefix [--var V] FILE     shortest prefix two of FILE's IDs share
//
// Conditions: [ci] (CI=true), [root]. Every script gets an empty crictl
// config file (CRI_CONFIG_FILE) so the host's /etc/crictl.yaml stays out.
// Waits are bounded (scriptCallTimeout) and never measure anything.
// A background crisp writes where waitfor can see it with
// `exec sh -c 'exec crisp port-forward ... >pf.out 2>&1' &` (sh's exec, so
// signals reach crisp).

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// scriptCallTimeout bounds every CRI call the harness makes and is the
// default of waitfor and tcpcopy. It is a guard against hangs, never a
// measurement.
const scriptCallTimeout = 20 * time.Second

// TestMain lets this test binary act as the crisp command (bash completion
// calls it back on $PATH), removes the crisp built for the scripts, and
// checks for leaked goroutines once every test (scripts included) is done,
// with a grace period: spdystream's Connection.Close holds a goroutine up to
// a second to report a close error (the mock's TLS connections give one when
// the client is already gone); bounded, not a leak.
func TestMain(m *testing.M) {
	checked := testkit.LeakChecked{M: m, Grace: testkit.LeakGrace, Opts: []goleak.Option{testkit.StreamingServerStuck()}}
	testscript.Main(thenRemove{checked, &scriptCrisp}, map[string]func(){
		"crisp": func() { os.Exit(Main(os.Args[1:], systemStreams())) },
	})
}

// scriptCrisp is the crisp that scripts and the tests running crisp as a
// process run: built as users build it, not this race-instrumented test
// binary, under which the scripts took twice as long (361 s, 185 s now,
// alone on 2 cores). The mock in the test process keeps the race detector,
// crisp's packages run under it in their own tests, and the real-runtime
// suites run a plain build too.
var scriptCrisp = testkit.GoBinary{Pkg: "./cmd/crisp"}

// thenRemove runs the tests, then deletes the built program.
type thenRemove struct {
	testkit.Runner
	bin *testkit.GoBinary
}

func (r thenRemove) Run() int {
	defer r.bin.Remove()
	return r.Runner.Run()
}

func TestScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("the end-to-end scripts take minutes; skipped under -short")
	}
	testscript.Run(t, scriptParams(filepath.Join("..", "..", "testdata", "script")))
}

// scriptParams is the harness configuration; other tests may run their own
// script folders with it.
func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Values[scriptStateKey{}] = &scriptState{}
			bin, err := scriptCrisp.Build()
			if err != nil {
				return err
			}
			env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			// Keep the host's /etc/crictl.yaml (and whatever runtime it
			// names) out of scripts: an empty config file of their own.
			cfg := filepath.Join(env.WorkDir, ".crictl.yaml")
			if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
				return err
			}
			env.Setenv("CRI_CONFIG_FILE", cfg)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "ci":
				return os.Getenv("CI") == "true", nil
			case "root":
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q (crisp's are ci and root)", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mock":         cmdMock,
			"sha256file":   cmdSha256File,
			"genfile":      cmdGenFile,
			"waitfor":      cmdWaitFor,
			"echoserver":   cmdEchoServer,
			"tcpcopy":      cmdTCPCopy,
			"exitcode":     cmdExitCode,
			"sharedprefix": cmdSharedPrefix,
			"varfrom":      cmdVarFrom, // portforward_test.go
			"freeport":     cmdFreePort,
		},
	}
}

type scriptStateKey struct{}

// scriptState is what one script's custom commands share.
type scriptState struct {
	mu sync.Mutex
	// env is the mock runtime and a CRI connection to it, once `mock start`
	// ran; nil again after `mock close`.
	env     *mocktest.Env
	podCfgs map[string]*runtimeapi.PodSandboxConfig
	log     *lockedFile
}

func state(ts *testscript.TestScript) *scriptState {
	return ts.Value(scriptStateKey{}).(*scriptState)
}

// lockedFile is the mock's log ($WORK/mock.log): its Logf runs on many
// goroutines, and may run after the script's last command.
type lockedFile struct {
	mu     sync.Mutex
	f      *os.File
	closed bool
}

func (l *lockedFile) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		_, _ = fmt.Fprintf(l.f, format+"\n", args...)
	}
}

func (l *lockedFile) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		_ = l.f.Close()
	}
}
