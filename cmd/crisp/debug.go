package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/debug"
	"github.com/crisp-cri/crisp/internal/feature/session"
)

// debugOptions are `crisp debug`'s flags and arguments.
type debugOptions struct {
	Stdin   bool
	TTY     bool
	Image   string
	Profile string
	Way     cmdutil.WayFlag
	Keep    bool
	Cleanup bool
	TLS     cmdutil.TLSFlags
	// WatchSession is the hidden flag of a host-way session's watcher
	// (debug.Watch): crisp started by itself, with the session's group.
	WatchSession int

	Target  string
	Command []string

	request debug.Request
	runner  debug.Runner
}

func newDebugCommand(f *cmdutil.Factory) *cobra.Command {
	return debugCommand(f, &debugOptions{})
}

// debugCommand binds o to the command; o.runner.Deps, when set (tests),
// replaces the factory's dependencies.
func debugCommand(f *cmdutil.Factory, o *debugOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:         "debug [-i] [-t] [--image IMAGE] [--profile P] [--way W] [--keep] TARGET [-- CMD [ARG...]] | debug --cleanup",
		Short:       "Run tools in a running container's namespaces (a debug container, or the node's tools)",
		Long:        helpLong("debug"),
		Example:     helpExample("debug"),
		Annotations: map[string]string{cmdutil.PassThroughAnnotation: "true"},
		RunE:        runOptions(f, o),

		ValidArgsFunction: completeContainers(f),
	}
	cmd.Flags().SetInterspersed(false)
	fl := cmd.Flags()
	fl.BoolVarP(&o.Stdin, "stdin", "i", false, "pass stdin to the command (default: on when stdin is a terminal or no command is given)")
	fl.BoolVarP(&o.TTY, "tty", "t", false, "allocate a pseudo-terminal (default: on when stdin is a terminal)")
	fl.StringVar(&o.Image, "image", "", "the debug container's image, exactly as named (default: "+debug.DefaultImage+", which must be on the node)")
	fl.StringVar(&o.Profile, "profile", string(debug.ProfileGeneral), "the debug container's privileges, as kubectl debug names them: general (adds SYS_PTRACE), netadmin (adds NET_ADMIN, NET_RAW) or sysadmin (privileged)")
	o.Way.Bind(cmd, "how to get in: auto (a debug container, else the node's tools), container or host", debug.Ways...)
	fl.BoolVar(&o.Keep, "keep", false, "leave the debug container behind when the session ends")
	fl.BoolVar(&o.Cleanup, "cleanup", false, "remove the debug containers left by crisp processes that no longer run (kept ones too), then exit")
	o.TLS.AddFlags(fl)
	fl.IntVar(&o.WatchSession, debug.WatchFlag, 0, "internal: watch a host-way session's process group")
	_ = fl.MarkHidden(debug.WatchFlag)
	_ = cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions([]string{string(debug.ProfileGeneral), string(debug.ProfileNetadmin), string(debug.ProfileSysadmin)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete splits TARGET from the command ("--" optional) and works out
// the -i and -t defaults from the terminal.
func (o *debugOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if o.runner.Deps.Stream == nil {
		o.runner.Deps = session.NewDeps(f)
	}
	if o.runner.Leases.Dir == "" {
		o.runner.Leases = debug.DefaultLeases()
	}
	if o.runner.Host.Euid == nil {
		o.runner.Host = debug.NewHostEntry()
	}
	if len(args) > 0 {
		o.Target = args[0]
		o.Command = args[1:]
		if len(o.Command) > 0 && o.Command[0] == "--" {
			o.Command = o.Command[1:]
		}
	}
	terminal := o.runner.Deps.Terminal(true).IsTerminalIn()
	if !cmd.Flags().Changed("stdin") {
		o.Stdin = terminal || len(o.Command) == 0
	}
	if !cmd.Flags().Changed("tty") {
		o.TTY = terminal
	}
	return nil
}

// Validate rejects bad input before any connection is made.
func (o *debugOptions) Validate() error {
	if o.WatchSession > 0 {
		return nil
	}
	if o.Cleanup {
		if o.Target != "" {
			return cmdutil.UsageErrorf("--cleanup takes no TARGET: crisp debug --cleanup")
		}
		return nil
	}
	if o.Target == "" {
		return cmdutil.UsageErrorf("debug needs a TARGET container: crisp debug [flags] TARGET [-- CMD [ARG...]]")
	}
	profile, err := debug.ParseProfile(o.Profile)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	way, err := o.Way.Parse()
	if err != nil {
		return err
	}
	if way == debug.WayHost && (o.Keep || o.Image != "") {
		return cmdutil.UsageErrorf("--keep and --image are about the debug container; --way host makes none")
	}
	offers, err := session.ParseOffers("auto", "")
	if err != nil {
		return err
	}
	o.request = debug.Request{
		Target: o.Target, Command: o.Command, Stdin: o.Stdin, TTY: o.runner.Deps.CheckTTY(o.Stdin, o.TTY),
		Image: o.Image, Profile: profile, Way: way, Keep: o.Keep, Offers: offers, TLS: o.TLS,
	}
	return o.TLS.Validate()
}

// Run runs the session (or the cleanup) and returns the command's exit
// status as an error (nil for 0).
func (o *debugOptions) Run(ctx context.Context) error {
	if o.WatchSession > 0 {
		return debug.Watch(o.runner.Deps.Streams.In, o.WatchSession)
	}
	if o.Cleanup {
		n, err := o.runner.Cleanup(ctx)
		if n > 0 || err == nil {
			if _, werr := fmt.Fprintf(o.runner.Deps.Streams.Out, "removed %d debug container(s)\n", n); werr != nil && err == nil {
				err = werr
			}
		}
		return err
	}
	return o.runner.Run(ctx, o.request)
}
