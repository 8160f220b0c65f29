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
	// crictl's selectors and switches besides those.
	Image, State string
	Latest       bool
	Last         int
	Quiet        bool
	IgnoreErrors bool

	labels map[string]string
	name   *regexp.Regexp
}

func (o *execManyOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.Labels, "label", nil, "run in every running container with this label (k=v, repeatable) instead of one CONTAINER")
	fs.StringVarP(&o.Pod, "pod", "p", "", "run in every running container of this pod (ID, prefix or name)")
	fs.StringVar(&o.Name, "name", "", "run in every running container whose name matches this regular expression")
	fs.StringVar(&o.Image, "image", "", "run in every running container created from this image")
	fs.StringVar(&o.State, "state", "", "run in every container in this state (instead of running ones)")
	fs.BoolVarP(&o.Latest, "latest", "l", false, "run in the most recently created container")
	fs.IntVarP(&o.Last, "last", "n", 0, "run in the N most recently created containers")
	fs.BoolVarP(&o.Quiet, "quiet", "q", false, "with many containers: no summary line")
	fs.BoolVarP(&o.IgnoreErrors, "ignore-errors", "e", false, "with many containers: exit 0 whatever the commands' statuses")
	// crictl's -x/--parallel is a switch; crisp runs in parallel anyway,
	// 8 at a time unless --parallel=N says otherwise.
	fs.IntVarP(&o.Parallel, "parallel", "x", 8, "with many containers: sessions at once (--parallel=N; -x alone as crictl: 8)")
	fs.Lookup("parallel").NoOptDefVal = "8"
}

// selected reports whether exec runs in many containers.
func (o *execManyOptions) selected(cmd *cobra.Command) bool {
	for _, name := range []string{"label", "pod", "name", "image", "state", "latest", "last"} {
		if cmd.Flags().Changed(name) {
			return true
		}
	}
	return false
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
	if o.Last < 0 {
		return cmdutil.UsageErrorf("-n/--last must not be negative")
	}
	if o.State != "" {
		if _, err := client.ParseContainerState(o.State); err != nil {
			return cmdutil.UsageErrorf("--state: %v", err)
		}
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
	filter := client.ContainerFilter{Labels: o.labels, Name: o.name, State: "running", Image: o.Image}
	last := o.Last
	if o.Latest {
		last = 1
	}
	if o.State != "" {
		filter.State = o.State
	} else if last > 0 {
		filter.State, filter.All = "", true // as ps: -l and -n look at every state
	}
	err := e.deps.ExecMany(ctx, session.Many{
		Filter: filter, Pod: o.Pod, Parallel: o.Parallel, Last: last, Quiet: o.Quiet,
		Command: e.Command, Offers: e.offers, TLS: e.TLS, Configure: e.Trace.Apply,
	})
	if o.IgnoreErrors {
		return nil
	}
	return err
}
