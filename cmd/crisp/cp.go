package main

import (
	"context"
	"io/fs"

	"github.com/moby/term"
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/cp"
	"github.com/crisp-cri/crisp/internal/feature/session"
)

// cpOptions are `crisp cp`'s flags and arguments.
type cpOptions struct {
	Way          cmdutil.WayFlag
	PreserveMode bool
	SizeLimit    string
	TLS          cmdutil.TLSFlags

	Src, Dst string

	req cp.Request
	way cmdutil.Way
	// errIsTerminal says whether stderr is a terminal (the progress bar);
	// tests set it.
	errIsTerminal func() bool
	umask         fs.FileMode
	sizeLimit     int64
	deps          streamDeps
}

func newCpCommand(f *cmdutil.Factory) *cobra.Command {
	return cpCommand(f, &cpOptions{})
}

// cpCommand binds o to the command; o.deps, when set (tests), replaces the
// factory's dependencies.
func cpCommand(f *cmdutil.Factory, o *cpOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "cp [--way auto|tar|root] [--preserve-mode] [--size-limit SIZE] SRC DEST",
		Short:   "Copy files and directories between a container and here",
		Long:    helpLong("cp"),
		Example: helpExample("cp"),
		Args:    cmdutil.ExactArgs(2, "SRC and DEST, one of them CONTAINER:PATH"),
		RunE:    runOptions(f, o),
	}
	o.Way.Bind(cmd, "how to reach the container's files: tar (tar over exec), root (the node's view of its root), auto (tar, then root when the container has no tar)", cp.Ways...)
	cmd.Flags().BoolVar(&o.PreserveMode, "preserve-mode", false, "copying out, keep setuid, setgid and sticky bits and ignore the umask (by default they are dropped and the umask applied, as kubectl cp does)")
	cmd.Flags().StringVar(&o.SizeLimit, "size-limit", "", "copying out, fail (leaving nothing) rather than write more file content than this (500Mi, 2Gi, 1048576); without it, only the destination's free space bounds a copy")
	o.TLS.AddFlags(cmd.Flags())
	return cmd
}

// Complete takes SRC and DEST and the dependencies.
func (o *cpOptions) Complete(f *cmdutil.Factory, _ *cobra.Command, args []string) error {
	if o.deps.Stream == nil {
		o.deps = session.NewDeps(f)
	}
	if o.errIsTerminal == nil {
		o.errIsTerminal = func() bool {
			_, ok := term.GetFdInfo(f.Streams.ErrOut)
			return ok
		}
	}
	if len(args) == 2 {
		o.Src, o.Dst = args[0], args[1]
	}
	o.umask = cp.CurrentUmask()
	return nil
}

// Validate checks the arguments' shapes and --way before anything connects.
func (o *cpOptions) Validate() error {
	var err error
	if o.way, err = o.Way.Parse(); err != nil {
		return err
	}
	if o.req, err = cp.ParseArgs(o.Src, o.Dst); err != nil {
		return err
	}
	if o.sizeLimit, err = cp.ParseSizeLimit(o.SizeLimit); err != nil {
		return err
	}
	return o.TLS.Validate()
}

// Run copies.
func (o *cpOptions) Run(ctx context.Context) error {
	return cp.Run(ctx, o.deps, cp.Copy{
		Request: o.req, Way: o.way, TLS: o.TLS, ErrIsTerminal: o.errIsTerminal,
		KeepModes: o.PreserveMode, Umask: o.umask, SizeLimit: o.sizeLimit,
	})
}
