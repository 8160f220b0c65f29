package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// imagesOptions are the flags of `crisp images`.
type imagesOptions struct {
	cmdutil.Verb

	Ref   string
	Quiet bool
	Table output.ImageTableOptions
}

func newImagesCommand(f *cmdutil.Factory) *cobra.Command {
	return imagesCommand(f, &imagesOptions{})
}

// imagesCommand binds the command's flags to o; tests parse into their own o.
func imagesCommand(f *cmdutil.Factory, o *imagesOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "images [IMAGE]",
		Aliases: []string{"image", "img"},
		Short:   "List images",
		Long:    helpLong("images"),
		Example: helpExample("images"),
		Args:    cmdutil.MaxArgs(1, "one IMAGE"),
		RunE:    runOptions(f, o),
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "print image IDs only")
	fl.BoolVar(&o.Table.NoTrunc, "no-trunc", false, "do not truncate image IDs")
	fl.BoolVar(&o.Table.Digests, "digests", false, "show a DIGEST column")
	fl.BoolVar(&o.Table.Pinned, "pinned", false, "show a PINNED column")
	fl.StringArrayVarP(&o.Table.Filters, "filter", "f", nil, "crictl's conditions: dangling=true|false, reference=REGEX, before=IMAGE, since=IMAGE (repeatable)")
	fl.BoolVarP(&o.Table.Verbose, "verbose", "v", false, "a block of key: value lines an image instead of the table (crictl's -v)")
	return cmd
}

// Complete takes the optional image argument.
func (o *imagesOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	if len(args) == 1 {
		o.Ref = args[0]
	}
	return nil
}

// Validate rejects bad input before the runtime is dialled.
func (o *imagesOptions) Validate() error {
	if err := cmdutil.ValidateQuiet(o.Quiet, o.F.Global.Output); err != nil {
		return err
	}
	return checkImageFilters(o.Table.Filters)
}

// Run lists the images and prints them.
func (o *imagesOptions) Run(ctx context.Context) error {
	return o.F.WithClient(func(c *client.Client) error {
		return query.Images(ctx, c, o.Ref, o.Quiet, o.Table, o.F.Printer())
	})
}
