package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// jsonVerb is the options of the verbs without flags that print JSON unless
// -o says otherwise, as crictl's do (imagefsinfo, events).
type jsonVerb struct {
	cmdutil.Verb
	p output.Printer
}

// Complete takes the printer.
func (o *jsonVerb) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.p = f.PrinterOr(cmd, output.JSON)
	return o.Verb.Complete(f, cmd, args)
}

// imageFsInfoOptions are `crisp imagefsinfo`'s: no flags of its own.
type imageFsInfoOptions struct{ jsonVerb }

// Run prints the image filesystems' usage.
func (o *imageFsInfoOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error { return query.ImageFsInfo(ctx, c, o.p) })
}

func newImageFsInfoCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "imagefsinfo",
		Short:   "Show the image filesystems' usage",
		Long:    helpLong("imagefsinfo"),
		Example: helpExample("imagefsinfo"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, &imageFsInfoOptions{}),
	}
}

// runtimeConfigOptions are `crisp runtime-config`'s: no flags of its own.
type runtimeConfigOptions struct{ cmdutil.Verb }

// Run prints the runtime's configuration.
func (o *runtimeConfigOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error { return query.RuntimeConfig(ctx, c, o.F.Printer()) })
}

func newRuntimeConfigCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "runtime-config",
		Short:   "Show the runtime's configuration (cgroup driver)",
		Long:    helpLong("runtime-config"),
		Example: helpExample("runtime-config"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, &runtimeConfigOptions{}),
	}
}

// eventsOptions are `crisp events`'s: no flags of its own.
type eventsOptions struct{ jsonVerb }

// Run streams the events until the runtime or the user ends them.
func (o *eventsOptions) Run(ctx context.Context) error {
	err := o.WithRuntime(func(c *client.Client) error { return query.Events(ctx, c, o.p) })
	if errors.Is(err, client.ErrEventsClosed) {
		// As crictl: said, and exit 0 (the runtime ended it cleanly).
		_, _ = fmt.Fprintf(o.ErrOut(), "crisp: %v\n", err) // the error stream is the last resort: a failed write there has nowhere to go
		return nil
	}
	return err
}

func newEventsCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "events",
		Aliases: []string{"event"},
		Short:   "Stream the runtime's container events",
		Long:    helpLong("events"),
		Example: helpExample("events"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, &eventsOptions{}),
	}
}
