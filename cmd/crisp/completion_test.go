package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCompletionScriptsUpToDate fails when the checked-in scripts under
// completions/ differ from what the command tree generates now.
func TestCompletionScriptsUpToDate(t *testing.T) {
	f := &factory{Streams: ioStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	root := newRootCommand(f)
	for _, s := range completionShells() {
		var buf bytes.Buffer
		if err := s.gen(root, &buf); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		path := filepath.Join("..", "..", "completions", s.file)
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run `make completions`)", s.name, err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s is stale: run `make completions` and commit", path)
		}
	}
}

func TestCompletionCommandRejectsUnknownShell(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main([]string{"completion", "tcsh"}, ioStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	if code != exitUsage {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitUsage, errOut.String())
	}
	if !bytes.Contains(errOut.Bytes(), []byte(`unknown shell "tcsh"`)) {
		t.Errorf("stderr does not name the shell: %s", errOut.String())
	}
}
