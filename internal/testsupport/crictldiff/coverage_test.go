package crictldiff

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// A verb in crictl's help: "   attach   Attach to ...", "   events, event   ...".
	helpVerb = regexp.MustCompile(`^   ([a-z][a-z-]*)(, [a-z]+)*\s{2,}`)
	// A flag in an OPTIONS line: "   --stdin, -i   ...", "--tls-sni value, --tls-server-name value".
	helpFlag = regexp.MustCompile(`(?:^|, )(--?[a-z][a-z0-9-]*)`)
)

// TestCorpusCoversCrictlHelp reads crictl's own help, every verb's and
// the global one, and checks that the corpus runs each verb and each flag
// name and shorthand, or says on a "# not-run:" line why not: a flag a new
// crictl adds fails here until the corpus has it.
func TestCorpusCoversCrictlHelp(t *testing.T) {
	crictl := crictlBinary(t, repoRoot(t))
	data, err := os.ReadFile(filepath.Join("testdata", "corpus.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := ParseCorpus(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	notRun := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "# not-run: "); ok {
			words, _, _ := strings.Cut(rest, ": ")
			for _, w := range strings.Fields(words) {
				notRun[w] = true
			}
		}
	}
	// covered says whether verb (empty: global) has flag in some case,
	// or flag is named as not run.
	covered := func(verb, flag string) bool {
		if notRun[flag] {
			return true
		}
		for _, c := range cases {
			verbAt := -1
			for i, a := range c.Args {
				if a == verb {
					verbAt = i
					break
				}
			}
			for i, a := range c.Args {
				name, _, _ := strings.Cut(a, "=")
				if name == flag && (verb == "" && (verbAt < 0 || i < verbAt) || verb != "" && verbAt >= 0 && i > verbAt) {
					return true
				}
			}
		}
		return false
	}
	help := func(args ...string) string {
		out, err := exec.Command(crictl, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("crictl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	var verbs []string
	section := ""
	for _, line := range strings.Split(help("--help"), "\n") {
		if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " ") {
			section = line
			continue
		}
		switch section {
		case "COMMANDS:":
			if m := helpVerb.FindStringSubmatch(line); m != nil && m[1] != "help" && m[1] != "completion" {
				verbs = append(verbs, m[1])
			}
		case "GLOBAL OPTIONS:":
			checkFlags(t, "crictl", line, func(f string) bool { return covered("", f) })
		}
	}
	if len(verbs) < 30 {
		t.Fatalf("read only %d verbs from crictl --help: %q", len(verbs), verbs)
	}
	for _, verb := range verbs {
		ran := notRun[verb]
		for _, c := range cases {
			ran = ran || strings.Contains(" "+c.Line+" ", " "+verb+" ")
		}
		if !ran {
			t.Errorf("the corpus never runs crictl %s", verb)
		}
		inOptions := false
		for _, line := range strings.Split(help(verb, "--help"), "\n") {
			if strings.HasSuffix(line, "OPTIONS:") {
				inOptions = true
				continue
			}
			if inOptions && strings.HasPrefix(line, "   -") {
				checkFlags(t, "crictl "+verb, line, func(f string) bool { return covered(verb, f) })
			}
		}
	}
}

// checkFlags checks every flag name an OPTIONS line gives.
func checkFlags(t *testing.T, where, line string, covered func(string) bool) {
	t.Helper()
	opts, _, _ := strings.Cut(strings.TrimSpace(line), "  ") // the names, before the usage
	for _, m := range helpFlag.FindAllStringSubmatch(opts, -1) {
		flag := m[1]
		if flag == "--help" || flag == "-h" {
			continue
		}
		if !covered(flag) {
			t.Errorf("%s %s: no corpus line uses it and no \"# not-run:\" line names it", where, flag)
		}
	}
}
