package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// commandOptions is the shape of every crisp command, after kubectl's:
// flags bind to the fields of an options struct, and running the command is
// three steps, in this order:
//
//   - Complete fills in what the flags alone do not give: positional
//     arguments, values derived from other flags (cmd.Flags().Changed), and
//     the dependencies taken from the factory (streams, a way to reach the
//     runtime). A field a test has already set is left alone, so tests
//     inject fakes by setting fields before the command runs.
//   - Validate checks the flags and arguments (cobra's Args counts them)
//     before anything is dialled, listens, or reads a file or stdin,
//     including the shared flag groups' (TLSFlags.Validate,
//     TraceFlags.Validate, RecordFlags.Validate). Its errors are
//     cmdutil.UsageError (build them with cmdutil.UsageErrorf): Main exits
//     2 for them (125 for exec, attach and debug) and points at --help.
//     TestEveryCommandRejectsBadInputFirst holds every command to it.
//   - Run does the work, talking to the world only through the struct's
//     fields; ctx is cancelled on SIGINT, SIGTERM and SIGHUP. It reads what
//     the flags name (a config file, a password on stdin) before it dials.
//     What Run opens it closes (a deferred TraceFlags.Close,
//     RecordFlags.Close).
//
// Dependencies come one way: the options embed cmdutil.Verb, which keeps
// the factory (streams, settings, the runtime client through its Dial);
// exec, attach, cp, debug and port-forward hold session.Deps instead,
// made from the same factory, because the session layer also takes the
// streamer. A test sets Verb.F (or the deps) before the command runs.
//
// Where a feature package takes a struct (session.Exec, session.Attach,
// session.Forward), the options embed it and the flags bind to its fields:
// Run hands it over as it is, with no copy. Tests either set fields before
// the command runs (fakes for the dependencies) or, with the factory's
// RunF, replace Run to look at what Complete and Validate made of a command
// line (gh's runF, for every command).
//
// A command adopts it in its constructor:
//
//	func newFooCommand(f *cmdutil.Factory) *cobra.Command {
//		o := &fooOptions{}
//		cmd := &cobra.Command{Use: "foo ARG", Args: cmdutil.ExactArgs(1, "an ARG"), RunE: runOptions(f, o)}
//		cmd.Flags().BoolVar(&o.All, "all", false, "...")
//		return cmd
//	}
type commandOptions interface {
	Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runOptions turns o into cobra's RunE: Complete, Validate, then Run with
// the command's context, stopping at the first error. The factory's RunF,
// when set (tests), runs in Run's place, so that a test sees the completed
// and validated options without a runtime.
func runOptions(f *cmdutil.Factory, o commandOptions) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(f, cmd, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		if f.RunF != nil {
			return f.RunF(o)
		}
		return o.Run(cmd.Context())
	}
}
