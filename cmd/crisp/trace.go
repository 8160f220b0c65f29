package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/base/input"
	"github.com/crisp-cri/crisp/internal/base/tracefile"
	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// traceCmdOptions are `crisp trace`'s arguments.
type traceCmdOptions struct {
	File string
	cmdutil.Verb
}

func newTraceCommand(f *cmdutil.Factory) *cobra.Command {
	o := &traceCmdOptions{}
	return &cobra.Command{
		Use:     "trace FILE",
		Short:   "Print a --trace-file readably and summarise it",
		Long:    helpLong("trace"),
		Example: helpExample("trace"),
		Args:    cmdutil.ExactArgs(1, "a trace FILE"),
		RunE:    runOptions(f, o),
	}
}

// Complete takes FILE.
func (o *traceCmdOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	if len(args) > 0 {
		o.File = args[0]
	}
	return nil
}

// Validate has nothing to check beyond the argument count.
func (o *traceCmdOptions) Validate() error { return nil }

// Run decodes and prints the trace.
// A FIFO without a writer, or a silent one, gives way to a signal.
func (o *traceCmdOptions) Run(ctx context.Context) error {
	fh, err := input.Open(ctx, o.File)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	defer func() { _ = fh.Close() }() // read-only: a close error loses nothing
	events, err := tracefile.Decode(fh)
	if err != nil {
		return fmt.Errorf("trace: %s: %w", o.File, err)
	}
	if len(events) == 0 {
		return fmt.Errorf("trace: %s holds no trace events (write one with --trace-file FILE on exec, attach, port-forward, probe or smoke)", o.File)
	}
	return tracefile.Print(o.F.Streams.Out, events)
}
