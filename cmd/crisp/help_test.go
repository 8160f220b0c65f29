package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// TestEveryCommandHasExamplesAndExitStatus walks the command tree: every
// command's help must show examples and an EXIT STATUS section (hidden
// commands too: gen-docs is used by make).
func TestEveryCommandHasExamplesAndExitStatus(t *testing.T) {
	f := &cmdutil.Factory{Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, IsTerminalIn: func() bool { return false }},
		Getenv: func(string) string { return "" }}
	root := newRootCommand(f)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Name() == "help" || c.Deprecated != "" {
			return
		}
		t.Run(strings.ReplaceAll(c.CommandPath(), " ", "_"), func(t *testing.T) {
			if strings.TrimSpace(c.Example) == "" {
				t.Errorf("%s has no Example", c.CommandPath())
			}
			var help bytes.Buffer
			c.SetOut(&help)
			c.SetErr(&help)
			if err := c.Help(); err != nil {
				t.Fatal(err)
			}
			out := help.String()
			if !strings.Contains(out, "Examples:") {
				t.Errorf("%s --help shows no Examples section:\n%s", c.CommandPath(), out)
			}
			if !strings.Contains(out, "EXIT STATUS") {
				t.Errorf("%s --help has no EXIT STATUS section:\n%s", c.CommandPath(), out)
			}
			if c.Short == "" {
				t.Errorf("%s has no Short description", c.CommandPath())
			}
		})
	}
	walk(root)
}

// TestEveryHelpTextIsUsed: every text of cmd/crisp/help belongs to a
// command of the tree, which shows it (no orphan file, no command that
// builds its help elsewhere while a text file goes stale).
func TestEveryHelpTextIsUsed(t *testing.T) {
	f := &cmdutil.Factory{Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, IsTerminalIn: func() bool { return false }},
		Getenv: func(string) string { return "" }}
	root := newRootCommand(f)
	byName := map[string]*cobra.Command{root.Name(): root}
	for _, c := range root.Commands() {
		byName[c.Name()] = c
	}
	for _, n := range helpNames() {
		c := byName[n]
		switch {
		case c == nil:
			t.Errorf("help/%s.txt belongs to no command", n)
		case c.Long != helpLong(n) || c.Example != helpExample(n):
			t.Errorf("%s does not show help/%s.txt and %s.example.txt", c.CommandPath(), n, n)
		}
	}
}
