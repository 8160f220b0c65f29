package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// pullOptions are the flags of `crisp pull`.
type pullOptions struct {
	f *cmdutil.Factory

	Image, Creds, Auth, Username, PodConfig string
	Annotations                             []string
	Timeout                                 time.Duration
	pull                                    client.PullOptions
}

func newPullCommand(f *cmdutil.Factory) *cobra.Command {
	o := &pullOptions{f: f}
	cmd := &cobra.Command{
		Use:     "pull IMAGE",
		Short:   "Pull an image",
		Long:    helpLong("pull"),
		Example: helpExample("pull"),
		Args:    cmdutil.ExactArgs(1, "one IMAGE"),
		RunE:    runOptions(o.f, o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Creds, "creds", "", "USERNAME[:PASSWORD] for the registry (env CRICTL_CREDS)")
	fl.StringVar(&o.Auth, "auth", "", "base64 'USERNAME[:PASSWORD]' for the registry (env CRICTL_AUTH)")
	fl.StringVarP(&o.Username, "username", "u", "", "USERNAME for the registry; the password is read from stdin")
	fl.StringArrayVarP(&o.Annotations, "annotation", "a", nil, "annotation key=value for the image (repeatable)")
	fl.StringVar(&o.PodConfig, "pod-config", "", "a pod sandbox config (JSON or YAML) the runtime may pull for")
	fl.DurationVar(&o.Timeout, "pull-timeout", 0, "the longest the pull may take (0: no limit; env CRICTL_PULL_TIMEOUT); also --pt")
	cmdutil.Alias(fl, "pt", "pull-timeout")
	return cmd
}

// Complete builds the pull request's options.
func (o *pullOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) (err error) {
	o.Image = args[0]
	if err := f.FlagsFromEnv(cmd, [][2]string{{"creds", "CRICTL_CREDS"}, {"auth", "CRICTL_AUTH"}, {"pull-timeout", "CRICTL_PULL_TIMEOUT"}}); err != nil {
		return err
	}
	o.pull.Timeout = o.Timeout
	if o.pull.Annotations, err = client.ParseLabels(o.Annotations); err != nil {
		return cmdutil.UsageErrorf("--annotation: %v", err)
	}
	if o.Image == "" {
		return cmdutil.UsageErrorf("pull needs an IMAGE, got an empty name")
	}
	// The credentials and --pod-config are read before the runtime is
	// dialed: the password of --username from stdin, both bounded and ended
	// by a signal.
	creds := query.Credentials{Creds: o.Creds, Auth: o.Auth, Username: o.Username}
	if o.pull.Auth, err = creds.AuthConfig(cmd.Context(), o.f.Streams.In, o.f.Streams.ErrOut); err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if o.PodConfig != "" {
		if o.pull.PodConfig, err = query.LoadPodConfig(cmd.Context(), o.PodConfig); err != nil {
			return cmdutil.UsageErrorf("--pod-config: %v", err)
		}
	}
	return nil
}

// Validate has nothing left to check: Complete read and checked the input.
func (o *pullOptions) Validate() error { return nil }

// Run pulls the image.
func (o *pullOptions) Run(ctx context.Context) error {
	return o.f.WithClient(func(c *client.Client) error { return query.Pull(ctx, c, o.Image, o.pull, o.f.Streams.Out) })
}
