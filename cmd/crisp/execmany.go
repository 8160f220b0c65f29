package main

import (
	"regexp"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cri/client"
	"github.com/crisp-cri/crisp/internal/feature/session"
)

// exec's flags for running in every matching container (--label, --pod,
// --name, --parallel) bind to session.Many, whose ExecMany (fanout.go)
// does the running.

// addManyFlags binds --label, --pod, --name and --parallel to m.
func addManyFlags(fs *pflag.FlagSet, m *session.Many) {
	fs.StringArrayVar(&m.Labels, "label", nil, "run in every running container with this label (k=v, repeatable) instead of one CONTAINER")
	fs.StringVar(&m.Pod, "pod", "", "with --label or --name: only containers of this pod (ID, prefix or name)")
	fs.StringVar(&m.Name, "name", "", "run in every running container whose name matches this regular expression")
	fs.IntVar(&m.Parallel, "parallel", 8, "with --label, --pod or --name: sessions at once")
}

// manySelected reports whether exec runs in many containers.
func manySelected(cmd *cobra.Command) bool {
	return cmd.Flags().Changed("label") || cmd.Flags().Changed("pod") || cmd.Flags().Changed("name")
}

// completeMany takes every argument as the command (there is no CONTAINER).
func (o *execOptions) completeMany(args []string) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	o.Container, o.Command = "", args
}

// validateMany refuses what one command in many containers cannot do, and
// builds the filter from --label and --name.
func (o *execOptions) validateMany() error {
	if o.Stdin || o.TTY {
		return cmdutil.UsageErrorf("exec --label/--pod/--name runs in many containers at once and one stdin cannot be shared safely between them: drop -i and -t (or exec into one CONTAINER)")
	}
	if o.Sync || o.Record.File != "" {
		return cmdutil.UsageErrorf("exec --label/--pod/--name streams to every container: -s and --record work with one CONTAINER only")
	}
	if len(o.Command) == 0 {
		return cmdutil.UsageErrorf("exec needs a command: crisp exec --label k=v -- CMD [ARG...]")
	}
	if o.Many.Parallel < 1 {
		return cmdutil.UsageErrorf("--parallel must be at least 1")
	}
	labels, err := client.ParseLabels(o.Many.Labels)
	if err != nil {
		return cmdutil.UsageErrorf("--label: %v", err)
	}
	var name *regexp.Regexp
	if o.Many.Name != "" {
		if name, err = regexp.Compile(o.Many.Name); err != nil {
			return cmdutil.UsageErrorf("--name: %v", err)
		}
	}
	o.Many.Filter = client.ContainerFilter{Labels: labels, Name: name, State: "running"}
	if o.Offers, err = session.ParseOffers(o.Transport, o.Protocol); err != nil {
		return err
	}
	return o.TLS.Validate()
}
