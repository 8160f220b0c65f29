package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/completion"
)

// completionOptions are `crisp completion`'s argument and dependencies.
type completionOptions struct {
	Shell string

	root  *cobra.Command
	out   io.Writer
	shell completion.Shell
}

func newCompletionCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:       "completion bash|zsh|fish|powershell",
		Short:     "Print a shell completion script (container and pod names complete from the runtime)",
		ValidArgs: completion.ShellNames(),
		Example:   helpExample("completion"),
		Long:      helpLong("completion"),
		Args:      cmdutil.ExactArgs(1, "a shell (bash, zsh, fish or powershell)"),
		RunE:      runOptions(f, &completionOptions{}),
	}
}

// Complete takes the shell from the arguments and the command tree from cmd.
func (o *completionOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.Shell, o.root, o.out = args[0], cmd.Root(), f.Streams.Out
	return nil
}

// Validate rejects a shell crisp has no script for.
func (o *completionOptions) Validate() (err error) {
	if o.shell, err = completion.FindShell(o.Shell); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return nil
}

// Run prints the script.
func (o *completionOptions) Run(context.Context) error { return o.shell.Gen(o.root, o.out) }

// genDocsOptions are `crisp gen-docs`'s flags.
type genDocsOptions struct {
	ManDir, CompletionDir string

	root *cobra.Command
}

// newGenDocsCommand writes man pages and completion scripts; hidden, for
// `make man` and `make completions`.
func newGenDocsCommand(f *cmdutil.Factory) *cobra.Command {
	o := &genDocsOptions{}
	cmd := &cobra.Command{
		Use:     "gen-docs [--man DIR] [--completions DIR]",
		Short:   "Generate man pages and completion scripts",
		Hidden:  true,
		Example: helpExample("gen-docs"),
		Long:    helpLong("gen-docs"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, o),
	}
	cmd.Flags().StringVar(&o.ManDir, "man", "", "write man pages into DIR")
	cmd.Flags().StringVar(&o.CompletionDir, "completions", "", "write completion scripts into DIR")
	return cmd
}

// Complete takes the command tree to document from cmd.
func (o *genDocsOptions) Complete(_ *cmdutil.Factory, cmd *cobra.Command, _ []string) error {
	o.root = cmd.Root()
	return nil
}

// Validate accepts any folders: writing them is where errors show.
func (o *genDocsOptions) Validate() error { return nil }

// Run writes the man pages and the completion scripts.
func (o *genDocsOptions) Run(context.Context) error {
	return completion.WriteDocs(o.root, crispVersion, o.ManDir, o.CompletionDir)
}

// quietDial dials the runtime without the endpoint notice on stderr: a
// completion's output is read by the shell.
func quietDial(f *cmdutil.Factory) completion.Dial {
	return func() (*client.Client, error) {
		quiet := *f
		quiet.Streams.ErrOut = io.Discard
		return quiet.Client()
	}
}

func completeContainers(f *cmdutil.Factory) cobra.CompletionFunc {
	return completion.Containers(quietDial(f))
}
func completePods(f *cmdutil.Factory) cobra.CompletionFunc { return completion.Pods(quietDial(f)) }

// registerCompletions completes arguments and flag values from the runtime:
// containers (running ones where nothing else can be reached), pods and
// images by ID and name, and -o's formats.
func registerCompletions(root *cobra.Command, f *cmdutil.Factory) {
	dial := quietDial(f)
	completion.Register(root, completion.Containers(dial, completion.Running...), "exec", "attach")
	completion.Register(root, completion.Containers(dial), "stats", "logs")
	completion.Register(root, completion.EveryArg(completion.Containers(dial)), "inspect", "start", "stop", "rm", "update", "checkpoint")
	completion.Register(root, completion.Pods(dial), "port-forward", "statsp", "create")
	completion.Register(root, completion.EveryArg(completion.Pods(dial)), "inspectp", "stopp", "rmp")
	completion.Register(root, completion.Images(dial), "pull", "rmi", "inspecti", "images")
	completion.RegisterFlag(root, "pod", completion.Pods(dial))
	completion.RegisterFlag(root, "image", completion.Images(dial), "fleet")    // fleet's --image is crisp's own image, for a cluster
	_ = completion.RegisterPersistentFlag(root, "output", completion.Formats()) // root defines --output: no error to act on
}
