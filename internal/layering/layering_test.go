package layering

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/crisp-cri/crisp"

type pkg struct {
	ImportPath string
	Deps       []string
}

// listPackages returns every package of the module with its transitive deps.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	return pkgs
}

// rules: a package under the prefix must not depend (transitively) on any
// of the forbidden import path prefixes.
var rules = []struct {
	pkg       string
	forbidden []string
	why       string
}{
	{"internal/mockruntime", []string{module + "/internal/client", module + "/internal/transport", module + "/internal/probe", module + "/internal/tty", module + "/cmd/", "k8s.io/client-go"},
		"the mock must share no code with the client side, or it shares its bugs"},
	{"internal/transport", []string{"google.golang.org/grpc", "k8s.io/cri-api", "github.com/spf13/cobra", module + "/internal/client", module + "/internal/probe", module + "/internal/mockruntime"},
		"transport knows URLs and streams, not gRPC or cobra"},
	{"internal/transport/remotecommand", []string{module + "/internal/transport/portforward"},
		"exec and attach share nothing with port-forward but what the transport package holds"},
	{"internal/transport/portforward", []string{module + "/internal/transport/remotecommand"},
		"port-forward shares nothing with exec and attach but what the transport package holds"},
	{"internal/tty", []string{"k8s.io/", "google.golang.org/grpc", "github.com/spf13/cobra", module + "/internal/"},
		"tty knows terminals, not protocols"},
	{"internal/client", []string{"k8s.io/client-go", "github.com/spf13/cobra", module + "/internal/transport", module + "/internal/probe", module + "/internal/mockruntime"},
		"client owns CRI gRPC, not streaming or the CLI"},
	{"internal/probe", []string{"github.com/spf13/cobra", module + "/cmd/", module + "/internal/mockruntime"},
		"probe returns reports as data; printing and flags live in cmd/"},
	{"internal/demo", []string{"github.com/spf13/cobra", module + "/cmd/", module + "/internal/probe"},
		"the demo drives the client side against the mock (so it may import client, transport, tty and mockruntime) but runs crisp's commands through the runner cmd/ gives it: it knows no command line"},
	{"internal/cmdutil", []string{module + "/cmd/", module + "/internal/probe", module + "/internal/mockruntime", module + "/internal/session", module + "/internal/completion", module + "/internal/demo"},
		"cmdutil is what every command shares (factory, usage errors, exit policy, shared flags): it sits below the packages that hold the commands' logic"},
	{"internal/session", []string{module + "/cmd/", module + "/internal/probe", module + "/internal/mockruntime"},
		"session runs exec's, attach's and port-forward's sessions; it knows no command line beyond cmdutil's flags and nothing of probe or the mock"},
	{"internal/completion", []string{module + "/cmd/", module + "/internal/transport", module + "/internal/probe", module + "/internal/mockruntime"},
		"completion lists containers and pods through the CRI client; it knows no streaming"},
	{"cmd/crisp", []string{"k8s.io/client-go/kubernetes"},
		"the clientset registers every API group at init, paid by every crisp command (crisp version's budget is a few ms)"},
	{"internal/fleet", []string{"k8s.io/client-go/kubernetes", "github.com/spf13/cobra", module + "/cmd/", module + "/internal/mockruntime", module + "/internal/session", module + "/internal/tty"},
		"fleet drives the API server through client-go's REST client with core/v1 alone (the clientset registers every API group at start-up) and knows no command line or terminal"},
	{"internal/junit", []string{module + "/internal/", module + "/cmd/"},
		"junit is the XML shape smoke and report share: it knows nothing of either"},
	{"internal/diag", []string{module + "/cmd/", module + "/internal/mockruntime", module + "/internal/session"},
		"diag runs probe, smoke and bench for cmd/crisp on internal/probe's checks; it knows nothing of the mock or of exec's sessions"},
	{"internal/helptext", []string{module + "/", "k8s.io/", "google.golang.org/grpc", "github.com/spf13/cobra"},
		"helptext is the commands' help as text files: it imports nothing, so any package (the docs' generator included) may read it"},
	{"internal/input", []string{module + "/internal/", module + "/cmd/", "k8s.io/", "google.golang.org/grpc", "github.com/spf13/cobra"},
		"input bounds and interrupts what crisp reads from paths and stdin, whatever it is: it knows nothing of crisp"},
	{"internal/testkit", []string{module + "/internal/", module + "/cmd/", "k8s.io/", "google.golang.org/grpc", "github.com/spf13/cobra"},
		"the tests of every package share the kit, the mock's included: it must import nothing of crisp's, or the mock's tests would share client code"},
}

func TestLayering(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		if strings.HasSuffix(rel, "/mocktest") {
			continue // a test helper: it plays the client against the mock
		}
		for _, r := range rules {
			if rel != r.pkg && !strings.HasPrefix(rel, r.pkg+"/") {
				continue
			}
			for _, dep := range p.Deps {
				for _, bad := range r.forbidden {
					if strings.HasPrefix(dep, bad) {
						t.Errorf("%s depends on %s: %s", rel, dep, r.why)
					}
				}
			}
		}
	}
}

// TestNoStdoutOrExitOutsideMain keeps os.Stdout and os.Exit in cmd/crisp:
// deep code writes to injected streams and returns errors.
func TestNoStdoutOrExitOutsideMain(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "grep", "-n", "-E", `os\.Stdout|os\.Exit\(|fmt\.Print(f|ln)?\(`, "--", "internal/*.go", ":!*_test.go").CombinedOutput()
	if err != nil && len(out) == 0 {
		return // git grep exits 1 when nothing matches
	}
	if err != nil && !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("git grep: %v: %s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// file:line:code; a mention in a comment is no call.
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.HasPrefix(strings.TrimSpace(parts[2]), "//") {
			continue
		}
		if line != "" {
			t.Errorf("stdout or exit outside cmd/crisp: %s", line)
		}
	}
}
