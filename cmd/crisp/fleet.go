package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/moby/term"
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/fleet"
	"github.com/crisp-cri/crisp/internal/feature/report"
)

// runIDRE is what --run-id takes: it goes into pod names and a label value.
var runIDRE = regexp.MustCompile(`^[a-z0-9]{1,12}$`)

// fleetOptions is `crisp fleet smoke|probe|doctor`'s options.
type fleetOptions struct {
	cmdutil.Verb
	Kube   fleet.KubeconfigOptions
	Config fleet.Config
	// JUnit is the file for the merged JUnit XML.
	JUnit string
	// nArgs is how many arguments came before --: Validate wants one.
	nArgs int
	// newAPI connects to the API server; tests give a fake.
	newAPI func(fleet.KubeconfigOptions) (fleet.API, string, error)
	// errIsTerminal says whether stderr is a terminal (one live progress
	// line instead of a line per node); tests set it.
	errIsTerminal func() bool
}

func newFleetCommand(f *cmdutil.Factory) *cobra.Command {
	o := &fleetOptions{newAPI: connectKube}
	cmd := &cobra.Command{
		Use:       "fleet (smoke|probe|doctor) [-l SELECTOR | --nodes N1,N2] [--junit FILE] [-o table|markdown|json|yaml]",
		Short:     "Run smoke, probe or doctor on many Kubernetes nodes through the API server, and merge their reports",
		Long:      helpLong("fleet"),
		Example:   helpExample("fleet"),
		ValidArgs: fleet.Modes,
		// -o also takes markdown (root's check reads the annotation).
		Annotations: map[string]string{cmdutil.OutputFormatsAnnotation: strings.Join(report.Formats, ",")},
		RunE:        runOptions(f, o),
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Kube.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)")
	fs.StringVar(&o.Kube.Context, "context", "", "kubeconfig context (default: the current one)")
	fs.StringVarP(&o.Config.Namespace, "namespace", "n", fleet.DefaultNamespace, "namespace for the pods; it must admit host-network pods with a hostPath (Pod Security \"privileged\")")
	fs.StringVarP(&o.Config.Selector, "selector", "l", "", "run on the nodes whose labels match (kubectl's syntax, e.g. node-role.kubernetes.io/worker=); default: every node")
	fs.StringSliceVar(&o.Config.Nodes, "nodes", nil, "run on these nodes (comma-separated names)")
	fs.StringVar(&o.Config.Image, "image", fleet.DefaultImage, "crisp's image, as `make image` tags it; preload or push it for an air-gapped cluster")
	fs.StringVar(&o.Config.TargetImage, "target-image", fleet.DefaultTargetImage, "image of the target container (a busybox with nc, sh, yes, head, sleep)")
	fs.StringVar(&o.Config.RuntimeSocket, "runtime-socket", "", "the runtime's CRI socket on the nodes: PATH, or RUNTIME=PATH pairs by the runtime each node reports (containerd=...,cri-o=...); default: each node's (kubeadm's cri-socket annotation, else /run/containerd/containerd.sock or /run/crio/crio.sock by its runtime)")
	fs.IntVar(&o.Config.Port, "port", 0, "the target's echo port, on each node's host network (default: one picked per node in 20000-29999, another where it is taken)")
	fs.DurationVar(&o.Config.Timeout, "timeout", 10*time.Minute, "bound on the whole run; a node not done by then fails with what its pod was doing")
	fs.StringVar(&o.JUnit, "junit", "", "write the merged results as JUnit XML to FILE")
	fs.StringVar(&o.Config.SaveLogs, "save-logs", "", "write each node's crisp log, as read, to DIR/NODE.MODE.log (crisp report DIR/* reads them again)")
	fs.StringVar(&o.Config.RunID, "run-id", "", "the run's ID in its pods' names and labels (1-12 of a-z, 0-9; default: random), e.g. to find its pods from a CI job")
	return cmd
}

// connectKube loads the kubeconfig and makes the REST client.
func connectKube(k fleet.KubeconfigOptions) (fleet.API, string, error) {
	cfg, ns, err := k.Load()
	if err != nil {
		return nil, "", err
	}
	api, err := fleet.NewKube(cfg)
	return api, ns, err
}

// Complete takes the mode and what follows -- (passed to smoke, probe or doctor).
func (o *fleetOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		o.Config.ExtraArgs = args[dash:]
		args = args[:dash]
	}
	o.nArgs = len(args)
	if len(args) > 0 {
		o.Config.Mode = args[0]
	}
	if o.errIsTerminal == nil {
		o.errIsTerminal = func() bool {
			_, ok := term.GetFdInfo(o.F.Streams.ErrOut)
			return ok
		}
	}
	for i, n := range o.Config.Nodes {
		o.Config.Nodes[i] = strings.TrimSpace(n)
	}
	return nil
}

// Validate rejects bad flags before the API server is asked anything.
func (o *fleetOptions) Validate() error {
	if err := cmdutil.CheckOutputFile("--junit", o.JUnit); err != nil {
		return err
	}
	c := o.Config
	switch {
	case o.nArgs != 1:
		return cmdutil.UsageErrorf("fleet needs one of %s, got %d arguments", strings.Join(fleet.Modes, ", "), o.nArgs)
	case !slices.Contains(fleet.Modes, c.Mode):
		return cmdutil.UsageErrorf("fleet runs %s, not %q", strings.Join(fleet.Modes, ", "), c.Mode)
	case c.Selector != "" && len(c.Nodes) > 0:
		return cmdutil.UsageErrorf("--selector and --nodes pick the nodes two ways: give one")
	case c.Timeout < 0:
		return cmdutil.UsageErrorf("--timeout must not be negative")
	case c.Port < 0 || c.Port > 65535:
		return cmdutil.UsageErrorf("--port must be 1-65535 (or 0 to pick one per node), not %d", c.Port)
	case c.Image == "" || c.TargetImage == "":
		return cmdutil.UsageErrorf("--image and --target-image must name images")
	}
	if _, err := fleet.ParseSockets(c.RuntimeSocket); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	for _, n := range c.Nodes {
		if n == "" {
			return cmdutil.UsageErrorf("--nodes has an empty name")
		}
	}
	if c.RunID != "" && !runIDRE.MatchString(c.RunID) {
		return cmdutil.UsageErrorf("--run-id must be 1-12 of a-z and 0-9, not %q", c.RunID)
	}
	if c.SaveLogs != "" {
		if st, err := os.Stat(c.SaveLogs); err != nil || !st.IsDir() {
			return cmdutil.UsageErrorf("--save-logs %s: not a folder (create it first)", c.SaveLogs)
		}
	}
	return nil
}

// Run creates the pods, follows them, prints the merged report and fails
// when a node did.
func (o *fleetOptions) Run(ctx context.Context) error {
	api, ns, err := o.newAPI(o.Kube)
	if err != nil {
		return err
	}
	if o.Config.Namespace == "" {
		o.Config.Namespace = ns
	}
	r := &fleet.Runner{Config: o.Config, API: api, Progress: o.F.Streams.ErrOut, Live: o.errIsTerminal != nil && o.errIsTerminal()}
	fl, runErr := r.Run(ctx)
	if o.F.Global.Verbose > 0 {
		_, _ = fmt.Fprintf(o.F.Streams.ErrOut, "crisp fleet: %s\n", r.Requests()) // a courtesy, as the progress
	}
	if fl == nil {
		return runErr
	}
	var errs []error
	if o.JUnit != "" {
		if err := fl.WriteJUnitFile(o.JUnit); err != nil {
			errs = append(errs, fmt.Errorf("--junit: %w", err))
		}
	}
	write := fl.Write
	if o.F.Global.Output == "table" {
		// Grouped by result and failure: readable at a thousand nodes.
		write = func(w io.Writer, _ string) error { return fleet.WriteTable(w, fl, r.Runtimes()) }
	}
	if err := write(o.F.Streams.Out, o.F.Global.Output); err != nil {
		errs = append(errs, err)
	}
	if runErr != nil || len(errs) > 0 {
		return errors.Join(append(errs, runErr)...)
	}
	if err := fl.Check(); err != nil {
		_, _ = fmt.Fprintln(o.F.Streams.ErrOut, "crisp fleet:", err) // the error stream is the last resort: a failed write there has nowhere to go
		return cmdutil.ErrReported
	}
	return nil
}
