package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/completion"
)

// TestCompletionScriptsUpToDate fails when the checked-in scripts under
// completions/ differ from what the command tree generates now.
func TestCompletionScriptsUpToDate(t *testing.T) {
	f := &cmdutil.Factory{Streams: cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	root := newRootCommand(f)
	for _, s := range completion.Shells() {
		var buf bytes.Buffer
		if err := s.Gen(root, &buf); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		path := filepath.Join("..", "..", "completions", s.File)
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run `make completions`)", s.Name, err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s is stale: run `make completions` and commit", path)
		}
	}
}

func TestCompletionCommandRejectsUnknownShell(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main([]string{"completion", "tcsh"}, cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	if code != cmdutil.ExitUsage {
		t.Fatalf("exit %d, want %d; stderr: %s", code, cmdutil.ExitUsage, errOut.String())
	}
	if !bytes.Contains(errOut.Bytes(), []byte(`unknown shell "tcsh"`)) {
		t.Errorf("stderr does not name the shell: %s", errOut.String())
	}
}

// TestCompleteWay: --way completes to each command's own ways, auto first.
func TestCompleteWay(t *testing.T) {
	for verb, want := range map[string][]string{"cp": {"auto", "tar", "root"}, "debug": {"auto", "container", "host"}} {
		if words, _ := complete(t, verb, "--way", ""); !slices.Equal(words, want) {
			t.Errorf("%s --way offers %q, want %q", verb, words, want)
		}
	}
}
