package containerd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/testsupport/crictldiff"
)

// corpusRuntime is the runtime the crictl corpus runs on here.
const corpusRuntime = "containerd-2.4"

// TestCrictlCorpusOnContainerd runs the read-only lines of crictldiff's
// corpus (internal/testsupport/crictldiff/testdata/corpus.txt, which `make
// test` runs on the mock) through crictl and crisp against containerd 2.4,
// {POD} and {CTR} being the harness's pod and busybox container, and
// compares exit status and normalised stdout. A line may differ when
// docs/crictl.md lists it: among the intentional differences, or under
// "Differences on containerd" (what the runtime, not crisp, makes differ).
// Lines that change the runtime, and those that need the corpus's exited
// container, are left to the mock: this runtime is shared with the other
// tests.
func TestCrictlCorpusOnContainerd(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		if h.Name != corpusRuntime {
			t.Skipf("the corpus runs on %s only", corpusRuntime)
		}
		cases := readCorpus(t)
		intentional := readCrictlDifferences(t, crictldiff.IntentionalHeading)
		onContainerd := readCrictlDifferences(t, crictldiff.ContainerdHeading)
		for line := range onContainerd {
			if !slices.ContainsFunc(cases, func(c crictldiff.Case) bool { return c.Line == line }) {
				t.Errorf("docs/crictl.md's containerd table lists %q, which is not a read-only line of the corpus run here", line)
			}
		}
		dir, err := os.MkdirTemp("", "crisp-corpus")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		cfg := fmt.Sprintf("runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: 10\n", h.Endpoint, h.Endpoint)
		if err := os.WriteFile(filepath.Join(dir, "crictl.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		fx := crictldiff.Fixture{Pod: h.Pod, Container: h.Ctr, Dir: dir}
		// An untagged image (other tests leave some: a tag imported again
		// moves to the new image) has no place of its own in crictl's sort:
		// it stays where the runtime's order puts it, and containerd's order
		// changes from call to call. Then image listings compare by lines.
		untagged := hasUntaggedImage(t, fx)
		for _, c := range cases {
			t.Run(c.Line, func(t *testing.T) {
				want := runCorpusSide(t, suite.crictl, fx, c)
				got := runCorpusSide(t, crispBinary(t), fx, c)
				var found []string
				if !crictldiff.SameStatus(want.ExitCode, got.ExitCode) {
					found = append(found, "status")
				}
				d, listed := onContainerd[c.Line]
				if !listed {
					d, listed = intentional[c.Line]
				}
				wantOut, gotOut := fx.Normalize(want.Stdout), fx.Normalize(got.Stdout)
				if (listed && d.What == "order") || (untagged && listsImages(c)) || hasArg(c, "inspecti") {
					// The runtime's order varies: lines compared, not their order.
					wantOut, gotOut = sortedLines(wantOut), sortedLines(gotOut)
				}
				if wantOut != gotOut {
					found = append(found, "stdout")
				}
				switch {
				case listed && d.What == "all":
					found = nil
				case listed && d.What == "figures":
					found = slices.DeleteFunc(found, func(w string) bool { return w == "stdout" })
				case listed:
					found = slices.DeleteFunc(found, func(w string) bool { return w == d.What })
				}
				if len(found) > 0 {
					t.Errorf("%s differs from crictl's on %s (not listed in docs/crictl.md):\ncrictl: %v\ncrisp: %v",
						strings.Join(found, " and "), h.Label, want, got)
				}
			})
		}
	})
}

// readCorpus is the corpus's lines that this runtime can run: read-only,
// and with no need of the mock's exited container.
func readCorpus(t *testing.T) []crictldiff.Case {
	t.Helper()
	f, err := os.Open(filepath.Join(suite.repo, "internal", "testsupport", "crictldiff", "testdata", "corpus.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	all, err := crictldiff.ParseCorpus(f)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(all, func(c crictldiff.Case) bool { return !c.ReadOnly() || strings.Contains(c.Line, "{EXITED}") })
}

func readCrictlDifferences(t *testing.T, heading string) map[string]crictldiff.Difference {
	t.Helper()
	f, err := os.Open(filepath.Join(suite.repo, "docs", "crictl.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	d, err := crictldiff.ParseDifferencesUnder(f, heading)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// runCorpusSide runs one corpus line with bin, as the mock's corpus test
// does: the config file in the fixture's folder, which is also HOME and
// the working folder.
func runCorpusSide(t *testing.T, bin string, fx crictldiff.Fixture, c crictldiff.Case) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, fx.Expand(c.Args)...)
	cmd.Env = append(cleanEnv(), "CRI_CONFIG_FILE="+filepath.Join(fx.Dir, "crictl.yaml"), "HOME="+fx.Dir)
	cmd.Dir = fx.Dir
	cmd.WaitDelay = commandTimeout
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	return run(cmd, nil)
}

// hasUntaggedImage reports whether the runtime holds an image without a tag.
func hasUntaggedImage(t *testing.T, fx crictldiff.Fixture) bool {
	t.Helper()
	r := runCorpusSide(t, suite.crictl, fx, crictldiff.Case{Line: "images -o json", Args: []string{"images", "-o", "json"}})
	var list struct {
		Images []struct {
			RepoTags []string `json:"repoTags"`
		} `json:"images"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil {
		t.Fatalf("crictl images -o json: %v\n%v", err, r)
	}
	for _, img := range list.Images {
		if len(img.RepoTags) == 0 {
			t.Logf("the runtime holds an untagged image: image listings compare by lines")
			return true
		}
	}
	return false
}

// listsImages reports whether c is crictl images (or an alias of it).
func listsImages(c crictldiff.Case) bool {
	return hasArg(c, "images") || hasArg(c, "image") || hasArg(c, "img")
}

// hasArg reports whether c has the word arg (a verb, global flags before it
// or not). inspecti with selectors prints the images in the runtime's
// order, which containerd changes from call to call: compared by lines.
func hasArg(c crictldiff.Case, arg string) bool { return slices.Contains(c.Args, arg) }

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
