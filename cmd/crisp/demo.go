package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/demo"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// demoOptions are `crisp demo`'s flags.
type demoOptions struct {
	f       *factory // set by Complete
	Profile string

	// stepTimeout bounds each step, so a broken runtime fails the demo
	// instead of hanging it; probeTimeout bounds the probe matrix.
	stepTimeout  time.Duration
	probeTimeout time.Duration
}

func newDemoCommand(f *factory) *cobra.Command {
	o := &demoOptions{stepTimeout: 15 * time.Second, probeTimeout: 30 * time.Second}
	profiles := make([]string, len(streamserver.Profiles))
	for i, p := range streamserver.Profiles {
		profiles[i] = string(p)
	}
	cmd := &cobra.Command{
		Use:   "demo [--profile P]",
		Short: "Start a mock runtime in-process and show probe, exec, attach and port-forward on it",
		Long: `Start crisp's mock CRI runtime in this process on a temporary socket, create a pod
and a container in it, and run the real crisp commands against it, each step titled
and shown with the command line it runs:

  1. probe: which streaming protocols the runtime speaks, and how well
  2. exec: the remote command's exit code passed through
  3. exec -i: the end of stdin reaching the remote command
  4. exec -t: the terminal's size reaching the remote TTY
  5. attach: the container's output, then detach
  6. port-forward: bytes through a forwarded port and back

It ends with the commands to try the same by hand against a mock runtime of your
own. Everything the demo started (containers, the runtime, its socket) is removed
on every way out, Ctrl-C included. No container runtime, root or network needed.

--profile picks the protocols the mock speaks (full, cri-streaming, conmon-rs,
legacy), as for crisp mock-runtime.

EXIT STATUS
  0    every step worked
  1    a step failed (the output says which) or the mock could not start
  2    bad flags or arguments
  130  interrupted`,
		Example: `  crisp demo
  crisp demo --profile cri-streaming
  make demo`,
		Args: noArgs,
		RunE: runOptions(f, o),
	}
	cmd.Flags().StringVar(&o.Profile, "profile", string(streamserver.ProfileFull), "streaming protocol profile of the mock: "+strings.Join(profiles, ", "))
	_ = cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(profiles, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete normalises the profile name.
func (o *demoOptions) Complete(f *factory, _ *cobra.Command, _ []string) error {
	o.f = f
	o.Profile = strings.ToLower(strings.TrimSpace(o.Profile))
	return nil
}

// Validate rejects an unknown profile before anything starts.
func (o *demoOptions) Validate() error {
	if !slices.Contains(streamserver.Profiles, streamserver.Profile(o.Profile)) {
		return usageErrorf("--profile must be one of full, cri-streaming, conmon-rs, legacy; got %q", o.Profile)
	}
	return nil
}

// Run runs the demo, with the real command tree running its commands.
func (o *demoOptions) Run(ctx context.Context) error {
	err := demo.Run(ctx, demo.Config{
		Profile:      streamserver.Profile(o.Profile),
		Out:          o.f.Streams.Out,
		ErrOut:       o.f.Streams.ErrOut,
		Run:          demoRunner,
		StepTimeout:  o.stepTimeout,
		ProbeTimeout: o.probeTimeout,
	})
	var failed *demo.StepsFailedError
	if errors.As(err, &failed) {
		return fmt.Errorf("%w: %w", err, errReported) // the transcript says which steps failed
	}
	return err
}

// demoRunner runs one of the demo's command lines through a fresh command
// tree, as Main would, with no terminal and CRI_CONFIG_FILE set to the
// demo's config file.
func demoRunner(ctx context.Context, inv demo.Invocation) (int, error) {
	f := &factory{
		Streams: ioStreams{In: inv.Stdin, Out: inv.Out, ErrOut: inv.Out, IsTerminalIn: func() bool { return false }},
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
