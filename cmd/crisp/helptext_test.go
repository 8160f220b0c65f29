package main

import (
	"io/fs"
	"strings"
	"testing"
)

// TestEveryTextIsWhole checks that every command has both files, ends with
// an EXIT STATUS section, and that no file lacks its final newline.
func TestEveryTextIsWhole(t *testing.T) {
	names := helpNames()
	if len(names) == 0 {
		t.Fatal("no help texts embedded")
	}
	for _, n := range names {
		if !strings.Contains(helpLong(n), "\nEXIT STATUS\n") {
			t.Errorf("%s.txt has no EXIT STATUS section", n)
		}
		_ = helpExample(n) // panics when missing or empty
	}
	entries, err := fs.ReadDir(helpFiles, "help")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := helpFiles.ReadFile("help/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(b), "\n") {
			t.Errorf("%s does not end with a newline", e.Name())
		}
		if n, ok := strings.CutSuffix(e.Name(), helpExampleSuffix); ok {
			if _, err := helpFiles.ReadFile("help/" + n + ".txt"); err != nil {
				t.Errorf("%s has no %s.txt", e.Name(), n)
			}
		}
	}
}

func TestMissingTextPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Long of an unknown command did not panic")
		}
	}()
	helpLong("no-such-command")
}
