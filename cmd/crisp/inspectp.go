package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
)

// inspectPodOptions are the flags of `crisp inspectp`.
type inspectPodOptions struct {
	f   *factory
	now func() time.Time

	Refs   []string
	Output string
}

func newInspectPodCommand(f *factory) *cobra.Command {
	o := &inspectPodOptions{f: f, now: time.Now}
	cmd := &cobra.Command{
		Use:   "inspectp POD...",
		Short: "Show the full status of pod sandboxes",
		Long: `Show what the runtime knows of one or more pod sandboxes: its PodSandboxStatus
(network, namespaces, metadata) with the runtime's verbose info, as JSON by
default, YAML with -o yaml, or a short summary with -o table. Each POD is a
full ID, a unique ID prefix or a unique name; several give a JSON array.

EXIT STATUS
  0  every pod was found and shown
  1  a pod matched nothing or several (the candidates are listed), or the
     runtime could not be reached or failed
  2  bad flags or arguments`,
		Example: `  crisp inspectp web
  crisp inspectp 9c1e -o yaml
  crisp inspectp -o table web db`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("%s needs at least one POD (ID, ID prefix or name)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Complete(cmd, args)
			return o.Run(cmd.Context())
		},
	}
	return cmd
}

// Complete takes the references and picks the output format: json unless
// -o was given.
func (o *inspectPodOptions) Complete(cmd *cobra.Command, args []string) {
	o.Refs = args
	o.Output = inspectOutput(cmd, o.f.Global.Output)
}

// Run resolves every pod, then prints them.
func (o *inspectPodOptions) Run(ctx context.Context) error {
	return inspectEach(ctx, o.f, o.now, o.Refs, o.Output, podStatus, podSummary)
}

// podStatus resolves a pod reference and fetches its status.
func podStatus(ctx context.Context, c *client.Client, ref string, verbose bool) (*runtimeapi.PodSandboxStatus, map[string]string, error) {
	pod, err := c.ResolvePod(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.PodStatus(ctx, pod.GetId(), verbose)
	if err != nil {
		return nil, nil, err
	}
	return resp.GetStatus(), resp.GetInfo(), nil
}

// podSummary is one pod in inspectp -o table.
func podSummary(w io.Writer, now time.Time, st *runtimeapi.PodSandboxStatus) {
	md := st.GetMetadata()
	row(w, "ID:", st.GetId())
	row(w, "Name:", md.GetName())
	row(w, "Namespace:", md.GetNamespace())
	row(w, "UID:", md.GetUid())
	row(w, "Attempt:", md.GetAttempt())
	row(w, "State:", client.PodStateName(st.GetState()))
	row(w, "Created:", timestamp(now, st.GetCreatedAt()))
	if ip := st.GetNetwork().GetIp(); ip != "" {
		row(w, "IP:", ip)
	}
	if h := st.GetRuntimeHandler(); h != "" {
		row(w, "Runtime handler:", h)
	}
	if labels := formatLabels(st.GetLabels()); labels != "" {
		row(w, "Labels:", labels)
	}
}
