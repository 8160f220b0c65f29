package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/query"
)

func newInspectPodCommand(f *factory) *cobra.Command {
	return inspectCommand(&inspectOptions{f: f, now: time.Now, run: query.InspectPod}, &cobra.Command{
		Use:   "inspectp POD...",
		Short: "Show the full status of pod sandboxes",
		Long: `Show what the runtime knows of one or more pod sandboxes, in crictl's shape:
its PodSandboxStatus (network, namespaces, metadata) under "status" and the
runtime's verbose info keys beside it. JSON by default; -o yaml, -o
go-template --template T, or -o table for a summary. Each POD is a full ID, a
unique ID prefix or a unique name; several give a JSON array.

EXIT STATUS
  0  every pod was found and shown
  1  a pod matched nothing or several (the candidates are listed), or the
     runtime could not be reached or failed
  2  bad flags or arguments`,
		Example: `  crisp inspectp web
  crisp inspectp -o go-template --template '{{.status.network.ip}}' web
  crisp inspectp -o table web db`,
		Args: atLeastArgs(1, "at least one POD (ID, ID prefix or name)"),
	})
}

func newInspectImageCommand(f *factory) *cobra.Command {
	return inspectCommand(&inspectOptions{f: f, now: time.Now, run: query.InspectImage}, &cobra.Command{
		Use:   "inspecti IMAGE...",
		Short: "Show the full status of images",
		Long: `Show what the image service knows of one or more images, in crictl's shape:
the Image under "status" and the runtime's verbose info keys beside it. JSON
by default; -o yaml, -o go-template --template T, or -o table for a summary.
Each IMAGE is a name, name:tag, digest or ID; several give a JSON array.

EXIT STATUS
  0  every image was found and shown
  1  an image is not on the runtime, or the runtime could not be reached or
     failed
  2  bad flags or arguments`,
		Example: `  crisp inspecti busybox
  crisp inspecti -o go-template --template '{{.status.size}}' busybox:1.36
  crisp inspecti -o table nginx`,
		Args: atLeastArgs(1, "at least one IMAGE (name, tag, digest or ID)"),
	})
}
