package query

import (
	"context"
	"errors"
	"fmt"
	"io"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/cri/client"
)

// Pull pulls ref and prints "Image is up to date for REF" as crictl does.
func Pull(ctx context.Context, c *client.Client, ref string, o client.PullOptions, out io.Writer) error {
	got, err := c.Pull(ctx, ref, o)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Image is up to date for %s\n", got)
	return err
}

// RMIOptions are crisp rmi's flags.
type RMIOptions struct {
	// All removes every image; Prune every image no container uses.
	All, Prune bool
}

// RMI removes images and prints "Deleted: TAG" for each, as crictl rmi.
func RMI(ctx context.Context, c *client.Client, refs []string, o RMIOptions, out io.Writer) error {
	var images []*runtimeapi.Image
	var err error
	switch {
	case o.All:
		images, err = c.ListImages(ctx, "")
	case o.Prune:
		images, err = c.UnusedImages(ctx)
	}
	if err != nil {
		return err
	}
	for _, img := range images {
		refs = append(refs, img.GetId())
	}
	var werr error
	err = c.RemoveImages(ctx, refs, func(deleted string) {
		if _, err := fmt.Fprintf(out, "Deleted: %s\n", deleted); err != nil {
			werr = err
		}
	})
	return errors.Join(err, werr)
}

// ImageFsInfo prints the image filesystems (crisp imagefsinfo), as crictl:
// {"status": ImageFsInfoResponse}; the table is crisp's.
func ImageFsInfo(ctx context.Context, c *client.Client, p output.Printer) error {
	resp, err := c.ImageFsInfo(ctx)
	if err != nil {
		return err
	}
	data, err := output.ProtoJSON(resp)
	if err != nil {
		return err
	}
	return p.Print(map[string]any{"status": data}, func(w io.Writer) error {
		output.FsTable(w, resp)
		return nil
	})
}

// RuntimeConfig prints the runtime's configuration as crictl does
// ("cgroup driver:   SYSTEMD"), or its JSON.
func RuntimeConfig(ctx context.Context, c *client.Client, p output.Printer) error {
	resp, err := c.RuntimeConfig(ctx)
	if err != nil {
		return err
	}
	data, err := output.ProtoJSON(resp)
	if err != nil {
		return err
	}
	return p.Print(data, func(w io.Writer) error {
		output.Row(w, "cgroup driver:", resp.GetLinux().GetCgroupDriver().String())
		return nil
	})
}

// Events prints each container event as it comes (crisp events), as JSON by
// default like crictl, until ctx ends.
func Events(ctx context.Context, c *client.Client, p output.Printer) error {
	return c.Events(ctx, func(ev *runtimeapi.ContainerEventResponse) error {
		data, err := output.ProtoJSON(ev)
		if err != nil {
			return err
		}
		return p.Print(data, func(w io.Writer) error {
			output.EventRow(w, ev)
			return nil
		})
	})
}
