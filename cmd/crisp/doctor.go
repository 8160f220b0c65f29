package main

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/doctor"
	"github.com/crisp-cri/crisp/internal/feature/fleet"
	"github.com/crisp-cri/crisp/internal/feature/report"
)

// doctorOptions are `crisp doctor`'s flags: they bind to doctor.Node's
// fields, which Run hands to doctor as they are; --kubeconfig or
// --context switch to the workstation walk (doctor.Kube) through the API
// server, which takes the same flags and a few of its own.
type doctorOptions struct {
	doctor.Node
	Kube fleet.KubeconfigOptions
	// Container is the pod's container in the workstation walk (-c before
	// the verb is crictl's --config, so it has no shorthand here).
	Container string
	// kube is the workstation walk: --kubeconfig or --context was given.
	kube bool
	// nodeSide runs the node half on the pod's node as well (--node-side).
	nodeSide bool
	// nArgs is how many arguments were given: Validate wants at most one.
	nArgs int
	cmdutil.Verb
	// newAPI connects to the API server for --node-side; tests give a fake.
	newAPI func(fleet.KubeconfigOptions) (fleet.API, string, error)
}

func newDoctorCommand(f *cmdutil.Factory) *cobra.Command {
	o := &doctorOptions{newAPI: connectKube}
	cmd := &cobra.Command{
		Use:               "doctor [CONTAINER|POD] [--port N] [--repeat N [--interval D]] [--junit FILE] | doctor --kubeconfig FILE [NS/]POD [--container C]",
		Short:             "Walk the exec, attach and port-forward path hop by hop and say which hop broke and how to fix it",
		Long:              helpLong("doctor"),
		Example:           helpExample("doctor"),
		ValidArgsFunction: completeContainers(f),
		RunE:              runOptions(f, o),
		Annotations:       map[string]string{cmdutil.OutputFormatsAnnotation: cmdutil.PrintDataFormats},
	}
	fs := cmd.Flags()
	fs.Int32Var(&o.Port, "port", 0, "add a port-forward round trip to this port of the target's pod")
	fs.StringVar(&o.Pod, "pod", "", "the CONTAINER is one of this pod's (ID, ID prefix or name): a name that several pods' containers carry")
	fs.StringVar(&o.Command, "command", doctor.DefaultCommand, "the round trip's command (split on spaces)")
	fs.IntVar(&o.Repeat.Runs, "repeat", 1, "walk the path N times and group the failures by hop and error (sporadic failures)")
	fs.DurationVar(&o.Repeat.Interval, "interval", 0, "with --repeat: pause between runs")
	fs.DurationVar(&o.HopTimeout, "hop-timeout", client.DefaultRequestTimeout, "bound on each hop")
	fs.StringVar(&o.JUnit, "junit", "", "write the hops as JUnit XML to FILE")
	addNodeNameFlag(fs, &o.NodeName)
	o.TLS.AddFlags(fs)
	fs.StringVar(&o.Kube.Kubeconfig, "kubeconfig", "", "walk the path from this workstation through the API server this kubeconfig names, to [NS/]POD (kubectl's: $KUBECONFIG, ~/.kube/config when only --context is given)")
	fs.StringVar(&o.Kube.Context, "context", "", "with the workstation walk: the kubeconfig context (default: the current one)")
	fs.StringVarP(&o.Kube.Namespace, "namespace", "n", "", "with the workstation walk: the pod's namespace (default: the context's; NS/POD also names it)")
	fs.StringVar(&o.Container, "container", "", "with the workstation walk: the pod's container (default: kubectl's: the default-container annotation, else the first)")
	fs.BoolVar(&o.nodeSide, "node-side", false, "with the workstation walk: also walk the node half on the pod's node, from a pod crisp fleet's way creates in "+fleet.DefaultNamespace+" (image "+fleet.DefaultImage+"), and give one verdict")
	return cmd
}

// Complete takes the factory and the optional CONTAINER or POD.
func (o *doctorOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	o.kube = cmd.Flags().Changed("kubeconfig") || cmd.Flags().Changed("context")
	o.nArgs = len(args)
	if len(args) > 0 {
		o.Target = args[0]
	}
	return nil
}

// Validate rejects bad numbers and flags that need a target, and mixes
// of the node walk's flags with the workstation walk's.
func (o *doctorOptions) Validate() error {
	if o.nArgs > 1 {
		return cmdutil.UsageErrorf("doctor takes one CONTAINER or POD, got %d arguments", o.nArgs)
	}
	if err := o.validateMode(); err != nil {
		return err
	}
	if err := cmdutil.CheckOutputFile("--junit", o.JUnit); err != nil {
		return err
	}
	switch {
	case o.Port < 0 || o.Port > 65535:
		return cmdutil.UsageErrorf("--port must be between 1 and 65535, got %d", o.Port)
	case o.Port != 0 && o.Target == "":
		return cmdutil.UsageErrorf("--port needs a CONTAINER or POD (its pod is where the port is forwarded)")
	case o.Pod != "" && o.Target == "":
		return cmdutil.UsageErrorf("--pod narrows a CONTAINER to a pod: give the CONTAINER too")
	case o.Repeat.Runs < 1:
		return cmdutil.UsageErrorf("--repeat must be 1 or more, got %d", o.Repeat.Runs)
	case o.Repeat.Interval < 0:
		return cmdutil.UsageErrorf("--interval must not be negative, got %s", o.Repeat.Interval)
	case o.HopTimeout <= 0:
		return cmdutil.UsageErrorf("--hop-timeout must be positive, got %s", o.HopTimeout)
	case strings.TrimSpace(o.Command) == "":
		return cmdutil.UsageErrorf("--command is blank")
	}
	return o.TLS.Validate()
}

// validateMode checks what belongs to one walk only.
func (o *doctorOptions) validateMode() error {
	if !o.kube {
		if o.Container != "" || o.Kube.Namespace != "" || o.nodeSide {
			return cmdutil.UsageErrorf("--container, --namespace and --node-side belong to the workstation walk: give --kubeconfig (or --context) and [NS/]POD")
		}
		return nil
	}
	ns, pod, hasNS := strings.Cut(o.Target, "/")
	switch {
	case o.Target == "":
		return cmdutil.UsageErrorf("doctor --kubeconfig needs the pod: [NAMESPACE/]POD")
	case hasNS && (ns == "" || pod == "" || strings.Contains(pod, "/")):
		return cmdutil.UsageErrorf("%q is not [NAMESPACE/]POD", o.Target)
	case hasNS && o.Kube.Namespace != "" && o.Kube.Namespace != ns:
		return cmdutil.UsageErrorf("the pod %q names namespace %s, --namespace %s", o.Target, ns, o.Kube.Namespace)
	case o.Pod != "":
		return cmdutil.UsageErrorf("--pod belongs to the node walk; through the API server name the pod as [NS/]POD")
	case o.TLS != (cmdutil.TLSFlags{}):
		return cmdutil.UsageErrorf("--tls-* configure the runtime's streaming server on a node; through the API server the kubeconfig carries the TLS settings")
	}
	return nil
}

// Run walks the path and prints the report.
func (o *doctorOptions) Run(ctx context.Context) error {
	if o.kube {
		k := doctor.Kube{Connect: o.Kube.Load, Pod: o.Target, Container: o.Container, Port: o.Port, Command: o.Command,
			Repeat: o.Repeat, HopTimeout: o.HopTimeout, JUnit: o.JUnit, NodeName: o.NodeName}
		if o.nodeSide {
			k.NodeSide = o.walkNodeSide
		}
		return k.Run(ctx, o.F)
	}
	return o.Node.Run(ctx, o.F)
}

// walkNodeSide runs crisp doctor on the pod's node against its container,
// the way crisp fleet doctor runs it (a pod pinned to the node, the
// runtime's socket from a hostPath), and reads its report from the log.
func (o *doctorOptions) walkNodeSide(ctx context.Context, req doctor.NodeSideRequest) (*doctor.Report, error) {
	api, _, err := o.newAPI(o.Kube)
	if err != nil {
		return nil, err
	}
	var log []byte
	r := &fleet.Runner{API: api, Progress: o.F.Streams.ErrOut, Config: fleet.Config{
		Mode: fleet.ModeDoctor, Namespace: fleet.DefaultNamespace, Nodes: []string{req.Node},
		Image: fleet.DefaultImage, TargetImage: fleet.DefaultTargetImage, Target: req.ContainerID, Port: int(req.Port),
		Timeout: req.Timeout, ExtraArgs: req.Args,
	}}
	r.OnLog = func(_ string, b []byte) { log = b }
	fl, err := r.Run(ctx)
	if err != nil {
		return nil, err
	}
	if log == nil {
		// No log: the fleet's one failed run says why (not Ready, the pod
		// never started, out of time).
		var why []string
		for _, run := range fl.Runs {
			for _, c := range run.Cells {
				if c.Outcome == report.Fail {
					why = append(why, c.Detail)
				}
			}
		}
		return nil, errors.New(strings.Join(append(why, fl.Verdict()), "; "))
	}
	return doctor.DecodeReport(log)
}
