package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/demo"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// demoOptions are `crisp demo`'s flags.
type demoOptions struct {
	cmdutil.Verb
	Profile string
	profile streamserver.Profile // set by Validate

	// stepTimeout bounds each step, so a broken runtime fails the demo
	// instead of hanging it; probeTimeout bounds the probe matrix.
	stepTimeout  time.Duration
	probeTimeout time.Duration
}

func newDemoCommand(f *cmdutil.Factory) *cobra.Command {
	o := &demoOptions{stepTimeout: 15 * time.Second, probeTimeout: 30 * time.Second}
	profiles := mockruntime.ProfileNames()
	cmd := &cobra.Command{
		Use:     "demo [--profile P]",
		Short:   "Start a mock runtime in-process and show probe, exec, attach and port-forward on it",
		Long:    helpLong("demo"),
		Example: helpExample("demo"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, o),
	}
	cmd.Flags().StringVar(&o.Profile, "profile", string(streamserver.ProfileFull), "streaming protocol profile of the mock: "+strings.Join(profiles, ", "))
	_ = cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(profiles, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete takes the factory's streams.
func (o *demoOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	return o.Verb.Complete(f, cmd, args)
}

// Validate rejects an unknown profile before anything starts.
func (o *demoOptions) Validate() (err error) {
	if o.profile, err = mockruntime.ParseProfile(o.Profile); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return nil
}

// Run runs the demo, with the real command tree running its commands.
func (o *demoOptions) Run(ctx context.Context) error {
	err := demo.Run(ctx, demo.Config{
		Profile:      o.profile,
		Out:          o.F.Streams.Out,
		ErrOut:       o.F.Streams.ErrOut,
		Run:          demoRunner,
		StepTimeout:  o.stepTimeout,
		ProbeTimeout: o.probeTimeout,
	})
	var failed *demo.StepsFailedError
	if errors.As(err, &failed) {
		return fmt.Errorf("%w: %w", err, cmdutil.ErrReported) // the transcript says which steps failed
	}
	return err
}

// demoRunner runs one of the demo's command lines through a fresh command
// tree, as Main would, with no terminal and CRI_CONFIG_FILE set to the
// demo's config file.
func demoRunner(ctx context.Context, inv demo.Invocation) (int, error) {
	f := &cmdutil.Factory{
		Streams: cmdutil.IOStreams{In: inv.Stdin, Out: inv.Out, ErrOut: inv.Out, IsTerminalIn: func() bool { return false }},
		Getenv: func(key string) string {
			if key == "CRI_CONFIG_FILE" {
				return inv.ConfigFile
			}
			return ""
		},
	}
	code, _, err := execute(ctx, f, inv.Args)
	return code, err
}
