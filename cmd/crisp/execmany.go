package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/moby/term"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/fanout"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// execManyOptions are exec's flags for running in every matching container
// (--label, --pod, --name, --parallel); internal/fanout does the running.
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
		return usageErrorf("exec --label/--pod/--name runs in many containers at once and one stdin cannot be shared safely between them: drop -i and -t (or exec into one CONTAINER)")
	}
	if e.Sync || e.Record.File != "" {
		return usageErrorf("exec --label/--pod/--name streams to every container: -s and --record work with one CONTAINER only")
	}
	if len(e.Command) == 0 {
		return usageErrorf("exec needs a command: crisp exec --label k=v -- CMD [ARG...]")
	}
	if o.Parallel < 1 {
		return usageErrorf("--parallel must be at least 1")
	}
	var err error
	if o.labels, err = client.ParseLabels(o.Labels); err != nil {
		return usageErrorf("--label: %v", err)
	}
	if o.Name != "" {
		if o.name, err = regexp.Compile(o.Name); err != nil {
			return usageErrorf("--name: %v", err)
		}
	}
	if e.offers, err = parseOffers(e.Transport, e.Protocol); err != nil {
		return err
	}
	return e.TLS.Validate()
}

// run execs the command in every running match and returns the highest
// remote code (125 if crisp failed anywhere), the summary already printed.
func (o *execManyOptions) run(ctx context.Context, e *execOptions) error {
	d := e.deps
	settings, err := d.Settings()
	if err != nil {
		return err
	}
	cli, err := d.Dial(settings)
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }() // closing a finished gRPC connection: nothing to report
	filter := client.ContainerFilter{Labels: o.labels, Name: o.name, State: "running"}
	if o.Pod != "" {
		pod, err := cli.ResolvePod(ctx, o.Pod)
		if err != nil {
			return fmt.Errorf("exec: %w", err)
		}
		filter.PodID = pod.Id
	}
	ctrs, err := cli.ListContainers(ctx, filter)
	if err != nil {
		return err
	}
	if len(ctrs) == 0 {
		return errors.New("exec: no running container matches --label/--pod/--name (see `crisp ps`)")
	}
	cfg, err := d.transportConfig(e.TLS, settings)
	if err != nil {
		return err
	}
	if err := e.Trace.apply(&cfg); err != nil {
		return err
	}
	targets := make([]fanout.Target, len(ctrs))
	for i, c := range ctrs {
		targets[i] = fanout.Target{ID: c.Id, Name: c.GetMetadata().GetName()}
	}
	_, colour := term.GetFdInfo(d.Streams.Out) // true only for a terminal
	res := fanout.Run(ctx, targets, fanout.Options{Parallel: o.Parallel, Out: d.Streams.Out, Err: d.Streams.ErrOut, Color: colour},
		func(ctx context.Context, t fanout.Target, stdout, stderr io.Writer) (int, error) {
			req := &runtimeapi.ExecRequest{ContainerId: t.ID, Cmd: e.Command, Stdout: true, Stderr: true}
			_, err := d.Stream(ctx, "exec", cli.ExecSource("exec", req), e.offers, cfg, remotecommand.Streams{Stdout: stdout, Stderr: stderr})
			var coded interface{ ExitStatus() int }
			if err != nil && errors.As(err, &coded) && ctx.Err() == nil {
				return coded.ExitStatus(), nil
			}
			return 0, err
		})
	_, _ = fmt.Fprintf(d.Streams.ErrOut, "crisp: exec: %s\n", res.Summary()) // stderr unwritable: nowhere else to say it
	if code := res.ExitCode(); code != 0 {
		return remoteStatus{code: code}
	}
	return nil
}
