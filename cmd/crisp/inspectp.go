package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

func newInspectPodCommand(f *cmdutil.Factory) *cobra.Command {
	return inspectCommand(f, &inspectOptions{run: query.InspectPod, sel: &podSelectors{}}, &cobra.Command{
		Use:     "inspectp POD...",
		Short:   "Show the full status of pod sandboxes",
		Long:    helpLong("inspectp"),
		Example: helpExample("inspectp"),
	})
}

func newInspectImageCommand(f *cmdutil.Factory) *cobra.Command {
	return inspectCommand(f, &inspectOptions{run: query.InspectImage, sel: &imageSelectors{}}, &cobra.Command{
		Use:     "inspecti IMAGE...",
		Short:   "Show the full status of images",
		Long:    helpLong("inspecti"),
		Example: helpExample("inspecti"),
	})
}
