package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// crispVersion is set at build time with -ldflags "-X main.crispVersion=...".
var crispVersion = "dev"

type versionOptions struct {
	f *factory
}

type versionReport struct {
	ClientVersion     string `json:"clientVersion"`
	Endpoint          string `json:"endpoint"`
	Version           string `json:"version"`
	RuntimeName       string `json:"runtimeName"`
	RuntimeVersion    string `json:"runtimeVersion"`
	RuntimeAPIVersion string `json:"runtimeApiVersion"`
}

func newVersionCommand(f *factory) *cobra.Command {
	o := &versionOptions{f: f}
	return &cobra.Command{
		Use:   "version",
		Short: "Show the runtime's name, version and CRI API version",
		Example: `  crisp version
  crisp -r unix:///run/containerd/containerd.sock version -o json`,
		Long: `Show crisp's version and the runtime's name, version and CRI API version.

EXIT STATUS
  0  the runtime answered
  1  the runtime could not be reached or failed
  2  bad flags or arguments`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
}

func (o *versionOptions) Run(ctx context.Context) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	var resp *runtimeapi.VersionResponse
	err = c.Call(ctx, "version", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
		return err
	})
	if err != nil {
		return err
	}
	report := versionReport{
		ClientVersion:     crispVersion,
		Endpoint:          c.Endpoint,
		Version:           resp.Version,
		RuntimeName:       resp.RuntimeName,
		RuntimeVersion:    resp.RuntimeVersion,
		RuntimeAPIVersion: resp.RuntimeApiVersion,
	}
	return printData(o.f.Streams.Out, o.f.Global.Output, report, func(w io.Writer) error {
		row(w, "Client:", "crisp "+report.ClientVersion)
		row(w, "Endpoint:", report.Endpoint)
		row(w, "Version:", report.Version)
		row(w, "RuntimeName:", report.RuntimeName)
		row(w, "RuntimeVersion:", report.RuntimeVersion)
		row(w, "RuntimeApiVersion:", report.RuntimeAPIVersion)
		return nil
	})
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// completeValidateRun is the RunE of a command that takes no arguments and
// whose options complete and validate themselves before they run.
func completeValidateRun(o interface {
	Complete() error
	Validate() error
	Run(context.Context) error
}) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if err := o.Complete(); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}

// exactArgs requires n positional arguments, named in the message.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s needs %s, got %d argument(s)", cmd.CommandPath(), names, len(args))
		}
		return nil
	}
}
