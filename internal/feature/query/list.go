package query

import (
	"context"
	"fmt"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
)

// ListOptions are what ps, pods and images share.
type ListOptions struct {
	// Quiet prints IDs only.
	Quiet   bool
	NoTrunc bool
	Now     time.Time
	// Verbose is crictl's -v: a block of key: value lines an object
	// instead of the table.
	Verbose bool
}

// printIDs is -q: one ID a line, escaped like any string a runtime chose
// (a real ID is hex and comes out as it is).
func printIDs[T interface{ GetId() string }](w io.Writer, items []T) error {
	for _, it := range items {
		if _, err := fmt.Fprintln(w, termsafe.Printable(it.GetId())); err != nil {
			return err
		}
	}
	return nil
}

// PS lists containers (crisp ps).
func PS(ctx context.Context, c *client.Client, f client.ContainerFilter, o ListOptions, p output.Printer) error {
	ctrs, err := c.ListContainers(ctx, f)
	if err != nil {
		return err
	}
	if o.Quiet {
		return printIDs(p.Out, ctrs)
	}
	if p.Format != output.Table {
		return p.PrintProto(&runtimeapi.ListContainersResponse{Containers: ctrs}, nil)
	}
	// The POD and NAMESPACE columns come from each container's pod.
	pods := map[string]*runtimeapi.PodSandbox{}
	if len(ctrs) > 0 {
		all, err := c.ListPods(ctx, client.PodFilter{})
		if err != nil {
			return err
		}
		for _, sb := range all {
			pods[sb.GetId()] = sb
		}
	}
	return p.Print(nil, func(w io.Writer) error {
		if o.Verbose {
			output.ContainersVerbose(w, o.Now, ctrs, pods)
			return nil
		}
		output.ContainerTable(w, output.TableOptions{Now: o.Now, NoTrunc: o.NoTrunc}, ctrs, pods)
		return nil
	})
}

// Pods lists pod sandboxes (crisp pods).
func Pods(ctx context.Context, c *client.Client, f client.PodFilter, o ListOptions, p output.Printer) error {
	pods, err := c.ListPods(ctx, f)
	if err != nil {
		return err
	}
	if o.Quiet {
		return printIDs(p.Out, pods)
	}
	return p.PrintProto(&runtimeapi.ListPodSandboxResponse{Items: pods}, func(w io.Writer) error {
		if o.Verbose {
			output.PodsVerbose(w, pods)
			return nil
		}
		output.PodTable(w, output.TableOptions{Now: o.Now, NoTrunc: o.NoTrunc}, pods)
		return nil
	})
}

// Images lists images (crisp images [REF]).
func Images(ctx context.Context, c *client.Client, ref string, quiet bool, t output.ImageTableOptions, p output.Printer) error {
	images, err := c.ListImages(ctx, ref)
	if err != nil {
		return err
	}
	if images, err = client.FilterImages(images, t.Filters); err != nil {
		return fmt.Errorf("images -f: %w", err)
	}
	client.SortImages(images)
	if quiet {
		return printIDs(p.Out, images)
	}
	return p.PrintProto(&runtimeapi.ListImagesResponse{Images: images}, func(w io.Writer) error {
		if t.Verbose {
			output.ImagesVerbose(w, images)
			return nil
		}
		output.ImageTable(w, t, images)
		return nil
	})
}
