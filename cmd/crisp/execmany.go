package main

import (
	"context"
	"regexp"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cri/client"
	"github.com/crisp-cri/crisp/internal/feature/session"
)

// execManyOptions are exec's flags for running in every matching container
// (--label, --pod, --name, --parallel); internal/feature/fanout does the running.
type execManyOptions struct {
	Labels   []string
	Pod      string
	Name     string
	Parallel int

	labels map[string]string
	name   *regexp.Regexp
}

func (o *execManyOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.Labels, "label", nil, "run in every running container with this label (k=v, repeatable) instead of one CONTAINER")
	fs.StringVar(&o.Pod, "pod", "", "with --label or --name: only containers of this pod (ID, prefix or name)")
	fs.StringVar(&o.Name, "name", "", "run in every running container whose name matches this regular expression")
	fs.IntVar(&o.Parallel, "parallel", 8, "with --label, --pod or --name: sessions at once")
}

// selected reports whether exec runs in many containers.
func (o *execManyOptions) selected(cmd *cobra.Command) bool {
	return cmd.Flags().Changed("label") || cmd.Flags().Changed("pod") || cmd.Flags().Changed("name")
}

// complete takes every argument as the command (there is no CONTAINER).
func (o *execManyOptions) complete(e *execOptions, args []string) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	e.Container, e.Command = "", args
}

// validate refuses what one command in many containers cannot do.
func (o *execManyOptions) validate(e *execOptions) error {
	if e.Stdin || e.TTY {
		return cmdutil.UsageErrorf("exec --label/--pod/--name runs in many containers at once and one stdin cannot be shared safely between them: drop -i and -t (or exec into one CONTAINER)")
	}
	if e.Sync || e.Record.File != "" {
		return cmdutil.UsageErrorf("exec --label/--pod/--name streams to every container: -s and --record work with one CONTAINER only")
	}
	if len(e.Command) == 0 {
		return cmdutil.UsageErrorf("exec needs a command: crisp exec --label k=v -- CMD [ARG...]")
	}
	if o.Parallel < 1 {
		return cmdutil.UsageErrorf("--parallel must be at least 1")
	}
	var err error
	if o.labels, err = client.ParseLabels(o.Labels); err != nil {
		return cmdutil.UsageErrorf("--label: %v", err)
	}
	if o.Name != "" {
		if o.name, err = regexp.Compile(o.Name); err != nil {
			return cmdutil.UsageErrorf("--name: %v", err)
		}
	}
	if e.offers, err = session.ParseOffers(e.Transport, e.Protocol); err != nil {
		return err
	}
	return e.TLS.Validate()
}

// run execs the command in every running match (session.Deps.ExecMany).
func (o *execManyOptions) run(ctx context.Context, e *execOptions) error {
	return e.deps.ExecMany(ctx, session.Many{
		Filter: client.ContainerFilter{Labels: o.labels, Name: o.name, State: "running"}, Pod: o.Pod, Parallel: o.Parallel,
		Command: e.Command, Offers: e.offers, TLS: e.TLS, Configure: e.Trace.Apply,
	})
}
