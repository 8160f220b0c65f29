package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/tty"
)

// Command groups shown by `crisp --help`.
const (
	groupStreaming   = "streaming"
	groupInspection  = "inspection"
	groupImages      = "images"
	groupDiagnostics = "diagnostics"
	groupMock        = "mock"
)

func newRootCommand(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:               "crisp",
		Short:             "CRI streaming client and debugger: exec, attach, port-forward, probe",
		Long:              helpLong("crisp"),
		Example:           helpExample("crisp"),
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return f.CompleteGlobals(cmd) },
	}
	root.Version = crispVersion
	root.SetVersionTemplate("crisp version {{.Version}}\n") // crictl's words: "crictl version v1.37.0"
	root.SetIn(f.Streams.In)
	root.SetOut(f.Streams.Out)
	root.SetErr(f.Streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageError{Err: err} })

	f.Global.AddFlags(root.PersistentFlags())

	root.AddGroup(
		&cobra.Group{ID: groupStreaming, Title: "Streaming:"},
		&cobra.Group{ID: groupInspection, Title: "Inspection:"},
		&cobra.Group{ID: groupImages, Title: "Images:"},
		&cobra.Group{ID: groupLifecycle, Title: "Pods and containers:"},
		&cobra.Group{ID: groupDiagnostics, Title: "Diagnostics:"},
		&cobra.Group{ID: groupMock, Title: "Mock runtime and demo:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add(groupStreaming, newExecCommand(f), newAttachCommand(f), newPortForwardCommand(f), newCpCommand(f), newDebugCommand(f))
	add(groupInspection, newVersionCommand(f), newInfoCommand(f), newPodsCommand(f), newPsCommand(f),
		newInspectCommand(f), newInspectPodCommand(f), newImagesCommand(f), newInspectImageCommand(f),
		newStatsCommand(f), newPodStatsCommand(f), newImageFsInfoCommand(f), newEventsCommand(f), newRuntimeConfigCommand(f),
		newMetricDescsCommand(f), newMetricsPodCommand(f), newUpdateRuntimeConfigCommand(f), newConfigCommand(f))
	add(groupImages, newPullCommand(f), newRmiCommand(f))
	add(groupLifecycle, newRunPodCommand(f), newCreateCommand(f), newStartCommand(f), newRunCommand(f),
		newStopCommand(f), newRmCommand(f), newStopPodCommand(f), newRmPodCommand(f),
		newUpdateCommand(f), newCheckpointCommand(f), newLogsCommand(f))
	add(groupDiagnostics, newProbeCommand(f), newSmokeCommand(f), newDoctorCommand(f), newBenchCommand(f), newReportCommand(f), newFleetCommand(f), newTraceCommand(f))
	add(groupMock, newMockRuntimeCommand(f), newDemoCommand(f))
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newCompletionCommand(f), newGenDocsCommand(f))

	registerCompletions(root, f)
	return root
}

// Main runs crisp with args and returns the process exit status.
func Main(args []string, streams cmdutil.IOStreams) int {
	cmdutil.QuietKlog()
	ctx, stop := tty.NotifyContext(context.Background())
	defer stop()

	f := &cmdutil.Factory{Streams: streams, Getenv: os.Getenv}
	code, cmd, err := execute(ctx, f, args)
	if err != nil && (code == cmdutil.ExitUsage || (isPassThrough(cmd) && cmdutil.IsUsage(err))) {
		name := "crisp"
		if cmd != nil {
			name = cmd.CommandPath()
		}
		_, _ = fmt.Fprintf(streams.ErrOut, "Run '%s --help' for usage.\n", name) // the error stream is the last resort: a failed write there has nowhere to go
	}
	return code
}

// execute runs one command line through a fresh command tree and returns
// the exit status, the command that ran (nil when none was found) and its
// error, whose line it has written to the error stream unless the command
// reported it already.
func execute(ctx context.Context, f *cmdutil.Factory, args []string) (int, *cobra.Command, error) {
	root := newRootCommand(f)
	root.SetArgs(crictlArgs(args))
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return cmdutil.ExitOK, cmd, nil
	}
	err = cmdutil.Signalled(ctx, err)
	if !errors.Is(err, cmdutil.ErrReported) {
		msg := err.Error()
		if !strings.HasPrefix(msg, "crisp ") && !strings.HasPrefix(msg, "crisp:") {
			msg = "crisp: " + msg // not twice when the message names the command ("crisp port-forward needs ...")
		}
		// Errors quote what runtimes and containers said and named: no
		// control of theirs reaches the terminal (the line breaks are crisp's).
		_, _ = fmt.Fprintln(f.Streams.ErrOut, termsafe.Text(msg)) // the error stream is the last resort: a failed write there has nowhere to go
	}
	return cmdutil.ExitStatus(err, isPassThrough(cmd)), cmd, err
}

// isPassThrough says whether cmd passes the remote exit status through.
func isPassThrough(cmd *cobra.Command) bool {
	return cmd != nil && cmd.Annotations[cmdutil.PassThroughAnnotation] == "true"
}
