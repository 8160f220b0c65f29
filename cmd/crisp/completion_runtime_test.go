package main

// Completion from the runtime, through cobra's __complete command (what the
// shell scripts run) and through the bash script itself.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
)

const (
	cplPodA    = "dddd1111dddd1111dddd1111dddd1111dddd1111dddd1111dddd1111dddd1111"
	cplPodB    = "dddd2222dddd2222dddd2222dddd2222dddd2222dddd2222dddd2222dddd2222"
	cplSleepA  = "eeee1111eeee1111eeee1111eeee1111eeee1111eeee1111eeee1111eeee1111"
	cplSleepB  = "eeee2222eeee2222eeee2222eeee2222eeee2222eeee2222eeee2222eeee2222"
	cplDone    = "ffff3333ffff3333ffff3333ffff3333ffff3333ffff3333ffff3333ffff3333"
	cplImageBB = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
)

// completionRuntime serves two pods, each with a running container called
// nc-sleep (a name shared across pods, as Kubernetes makes them), and an
// exited one; one image with two tags. It returns the flags that point
// crisp at it.
func completionRuntime(t *testing.T) []string {
	t.Helper()
	f := &clienttest.Fake{}
	for _, p := range []struct{ id, name string }{{cplPodA, "nc-a"}, {cplPodB, "nc-b"}} {
		f.AddPod(&runtimeapi.PodSandbox{Id: p.id, State: runtimeapi.PodSandboxState_SANDBOX_READY,
			Metadata: &runtimeapi.PodSandboxMetadata{Name: p.name, Namespace: "default"}})
	}
	for _, c := range []struct {
		id, pod, name string
		state         runtimeapi.ContainerState
	}{
		{cplSleepA, cplPodA, "nc-sleep", runtimeapi.ContainerState_CONTAINER_RUNNING},
		{cplSleepB, cplPodB, "nc-sleep", runtimeapi.ContainerState_CONTAINER_RUNNING},
		{cplDone, cplPodA, "nc-setup", runtimeapi.ContainerState_CONTAINER_EXITED},
	} {
		f.AddContainer(&runtimeapi.Container{Id: c.id, PodSandboxId: c.pod, State: c.state,
			Metadata: &runtimeapi.ContainerMetadata{Name: c.name}, Image: &runtimeapi.ImageSpec{Image: "busybox"}})
	}
	f.AddImage(&runtimeapi.Image{Id: cplImageBB, RepoTags: []string{"docker.io/library/busybox:1.36", "localhost:5000/busybox:dev"}})
	endpoint := clienttest.Serve(t, f)
	cfg := filepath.Join(t.TempDir(), "crictl.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"-c", cfg, "--runtime-endpoint", endpoint}
}

// complete runs `crisp __complete ARGS...` and returns the completions
// offered (the words, descriptions cut off) and the whole lines.
func complete(t *testing.T, args ...string) (words, lines []string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(append([]string{"__complete"}, args...), cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	if code != cmdutil.ExitOK {
		t.Fatalf("crisp __complete %q: exit %d; stderr: %s", args, code, errOut.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(line, ":") {
			break // the directive
		}
		lines = append(lines, line)
		word, _, _ := strings.Cut(line, "\t")
		words = append(words, word)
	}
	return words, lines
}

func TestCompleteSharedContainerNameOnce(t *testing.T) {
	rt := completionRuntime(t)
	words, lines := complete(t, append(rt, "logs", "nc-s")...)
	if want := []string{"nc-setup", "nc-sleep"}; !slices.Equal(words, want) {
		t.Fatalf("logs nc-s offers %q, want %q (each name once)", words, want)
	}
	if !strings.Contains(lines[1], "2 containers have this name; give an ID: eeee1111eeee1 eeee2222eeee2") {
		t.Errorf("the shared name's description does not say it is shared: %q", lines[1])
	}
}

func TestCompleteExecOffersRunningContainersOnly(t *testing.T) {
	rt := completionRuntime(t)
	for _, verb := range []string{"exec", "attach"} {
		words, _ := complete(t, append(rt, verb, "")...)
		if want := []string{cplSleepA, cplSleepB, "nc-sleep"}; !slices.Equal(words, want) {
			t.Errorf("%s offers %q, want the running containers only: %q", verb, words, want)
		}
	}
	if words, _ := complete(t, append(rt, "logs", "")...); !slices.Contains(words, "nc-setup") {
		t.Errorf("logs does not offer the exited container: %q", words)
	}
}

func TestCompleteImagesAndFormats(t *testing.T) {
	rt := completionRuntime(t)
	tags := []string{"docker.io/library/busybox:1.36", "localhost:5000/busybox:dev"}
	for _, args := range [][]string{{"rmi", ""}, {"inspecti", ""}, {"pull", ""}, {"rmi", tags[1], ""}, {"debug", "--image", ""}, {"ps", "--image", ""}} {
		if words, _ := complete(t, append(rt, args...)...); !slices.Equal(words, tags) {
			t.Errorf("%q offers %q, want the tags %q", args, words, tags)
		}
	}
	if words, _ := complete(t, append(rt, "rmi", "sha256:3")...); !slices.Equal(words, []string{cplImageBB}) {
		t.Errorf("an ID prefix offers %q, want the image ID", words)
	}
	// crictl's -r before the verb is the endpoint, after it logs' own -r.
	rt[2] = "-r"
	if words, _ := complete(t, append(rt, "logs", "-r", "nc-setup")...); !slices.Equal(words, []string{"nc-setup"}) {
		t.Errorf("-r ENDPOINT logs -r offers %q, want the container", words)
	}
	if words, _ := complete(t, append(rt, "rm", cplDone, "nc-se")...); !slices.Equal(words, []string{"nc-setup"}) {
		t.Errorf("rm's second argument offers %q, want the container", words)
	}
	if words, _ := complete(t, append(rt, "stopp", "nc-a", "nc-")...); !slices.Equal(words, []string{"nc-a", "nc-b"}) {
		t.Errorf("stopp's second argument offers %q, want the pods", words)
	}
	if words, _ := complete(t, append(rt, "ps", "--pod", "nc-")...); !slices.Equal(words, []string{"nc-a", "nc-b"}) {
		t.Errorf("ps --pod nc- offers %q, want the pods", words)
	}
	want := []string{"table", "json", "yaml", "go-template"}
	for _, args := range [][]string{{"ps", "-o", ""}, {"-o", ""}, {"images", "--output", ""}} {
		if words, _ := complete(t, append(rt, args...)...); !slices.Equal(words, want) {
			t.Errorf("%q offers %q, want %q", args, words, want)
		}
	}
}

// bashComplete runs crisp's bash completion script in bash for the command
// line line (the cursor at its end) with the TAB key, and returns COMPREPLY:
// what bash puts on the line (its common prefix) and lists.
func bashComplete(t *testing.T, line string, env ...string) []string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("crisp"); err != nil {
		t.Fatalf("no crisp on $PATH (testscript.Main puts this test binary there): %v", err)
	}
	var script, errOut bytes.Buffer
	if code := Main([]string{"completion", "bash"}, cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &script, ErrOut: &errOut}); code != 0 {
		t.Fatalf("completion bash: exit %d: %s", code, errOut.String())
	}
	path := filepath.Join(t.TempDir(), "crisp.bash")
	if err := os.WriteFile(path, script.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// What readline sets before calling the completion function: the
	// words split at COMP_WORDBREAKS, as bash itself splits them.
	driver := `source "$1"
COMP_LINE=$2; COMP_POINT=${#COMP_LINE}; COMP_TYPE=9; COMP_KEY=9; COLUMNS=120
read -ra COMP_WORDS <<<"$(sed 's/\([:=]\)/ \1 /g' <<<"$COMP_LINE")"
case "$COMP_LINE" in *" ") COMP_WORDS+=("") ;; esac
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
__start_crisp
printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", driver, "bash", path, line)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash completion of %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// commonPrefix is what bash inserts for completions: their longest common
// prefix.
func commonPrefix(words []string) string {
	if len(words) == 0 {
		return ""
	}
	p := words[0]
	for _, w := range words[1:] {
		for !strings.HasPrefix(w, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

func TestBashCompletesSharedNameCleanly(t *testing.T) {
	rt := completionRuntime(t)
	env := []string{"CRI_CONFIG_FILE=" + rt[1], "CONTAINER_RUNTIME_ENDPOINT=" + rt[3]}
	for _, c := range []struct{ line, insert string }{
		// The bug: two "nc-sleep  (ID)" lines left "nc-sleep  (" on the line.
		{"crisp logs nc-sl", "nc-sleep"},
		{"crisp exec nc-s", "nc-sleep"},
		{"crisp ps -o ya", "yaml"},
		// bash splits the word at ':'; the script completes the part after it.
		{"crisp rmi localhost:5", "5000/busybox:dev"},
		{"crisp rmi docker.io/library/busybox:1", "1.36"},
		// An endpoint on the command line is one word, its ':' included.
		{"crisp -c " + rt[1] + " -r " + rt[3] + " logs nc-sl", "nc-sleep"},
	} {
		if got := commonPrefix(bashComplete(t, c.line, env...)); got != c.insert {
			t.Errorf("%q: bash inserts %q, want %q", c.line, got, c.insert)
		}
	}
}
