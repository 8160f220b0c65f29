package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cmdutil"
	"github.com/crisp-cri/crisp/internal/helptext"
	"github.com/crisp-cri/crisp/internal/query"
)

func newInspectPodCommand(f *cmdutil.Factory) *cobra.Command {
	return inspectCommand(&inspectOptions{f: f, now: time.Now, run: query.InspectPod}, &cobra.Command{
		Use:     "inspectp POD...",
		Short:   "Show the full status of pod sandboxes",
		Long:    helptext.Long("inspectp"),
		Example: helptext.Example("inspectp"),
		Args:    cmdutil.AtLeastArgs(1, "at least one POD (ID, ID prefix or name)"),
	})
}

func newInspectImageCommand(f *cmdutil.Factory) *cobra.Command {
	return inspectCommand(&inspectOptions{f: f, now: time.Now, run: query.InspectImage}, &cobra.Command{
		Use:     "inspecti IMAGE...",
		Short:   "Show the full status of images",
		Long:    helptext.Long("inspecti"),
		Example: helptext.Example("inspecti"),
		Args:    cmdutil.AtLeastArgs(1, "at least one IMAGE (name, tag, digest or ID)"),
	})
}
