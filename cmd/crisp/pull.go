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
	cmdutil.Verb

	Image, Creds, Auth, Username, PodConfig string
	Annotations                             []string
	Timeout                                 time.Duration
	pull                                    client.PullOptions
}

func newPullCommand(f *cmdutil.Factory) *cobra.Command {
	o := &pullOptions{}
	cmd := &cobra.Command{
		Use:     "pull IMAGE",
		Short:   "Pull an image",
		Long:    helpLong("pull"),
		Example: helpExample("pull"),
		Args:    cmdutil.ExactArgs(1, "one IMAGE"),
		RunE:    runOptions(f, o),
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

// Complete takes IMAGE, and the flags' values from crictl's environment
// variables where they were not given.
func (o *pullOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	o.Image = args[0]
	return f.FlagsFromEnv(cmd, [][2]string{{"creds", "CRICTL_CREDS"}, {"auth", "CRICTL_AUTH"}, {"pull-timeout", "CRICTL_PULL_TIMEOUT"}})
}

// Validate checks the image name, the annotations and the credentials'
// flags; nothing is read yet.
func (o *pullOptions) Validate() (err error) {
	if o.Image == "" {
		return cmdutil.UsageErrorf("pull needs an IMAGE, got an empty name")
	}
	o.pull.Timeout = o.Timeout
	if o.pull.Annotations, err = client.ParseLabels(o.Annotations); err != nil {
		return cmdutil.UsageErrorf("--annotation: %v", err)
	}
	// With no input to read, AuthConfig checks the flags only.
	if _, err := o.credentials().AuthConfig(context.Background(), nil, nil); err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	return nil
}

func (o *pullOptions) credentials() query.Credentials {
	return query.Credentials{Creds: o.Creds, Auth: o.Auth, Username: o.Username}
}

// Run reads the password of --username from stdin and --pod-config, both
// bounded and ended by a signal, before the runtime is dialled, then pulls
// the image. What is wrong with them is the command line's (exit 2).
func (o *pullOptions) Run(ctx context.Context) (err error) {
	if o.pull.Auth, err = o.credentials().AuthConfig(ctx, o.F.Streams.In, o.F.Streams.ErrOut); err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if o.PodConfig != "" {
		if o.pull.PodConfig, err = query.LoadPodConfig(ctx, o.PodConfig); err != nil {
			return cmdutil.UsageErrorf("--pod-config: %v", err)
		}
	}
	return o.F.WithClient(func(c *client.Client) error { return query.Pull(ctx, c, o.Image, o.pull, o.F.Streams.Out) })
}
